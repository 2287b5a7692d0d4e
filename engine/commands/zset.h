// Sorted sets (single-key commands): the family's command-table rows, and the handlers that code
// outside the family (the server, the tests) calls directly.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> zset_commands();

void cmd_zadd(CommandContext& ctx);
void cmd_zincrby(CommandContext& ctx);
void cmd_zscore(CommandContext& ctx);
void cmd_zmscore(CommandContext& ctx);
void cmd_zcard(CommandContext& ctx);
void cmd_zcount(CommandContext& ctx);
void cmd_zlexcount(CommandContext& ctx);
void cmd_zrange(CommandContext& ctx);
void cmd_zrangestore(CommandContext& ctx);
void cmd_zrevrange(CommandContext& ctx);
void cmd_zrangebyscore(CommandContext& ctx);
void cmd_zrevrangebyscore(CommandContext& ctx);
void cmd_zrangebylex(CommandContext& ctx);
void cmd_zrevrangebylex(CommandContext& ctx);
void cmd_zrank(CommandContext& ctx);
void cmd_zrevrank(CommandContext& ctx);
void cmd_zrem(CommandContext& ctx);
void cmd_zremrangebyrank(CommandContext& ctx);
void cmd_zremrangebyscore(CommandContext& ctx);
void cmd_zremrangebylex(CommandContext& ctx);

// The events of members removed from `key` by `event` (ZREM..., ZPOP...): that event, and del
// when `left` is 0 (the write's guard deletes the key as it ends).
inline void notify_zset_removed(CommandContext& ctx, std::string_view key, std::string_view event,
                                size_t left) {
  ctx.notify(common::kNotifyZset, event, key);
  if (left == 0) ctx.notify(common::kNotifyGeneric, "del", key);
}

}  // namespace ringkv::engine
