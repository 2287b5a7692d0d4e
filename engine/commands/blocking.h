// What the blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX) share:
// the timeout argument and the request to wait when there is nothing to serve.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "engine/command.h"

namespace ringkv::engine {

inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";

// Parses a blocking timeout in seconds as Redis 7.0's getTimeoutFromObjectOrReply: a long double
// times 1000 truncated to milliseconds, where values past the int64 range convert to INT64_MIN
// (what x86 gives), so they count as negative. 0 waits forever. On a bad value replies
// kTimeoutNotFloat or kTimeoutNegative and returns false.
bool block_timeout_or_reply(CommandContext& ctx, std::string_view arg, int64_t& timeout_ms);

// What a blocking command answers when it may not wait (inside MULTI): Redis 7.0 gives BLMOVE
// and BRPOPLPUSH the null bulk of their non-blocking forms and the others a null array. A wait
// that timed out always ends with a null array.
enum class DeniedReply { kNullArray, kNullBulk };

// Nothing to serve: asks to wait for `keys` until `timeout_ms` (0 = forever), or answers as timed
// out or denied when the client cannot block (inside MULTI, unit tests).
void block_or_timeout(CommandContext& ctx, std::span<const std::string_view> keys,
                      int64_t timeout_ms, DeniedReply denied = DeniedReply::kNullArray);

}  // namespace ringkv::engine
