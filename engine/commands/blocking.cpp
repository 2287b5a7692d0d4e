// Timeout parsing and the wait request of the blocking commands (see blocking.h).
#include "engine/commands/blocking.h"

#include "engine/commands/string_ops.h"

namespace ringkv::engine {

bool block_timeout_or_reply(CommandContext& ctx, std::string_view arg, int64_t& timeout_ms) {
  long double seconds = 0;
  if (!parse_long_double(arg, seconds)) {
    ctx.reply.error(kTimeoutNotFloat);
    return false;
  }
  const long double ms = seconds * 1000.0L;
  constexpr long double kLimit = 9223372036854775808.0L;  // 2^63
  const int64_t t = (ms > -kLimit && ms < kLimit) ? static_cast<int64_t>(ms) : INT64_MIN;
  if (t < 0) {
    ctx.reply.error(kTimeoutNegative);
    return false;
  }
  timeout_ms = t;
  return true;
}

void block_or_timeout(CommandContext& ctx, std::span<const std::string_view> keys,
                      int64_t timeout_ms, DeniedReply denied) {
  if (ctx.block == nullptr) {
    if (!ctx.timed_out && denied == DeniedReply::kNullBulk) {
      ctx.reply.null();
    } else {
      ctx.reply.null_array();
    }
    return;
  }
  ctx.block->active = true;
  ctx.block->keys.assign(keys.begin(), keys.end());
  ctx.block->timeout_ms = timeout_ms;
}

}  // namespace ringkv::engine
