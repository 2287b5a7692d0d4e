// ReplyReader: frames and decodes the replies a peer sends back on a relay link.
//
// ReplyScanner finds where one complete RESP2/RESP3 value ends in a byte stream, resumably, so a
// large reply arriving in many reads is scanned once. decode_reply turns a complete value into a
// small tree, for the replies the cluster must merge (MGET fragments, DEL counts, SCAN pages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ringkv::protocol {

class ReplyScanner {
 public:
  enum class Status { kComplete, kIncomplete, kError };
  struct Result {
    Status status;
    size_t length;  // bytes of the complete value (kComplete)
  };

  // Scans `in` (which starts at the first byte of a reply). Between kIncomplete results the
  // caller must pass the same bytes again, extended; progress is kept as offsets.
  Result scan(std::span<const char> in);
  void reset();

 private:
  size_t pos_ = 0;
  // Elements still expected by each open aggregate, innermost last.
  std::vector<int64_t> open_;
};

// A decoded reply. Strings point into the bytes that were decoded.
struct ReplyValue {
  char type = 0;  // the RESP type byte: '+', '-', ':', '$', '*', '%', '~', '>', '_', ',', '#', '='
  bool null = false;                 // "$-1", "*-1" or "_"
  int64_t integer = 0;               // ':' (and '#': 1/0)
  std::string_view text;             // '+', '-', '$', ',', '=' payloads
  std::vector<ReplyValue> elements;  // aggregates (a map's keys and values alternate)
};

// Decodes one complete value (as framed by ReplyScanner). Returns false on malformed input.
bool decode_reply(std::string_view bytes, ReplyValue& out);

}  // namespace ringkv::protocol
