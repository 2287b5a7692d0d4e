// Sorted sets (ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD, and the row of
// ZRANGESTORE): the family's command-table rows, and the handlers that code outside the family (the
// server, the tests) calls directly.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> zset_combine_commands();

void cmd_zunion(CommandContext& ctx);
void cmd_zinter(CommandContext& ctx);
void cmd_zdiff(CommandContext& ctx);
void cmd_zunionstore(CommandContext& ctx);
void cmd_zinterstore(CommandContext& ctx);
void cmd_zdiffstore(CommandContext& ctx);
void cmd_zintercard(CommandContext& ctx);
// Key finders of ZUNION/ZINTER/ZDIFF (numkeys at argv[1]) and their STORE forms (destination,
// then numkeys at argv[2]).
void zsetop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);
void zsetop_store_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

}  // namespace ringkv::engine
