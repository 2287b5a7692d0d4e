// Error texts, exactly as Redis 7.0 writes them (without the leading '-' and trailing CRLF).
// Every reply error that more than one place can produce lives here.
#pragma once

#include <string_view>

namespace ringkv::protocol::err {

inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kInvalidExpireTime = "ERR invalid expire time in '%s' command";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kOutOfRangeOffset = "ERR offset is out of range";
inline constexpr std::string_view kIncrFloatNaN = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kDecrementOverflow = "ERR decrement would overflow";
// '%s' is the command's full name (lowercase), as for kInvalidExpireTime.
inline constexpr std::string_view kWrongArity = "ERR wrong number of arguments for '%s' command";

// Protocol errors (the connection is closed after replying).
inline constexpr std::string_view kProtoInvalidMultibulk =
    "ERR Protocol error: invalid multibulk length";
inline constexpr std::string_view kProtoInvalidBulk = "ERR Protocol error: invalid bulk length";
inline constexpr std::string_view kProtoBigMultibulkCount =
    "ERR Protocol error: too big mbulk count string";
inline constexpr std::string_view kProtoBigBulkCount =
    "ERR Protocol error: too big bulk count string";
inline constexpr std::string_view kProtoBigInline = "ERR Protocol error: too big inline request";
inline constexpr std::string_view kProtoUnbalancedQuotes =
    "ERR Protocol error: unbalanced quotes in request";
// Followed by the offending byte and a closing quote: "ERR Protocol error: expected '$', got 'X'".
inline constexpr std::string_view kProtoExpectedDollar = "ERR Protocol error: expected '$', got '";

}  // namespace ringkv::protocol::err
