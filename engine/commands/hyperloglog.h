// HyperLogLog: the family's command-table rows, and the handlers that code outside the family (the
// tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> hyperloglog_commands();

void cmd_pfadd(CommandContext& ctx);
void cmd_pfcount(CommandContext& ctx);
void cmd_pfmerge(CommandContext& ctx);
void cmd_pfdebug(CommandContext& ctx);
void cmd_pfselftest(CommandContext& ctx);

}  // namespace ringkv::engine
