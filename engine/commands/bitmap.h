// Bitmaps: the family's command-table rows, and the handlers that code outside the family (the
// tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> bitmap_commands();

void cmd_setbit(CommandContext& ctx);
void cmd_getbit(CommandContext& ctx);
void cmd_bitcount(CommandContext& ctx);
void cmd_bitpos(CommandContext& ctx);
void cmd_bitop(CommandContext& ctx);
void cmd_bitfield(CommandContext& ctx);
void cmd_bitfield_ro(CommandContext& ctx);

}  // namespace ringkv::engine
