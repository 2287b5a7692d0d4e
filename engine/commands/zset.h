// Sorted sets (single-key commands): the family's command-table rows, and the handlers that code
// outside the family (the server, the tests) calls directly.
#pragma once

#include <span>

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

}  // namespace ringkv::engine
