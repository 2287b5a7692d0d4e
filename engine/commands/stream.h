// Streams: the families' command-table rows (entries, reads, consumer groups, introspection)
// and the handlers code outside the families (the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// The families' rows of the command table, in table order.
std::span<const CommandSpec> stream_commands();          // stream.cpp
std::span<const CommandSpec> stream_read_commands();     // stream_read.cpp
std::span<const CommandSpec> stream_group_commands();    // stream_group.cpp
std::span<const CommandSpec> stream_pending_commands();  // stream_pending.cpp
std::span<const CommandSpec> stream_info_commands();     // stream_info.cpp

void cmd_xadd(CommandContext& ctx);
void cmd_xlen(CommandContext& ctx);
void cmd_xrange(CommandContext& ctx);
void cmd_xrevrange(CommandContext& ctx);
void cmd_xdel(CommandContext& ctx);
void cmd_xtrim(CommandContext& ctx);
void cmd_xsetid(CommandContext& ctx);
void cmd_xread(CommandContext& ctx);
void cmd_xreadgroup(CommandContext& ctx);
void cmd_xgroup_create(CommandContext& ctx);
void cmd_xgroup_setid(CommandContext& ctx);
void cmd_xgroup_destroy(CommandContext& ctx);
void cmd_xgroup_createconsumer(CommandContext& ctx);
void cmd_xgroup_delconsumer(CommandContext& ctx);
void cmd_xack(CommandContext& ctx);
void cmd_xpending(CommandContext& ctx);
void cmd_xclaim(CommandContext& ctx);
void cmd_xautoclaim(CommandContext& ctx);
void cmd_xinfo_stream(CommandContext& ctx);
void cmd_xinfo_groups(CommandContext& ctx);
void cmd_xinfo_consumers(CommandContext& ctx);

}  // namespace ringkv::engine
