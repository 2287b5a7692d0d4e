// The function commands (function_commands.cpp, which ends with their table rows): FCALL,
// FCALL_RO and FUNCTION LOAD/DELETE/LIST/DUMP/RESTORE/FLUSH/STATS/KILL/HELP. The libraries
// live in the node's ScriptEngine (lua_functions.cpp).
#pragma once

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> function_commands();

}  // namespace ringkv::engine
