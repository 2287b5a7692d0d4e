// Lists: the family's command-table rows, and the handlers that code outside the family (the
// server, the tests) calls directly.
#pragma once

#include <span>
#include <string_view>

#include "engine/command.h"
#include "engine/types/list_type.h"

namespace ringkv::engine {

using ListEnd = ListObject::End;

// This family's rows of the command table, in table order.
std::span<const CommandSpec> list_commands();

void cmd_lpush(CommandContext& ctx);
void cmd_rpush(CommandContext& ctx);
void cmd_lpushx(CommandContext& ctx);
void cmd_rpushx(CommandContext& ctx);
void cmd_lpop(CommandContext& ctx);
void cmd_rpop(CommandContext& ctx);
void cmd_llen(CommandContext& ctx);
void cmd_lrange(CommandContext& ctx);
void cmd_lindex(CommandContext& ctx);
void cmd_lset(CommandContext& ctx);
void cmd_linsert(CommandContext& ctx);
void cmd_lrem(CommandContext& ctx);
void cmd_ltrim(CommandContext& ctx);
void cmd_lpos(CommandContext& ctx);
void cmd_lmove(CommandContext& ctx);
void cmd_rpoplpush(CommandContext& ctx);

// Shared with the multi-key and blocking pops (list_pop.cpp):
// LEFT or RIGHT, case-insensitively (getListPositionFromObjectOrReply); replies a syntax error.
bool end_or_reply(CommandContext& ctx, std::string_view arg, ListEnd& end);
// The LEFT/RIGHT argument naming an end (LMOVE's spelling).
std::string_view end_name(ListEnd end);

// The events of elements popped from `key`'s `end` (lpop or rpop), and del when that emptied it
// (Redis's listElementsRemoved).
void notify_popped(CommandContext& ctx, std::string_view key, ListEnd end);
// LMOVE's common part (BLMOVE, RPOPLPUSH, BRPOPLPUSH): moves one element, replying it, or the
// null bulk when the source is absent. Returns whether an element moved.
bool move_generic(CommandContext& ctx, ListEnd from, ListEnd to);

}  // namespace ringkv::engine
