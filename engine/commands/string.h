// Strings: the family's command-table rows, and the handlers that code outside the family (the
// server, the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> string_commands();

void cmd_get(CommandContext& ctx);
void cmd_set(CommandContext& ctx);
void cmd_setnx(CommandContext& ctx);
void cmd_setex(CommandContext& ctx);
void cmd_psetex(CommandContext& ctx);
void cmd_getset(CommandContext& ctx);
void cmd_getdel(CommandContext& ctx);
void cmd_getex(CommandContext& ctx);
void cmd_mget(CommandContext& ctx);
void cmd_mset(CommandContext& ctx);
void cmd_msetnx(CommandContext& ctx);
void cmd_append(CommandContext& ctx);
void cmd_strlen(CommandContext& ctx);
void cmd_incr(CommandContext& ctx);
void cmd_decr(CommandContext& ctx);
void cmd_incrby(CommandContext& ctx);
void cmd_decrby(CommandContext& ctx);
void cmd_incrbyfloat(CommandContext& ctx);
void cmd_getrange(CommandContext& ctx);  // also SUBSTR
void cmd_setrange(CommandContext& ctx);

}  // namespace ringkv::engine
