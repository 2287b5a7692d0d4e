// libFuzzer target for RespParser: feeds arbitrary bytes in random chunks (moving the buffer
// now and then, as a connection's read buffer does) and checks the result equals parsing the
// same bytes in one go: same requests, same consumed counts, same final error or incompleteness;
// and that scan_plain_request, the parser's fast path, agrees with the parser.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/errors.h"
#include "protocol/resp_parser.h"

namespace {

using ringkv::protocol::ParseLimits;
using ringkv::protocol::ParseResult;
using ringkv::protocol::ParseStatus;
using ringkv::protocol::RespParser;

struct Outcome {
  std::vector<std::vector<std::string>> requests;
  std::vector<size_t> ends;  // stream offset just past each request
  ParseStatus last = ParseStatus::kIncomplete;
  std::string error;
};

void check(bool ok) {
  if (!ok) std::abort();
}

bool is_line_too_big(std::string_view error) {
  namespace err = ringkv::protocol::err;
  return error == err::kProtoBigMultibulkCount || error == err::kProtoBigBulkCount ||
         error == err::kProtoBigInline;
}

std::vector<std::string> copy_args(const std::vector<std::string_view>& argv) {
  return {argv.begin(), argv.end()};
}

Outcome parse_in_one_go(std::string_view stream, const ParseLimits& limits) {
  Outcome outcome;
  RespParser parser(limits);
  std::vector<std::string_view> argv;
  size_t offset = 0;
  while (true) {
    // The plain-request scan (the parser's fast path, and the connection's read of a pipelined
    // batch) reads a request as the incremental parser alone does (an unauthenticated client's,
    // which never takes the fast path), where the unauthenticated limits allow the request; and
    // when it does not answer, it leaves the arguments as they were.
    std::vector<std::string_view> scanned;
    const size_t scanned_len =
        ringkv::protocol::scan_plain_request(stream.substr(offset), limits, scanned);
    const bool small = std::all_of(scanned.begin(), scanned.end(), [](std::string_view a) {
      return a.size() <= static_cast<size_t>(ringkv::protocol::kUnauthMaxBulkLen);
    });
    if (scanned_len == 0) {
      check(scanned.empty());
    } else if (small &&
               scanned.size() <= static_cast<size_t>(ringkv::protocol::kUnauthMaxMultibulkLen)) {
      RespParser incremental(limits);
      incremental.set_unauthenticated(true);
      std::vector<std::string_view> incremental_argv;
      const ParseResult g = incremental.parse(stream.substr(offset), incremental_argv);
      check(g.status == ParseStatus::kComplete && g.consumed == scanned_len &&
            incremental_argv == scanned);
    }
    ParseResult r = parser.parse(stream.substr(offset), argv);
    if (r.status != ParseStatus::kComplete) {
      check(r.consumed == 0);
      outcome.last = r.status;
      outcome.error = r.error;
      return outcome;
    }
    check(r.consumed > 0 && r.consumed <= stream.size() - offset);
    offset += r.consumed;
    outcome.requests.push_back(copy_args(argv));
    outcome.ends.push_back(offset);
  }
}

// Small limits half of the time, so limit errors are reachable with short inputs.
ParseLimits pick_limits(std::mt19937_64& rng) {
  ParseLimits limits;
  if (rng() % 2 == 0) {
    limits.max_bulk_len = rng() % 100;
    limits.max_inline_len = 1 + rng() % 300;
    limits.max_multibulk_len = static_cast<int64_t>(rng() % 20);
  }
  return limits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view stream(reinterpret_cast<const char*>(data), size);
  // Chunking decisions derive from the input itself, so every run of an input is reproducible.
  std::mt19937_64 rng(std::hash<std::string_view>{}(stream));
  const ParseLimits limits = pick_limits(rng);
  const Outcome expected = parse_in_one_go(stream, limits);

  RespParser parser(limits);
  std::vector<std::string_view> argv;
  std::string buffer;  // unconsumed bytes, starting at stream offset `base`
  size_t base = 0;
  size_t fed = 0;
  size_t request = 0;
  const size_t max_chunk = rng() % 2 == 0 ? 8 : 4096;
  while (fed < size) {
    const size_t chunk = 1 + rng() % max_chunk;
    const size_t take = chunk < size - fed ? chunk : size - fed;
    buffer.append(stream.substr(fed, take));
    fed += take;
    if (rng() % 8 == 0) buffer = std::string(buffer.begin(), buffer.end());

    while (true) {
      ParseResult r = parser.parse(buffer, argv);
      if (r.status == ParseStatus::kError) {
        check(r.consumed == 0);
        const bool same = expected.last == ParseStatus::kError &&
                          request == expected.requests.size() && r.error == expected.error;
        // Like Redis on each read, an unterminated line over the limit fails as soon as it is
        // seen, even though the whole input may hold its end.
        check(same || is_line_too_big(r.error));
        return 0;
      }
      if (r.status == ParseStatus::kIncomplete) {
        check(r.consumed == 0);
        // The hint never overstates what the request still needs.
        if (parser.pending_bulk_hint() > 0 && request < expected.ends.size()) {
          check(expected.ends[request] >= fed + parser.pending_bulk_hint());
        }
        break;
      }
      check(request < expected.requests.size());
      check(r.consumed <= buffer.size() && base + r.consumed == expected.ends[request]);
      check(copy_args(argv) == expected.requests[request]);
      ++request;
      base += r.consumed;
      buffer.erase(0, r.consumed);
    }
  }
  check(request == expected.requests.size());
  check(expected.last == ParseStatus::kIncomplete);
  return 0;
}
