// Hashes: the family's command-table rows, and the handlers that code outside the family (the
// server, the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> hash_commands();

void cmd_hset(CommandContext& ctx);
void cmd_hmset(CommandContext& ctx);
void cmd_hsetnx(CommandContext& ctx);
void cmd_hget(CommandContext& ctx);
void cmd_hmget(CommandContext& ctx);
void cmd_hdel(CommandContext& ctx);
void cmd_hlen(CommandContext& ctx);
void cmd_hstrlen(CommandContext& ctx);
void cmd_hexists(CommandContext& ctx);
void cmd_hgetall(CommandContext& ctx);
void cmd_hkeys(CommandContext& ctx);
void cmd_hvals(CommandContext& ctx);
void cmd_hincrby(CommandContext& ctx);
void cmd_hincrbyfloat(CommandContext& ctx);
void cmd_hrandfield(CommandContext& ctx);
void cmd_hscan(CommandContext& ctx);

}  // namespace ringkv::engine
