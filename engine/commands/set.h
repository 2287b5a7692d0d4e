// Sets: the family's command-table rows, and the handlers that code outside the family (the server,
// the tests) calls directly.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> set_commands();

void cmd_sadd(CommandContext& ctx);
void cmd_srem(CommandContext& ctx);
void cmd_smembers(CommandContext& ctx);
void cmd_sismember(CommandContext& ctx);
void cmd_smismember(CommandContext& ctx);
void cmd_scard(CommandContext& ctx);
void cmd_spop(CommandContext& ctx);
void cmd_srandmember(CommandContext& ctx);
void cmd_smove(CommandContext& ctx);
void cmd_sinter(CommandContext& ctx);
void cmd_sintercard(CommandContext& ctx);
void cmd_sunion(CommandContext& ctx);
void cmd_sdiff(CommandContext& ctx);
void cmd_sinterstore(CommandContext& ctx);
void cmd_sunionstore(CommandContext& ctx);
void cmd_sdiffstore(CommandContext& ctx);
void cmd_sscan(CommandContext& ctx);
// SINTERCARD numkeys key... : the key positions (a KeyFinder).
void sintercard_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

}  // namespace ringkv::engine
