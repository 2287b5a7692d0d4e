// Keyspace-wide commands and OBJECT: the family's command-table rows, and the handlers that code
// outside the family (the server, the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"
#include "engine/keyspace/entry.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> keyspace_commands();

void cmd_keys(CommandContext& ctx);
void cmd_scan(CommandContext& ctx);
void cmd_randomkey(CommandContext& ctx);
void cmd_dbsize(CommandContext& ctx);
void cmd_flushall(CommandContext& ctx);
void cmd_flushdb(CommandContext& ctx);
void cmd_swapdb(CommandContext& ctx);
void cmd_object_encoding(CommandContext& ctx);
// The refcount Redis reports for this value (OBJECT REFCOUNT, DEBUG OBJECT): INT_MAX for the
// integers 0..9999, whose objects Redis shares, else 1.
int64_t refcount_of(const Entry& e);
void cmd_object_freq(CommandContext& ctx);
void cmd_object_idletime(CommandContext& ctx);
void cmd_object_refcount(CommandContext& ctx);
void cmd_object_help(CommandContext& ctx);

}  // namespace ringkv::engine
