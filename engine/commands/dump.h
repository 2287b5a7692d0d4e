// DUMP and RESTORE: the family's command-table rows, and the handlers that code outside the
// family (the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> dump_commands();

void cmd_dump(CommandContext& ctx);
void cmd_restore(CommandContext& ctx);

}  // namespace ringkv::engine
