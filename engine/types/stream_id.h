// Stream entry IDs (<ms>-<seq>, two unsigned 64-bit numbers) and their text forms, parsed exactly
// as Redis 7.0.15's streamGenericParseIDOrReply: '-' and '+' for the smallest and largest ID,
// "<ms>" alone taking a given sequence, "<ms>-*" (XADD) leaving the sequence to the stream.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ringkv::engine {

struct StreamID {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamID&) const = default;
};

inline constexpr StreamID kMinStreamID{0, 0};
inline constexpr StreamID kMaxStreamID{UINT64_MAX, UINT64_MAX};

inline constexpr std::string_view kInvalidStreamID =
    "ERR Invalid stream ID specified as stream command argument";

// "<ms>-<seq>".
std::string format_stream_id(StreamID id);

// The next / previous ID; false (and the ID wrapped to the other end) past the last / first.
bool increment_stream_id(StreamID& id);
bool decrement_stream_id(StreamID& id);

// How an ID argument may be written.
struct StreamIDSyntax {
  uint64_t missing_seq = 0;     // the sequence of "<ms>" alone
  bool strict = false;          // '-' and '+' refused
  bool allow_auto_seq = false;  // "<ms>-*" accepted (XADD)
};

// A parsed ID; `seq_given` is false for "<ms>-*".
struct ParsedStreamID {
  StreamID id;
  bool seq_given = true;
};

// Parses an ID argument; nullopt when it is invalid (reply kInvalidStreamID).
std::optional<ParsedStreamID> parse_stream_id(std::string_view text, StreamIDSyntax syntax);

// Redis's string2ull: string2ll when that succeeds (negative refused), else strtoull (which takes
// leading spaces and a sign), the whole NUL-terminated text consumed, no overflow.
bool parse_uint64_like_redis(std::string_view text, uint64_t& out);

}  // namespace ringkv::engine
