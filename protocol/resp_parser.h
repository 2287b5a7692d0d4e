// RespParser: incremental, zero-copy parser for client requests (RESP multibulk and inline).
// A request's arguments are string_views into the caller's read buffer (inline requests with
// quotes are unescaped into parser-owned storage). Every limit is checked before allocating.
// It accepts and rejects exactly what Redis 7.0's processMultibulkBuffer/processInlineBuffer do,
// with the same error texts, including their quirks (see resp_parser.cpp).
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

// Redis's tighter limits on requests from a client that has not authenticated (requirepass),
// so that a stranger cannot make the server buffer large requests.
inline constexpr int64_t kUnauthMaxMultibulkLen = 10;
inline constexpr int64_t kUnauthMaxBulkLen = 16384;

enum class ParseStatus { kComplete, kIncomplete, kError };

struct ParseResult {
  ParseStatus status;
  // Bytes of the input that make up the parsed request (kComplete) — 0 otherwise.
  size_t consumed;
  // For kError: Redis's full error text, e.g. "ERR Protocol error: invalid bulk length".
  // Valid until the next parse call.
  std::string_view error;
};

// The multibulk request at the start of `in` when it is there whole and plain, as nearly every
// request is: "*N\r" and each "$len\r" with 1 to 9 digits and no leading zero, each followed by
// the byte Redis skips, N from 1 to limits.max_multibulk_len, each len at most
// limits.max_bulk_len, and every argument's bytes (and the two after them) in. Appends its
// arguments to `argv` and returns its length; else returns 0 with `argv` as it was, and the
// parser rules on the request (incomplete, empty, inline, a long or malformed number, a limit
// exceeded) as Redis does. Whatever it reads, RespParser reads the same way (without the
// unauthenticated limits, which it does not apply).
size_t scan_plain_request(std::span<const char> in, const ParseLimits& limits,
                          std::vector<std::string_view>& argv);

class RespParser {
 public:
  explicit RespParser(ParseLimits limits = {}) : limits_(limits) {}

  // Parses one request from the start of `in`. On kComplete, `argv` holds the arguments (views
  // valid until `in`'s bytes change or the next parse call) and `consumed` says how many bytes to
  // drop. An empty request (blank inline line, "*0\r\n", "*-1\r\n") completes with empty argv.
  // On kIncomplete nothing is consumed; the parser remembers its progress as offsets, so calling
  // again with the same bytes plus more continues where it stopped (O(n) overall, even if the
  // buffer moved). On kError the connection must reply with `error` and close.
  // `argv` is cleared first and only ever filled on kComplete.
  ParseResult parse(std::span<const char> in, std::vector<std::string_view>& argv);

  // Bytes the current partial request still needs beyond the last `in`, at least (a hint for
  // sizing the read buffer while a large bulk is pending); 0 when unknown.
  size_t pending_bulk_hint() const { return bulk_hint_; }

  // Forget any partial progress.
  void reset();

  void set_limits(const ParseLimits& limits) { limits_ = limits; }
  const ParseLimits& limits() const { return limits_; }
  // Applies the unauthenticated limits (kUnauthMax*) to the requests that follow, or lifts them.
  void set_unauthenticated(bool yes) { unauthenticated_ = yes; }
  bool unauthenticated() const { return unauthenticated_; }

 private:
  // One argument of the request being parsed: a range of the input, or (owned) the index of an
  // unescaped inline argument in inline_args_. Offsets, not pointers, survive a moved buffer.
  struct ArgRef {
    size_t offset;
    size_t length;
    bool owned;
  };

  // Outcome of looking for the end of the current line.
  enum class LineScan { kFound, kNotYet, kTooBig };

  ParseResult parse_multibulk(std::span<const char> in, std::vector<std::string_view>& argv);
  ParseResult parse_inline(std::span<const char> in, std::vector<std::string_view>& argv);
  ParseResult split_inline(std::span<const char> line, std::vector<std::string_view>& argv,
                           size_t consumed);
  LineScan find_line_end(std::span<const char> in, size_t line_start, char delim, size_t& end);
  LineScan not_found(std::span<const char> in, size_t line_start) const;
  bool has_nul(std::span<const char> in, size_t from, size_t to);
  // The "*N" or "$N" line at `from`: true with `cr` at its '\r' once that and the byte after it
  // are in; else false with `wait` what to return (incomplete, or `too_big` once Redis would give
  // up on the line).
  bool header_line(std::span<const char> in, size_t from, std::string_view too_big, size_t& cr,
                   ParseResult& wait);
  ParseResult complete(std::span<const char> in, std::vector<std::string_view>& argv,
                       size_t consumed);
  ParseResult fail(std::string_view error);

  ParseLimits limits_;
  bool unauthenticated_ = false;
  // Progress through a partial request; all offsets are relative to the start of the request.
  bool in_request_ = false;    // a request has started (its type is known)
  bool multibulk_ = false;     // its type: multibulk or inline
  bool header_done_ = false;   // the "*N" line has been parsed
  int64_t multibulk_len_ = 0;  // arguments still to read
  int64_t bulk_len_ = -1;      // length of the bulk being read; -1 before its "$len" line
  size_t pos_ = 0;             // offset of the next unparsed byte
  size_t scan_pos_ = 0;        // the current line has no delimiter before this offset
  bool line_blocked_ = false;  // a NUL precedes the current line's delimiter
  std::vector<ArgRef> args_;
  size_t bulk_hint_ = 0;
  std::vector<std::string> inline_args_;  // unescaped inline arguments, reused across requests
  std::string error_;                     // storage for a built error text
};

}  // namespace ringkv::protocol
