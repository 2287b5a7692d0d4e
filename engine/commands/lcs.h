// LCS: the command's table row and its handler.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> lcs_commands();

void cmd_lcs(CommandContext& ctx);

}  // namespace ringkv::engine
