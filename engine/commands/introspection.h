// INFO and COMMAND: the family's command-table rows, and the handlers that code outside the family
// (the server, the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> introspection_commands();

void cmd_command(CommandContext& ctx);  // bare COMMAND

}  // namespace ringkv::engine
