// List pops over several keys and the blocking list commands (LMPOP, BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH, BLMPOP): the family's command-table rows, and the handlers and key finders that
// code outside the family (the tests) calls directly.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> list_pop_commands();

void cmd_lmpop(CommandContext& ctx);
void cmd_blpop(CommandContext& ctx);
void cmd_brpop(CommandContext& ctx);
void cmd_blmove(CommandContext& ctx);
void cmd_brpoplpush(CommandContext& ctx);
void cmd_blmpop(CommandContext& ctx);
// Key finders of LMPOP (numkeys at argv[1]) and BLMPOP (timeout, then numkeys at argv[2]).
void lmpop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);
void blmpop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

}  // namespace ringkv::engine
