// RespParser: incremental, zero-copy parser for client requests (RESP multibulk and inline).
// A request's arguments are string_views into the caller's read buffer (inline requests with
// quotes are unescaped into parser-owned storage). Every limit is checked before allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::protocol {

struct ParseLimits {
  size_t max_bulk_len = 512ull * 1024 * 1024;  // proto-max-bulk-len
  size_t max_inline_len = 64 * 1024;           // PROTO_INLINE_MAX_SIZE
  int64_t max_multibulk_len = 2147483647;      // INT_MAX, as Redis
};

enum class ParseStatus { kComplete, kIncomplete, kError };

struct ParseResult {
  ParseStatus status;
  // Bytes of the input that make up the parsed request (kComplete) — 0 otherwise.
  size_t consumed;
  // For kError: Redis's full error text, e.g. "ERR Protocol error: invalid bulk length".
  std::string_view error;
};

class RespParser {
 public:
  explicit RespParser(ParseLimits limits = {}) : limits_(limits) {}

  // Parses one request from the start of `in`. On kComplete, `argv` holds the arguments (views
  // valid until `in`'s bytes change or the next parse call) and `consumed` says how many bytes to
  // drop. An empty request (blank inline line, "*0\r\n", "*-1\r\n") completes with empty argv.
  // On kIncomplete nothing is consumed; the parser remembers its progress as offsets, so calling
  // again with the same bytes plus more continues where it stopped (O(n) overall, even if the
  // buffer moved). On kError the connection must reply with `error` and close.
  ParseResult parse(std::span<const char> in, std::vector<std::string_view>& argv);

  // Bytes the current partial request still needs at least (a hint for sizing the read buffer
  // when a large bulk is pending); 0 when unknown.
  size_t pending_bulk_hint() const { return bulk_hint_; }

  // Forget any partial progress.
  void reset();

  void set_limits(const ParseLimits& limits) { limits_ = limits; }

 private:
  ParseResult parse_multibulk(std::span<const char> in, std::vector<std::string_view>& argv);
  ParseResult parse_inline(std::span<const char> in, std::vector<std::string_view>& argv);

  ParseLimits limits_;
  // Progress through a partial multibulk request.
  int64_t multibulk_len_ = 0;            // 0 = not inside a multibulk request
  size_t pos_ = 0;                        // offset of the next unparsed byte
  std::vector<std::pair<size_t, size_t>> arg_offsets_;  // (offset, length) of parsed arguments
  size_t bulk_hint_ = 0;
  std::vector<std::string> inline_args_;  // unescaped inline arguments
};

}  // namespace ringkv::protocol
