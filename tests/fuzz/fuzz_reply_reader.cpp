// libFuzzer target for the peer reply reader (protocol/reply_reader.h): scans arbitrary bytes as
// a stream of replies, once whole and once fed in pieces at split points derived from the input
// (the scanner resumes over the same bytes, extended), and checks both framings agree: the same
// value boundaries, the same final error or incompleteness. Decoding a framed value must not
// crash, and a decoded tree must hold only strings inside the value's own bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_reader.h"

namespace {

using ringkv::protocol::decode_reply;
using ringkv::protocol::ReplyScanner;
using ringkv::protocol::ReplyValue;
using Status = ReplyScanner::Status;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Framing {
  std::vector<size_t> ends;  // stream offset just past each complete value
  Status last = Status::kIncomplete;
};

// Strings of a decoded value must point into the bytes it was decoded from.
void check_within(const ReplyValue& v, std::string_view bytes) {
  if (!v.text.empty()) {
    check(v.text.data() >= bytes.data() &&
          v.text.data() + v.text.size() <= bytes.data() + bytes.size());
  }
  for (const ReplyValue& e : v.elements) check_within(e, bytes);
}

Framing frame_whole(std::string_view stream) {
  Framing f;
  size_t offset = 0;
  ReplyScanner scanner;
  while (offset < stream.size()) {
    const auto r =
        scanner.scan(std::span<const char>(stream.data() + offset, stream.size() - offset));
    if (r.status != Status::kComplete) {
      f.last = r.status;
      return f;
    }
    check(r.length > 0 && r.length <= stream.size() - offset);
    const std::string_view value = stream.substr(offset, r.length);
    // The scanner only frames (it does not validate simple lines such as an integer's digits),
    // so decoding may refuse a framed value; what it decodes must lie within the value.
    ReplyValue decoded;
    if (decode_reply(value, decoded)) check_within(decoded, value);
    offset += r.length;
    f.ends.push_back(offset);
    scanner.reset();
  }
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view stream(reinterpret_cast<const char*>(data), size);
  const Framing expected = frame_whole(stream);
  // Decoding bytes nobody framed must fail cleanly, never crash or allocate what is not there.
  ReplyValue unframed;
  if (decode_reply(stream, unframed)) check_within(unframed, stream);

  // The same stream arriving in pieces, as a peer link's reads deliver it.
  std::mt19937_64 rng(std::hash<std::string_view>{}(stream));
  const size_t max_chunk = rng() % 2 == 0 ? 3 : 512;
  ReplyScanner scanner;
  size_t start = 0;  // first byte of the value being scanned
  size_t fed = 0;
  size_t value = 0;
  while (fed < size) {
    fed += std::min<size_t>(1 + rng() % max_chunk, size - fed);
    while (start < fed) {
      const auto r = scanner.scan(std::span<const char>(stream.data() + start, fed - start));
      if (r.status == Status::kError) {
        check(expected.last == Status::kError && value == expected.ends.size());
        return 0;
      }
      if (r.status == Status::kIncomplete) break;
      check(value < expected.ends.size() && start + r.length == expected.ends[value]);
      start += r.length;
      ++value;
      scanner.reset();
    }
  }
  check(value == expected.ends.size());
  check(expected.last == Status::kIncomplete);
  return 0;
}
