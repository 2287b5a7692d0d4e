// Keys: the family's command-table rows, and the handlers that code outside the family (the
// server, the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> keys_commands();

void cmd_del(CommandContext& ctx);  // also UNLINK
void cmd_exists(CommandContext& ctx);
void cmd_touch(CommandContext& ctx);
void cmd_type(CommandContext& ctx);
void cmd_expire(CommandContext& ctx);      // EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (by argv[0])
void cmd_ttl(CommandContext& ctx);         // TTL, PTTL
void cmd_expiretime(CommandContext& ctx);  // EXPIRETIME, PEXPIRETIME
void cmd_persist(CommandContext& ctx);
void cmd_rename(CommandContext& ctx);
void cmd_renamenx(CommandContext& ctx);
void cmd_copy(CommandContext& ctx);
void cmd_move(CommandContext& ctx);

}  // namespace ringkv::engine
