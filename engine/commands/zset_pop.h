// Sorted-set pops and sampling (ZPOPMIN/ZPOPMAX, BZPOPMIN/BZPOPMAX, ZSCAN, ZRANDMEMBER): the
// family's command-table rows, and the handlers that code outside the family (the tests) calls
// directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> zset_pop_commands();

void cmd_zpopmin(CommandContext& ctx);
void cmd_zpopmax(CommandContext& ctx);
void cmd_bzpopmin(CommandContext& ctx);
void cmd_bzpopmax(CommandContext& ctx);
void cmd_zmpop(CommandContext& ctx);
void cmd_bzmpop(CommandContext& ctx);
void cmd_zscan(CommandContext& ctx);
void cmd_zrandmember(CommandContext& ctx);

}  // namespace ringkv::engine
