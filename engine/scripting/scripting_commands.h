// The scripting commands (scripting_commands.cpp, which ends with their table rows): EVAL,
// EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL/DEBUG/HELP.
#pragma once

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> scripting_commands();

void cmd_eval(CommandContext& ctx);
void cmd_evalsha(CommandContext& ctx);
void cmd_eval_ro(CommandContext& ctx);
void cmd_evalsha_ro(CommandContext& ctx);
void cmd_script_load(CommandContext& ctx);
void cmd_script_exists(CommandContext& ctx);
void cmd_script_flush(CommandContext& ctx);
void cmd_script_kill(CommandContext& ctx);
void cmd_script_help(CommandContext& ctx);
void cmd_script_debug(CommandContext& ctx);
// SCRIPT KILL (`eval`) and FUNCTION KILL: kills the running script of that kind and replies.
void reply_kill(CommandContext& ctx, ScriptEngine& engine, bool eval);
// EVAL's keys: numkeys (argv[2]) names argv[3] .. argv[2 + numkeys].
void eval_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

// SCRIPT's subcommand rows (the SCRIPT row is with the family's rows).
inline constexpr CommandSpec kScriptSubcommands[] = {
    {.name = "debug",
     .arity = 3,
     .flags = kNoscript,
     .handler = cmd_script_debug,
     .group = "scripting",
     .since = "3.2.0",
     .summary = "Set the debug mode for executed scripts.",
     .complexity = "O(1)",
     .syntax = "(mode: YES | SYNC | NO)",
     .acl_categories = "slow scripting"},
    {.name = "exists",
     .arity = -3,
     .flags = kNoscript | kClusterWide,
     .handler = cmd_script_exists,
     .group = "scripting",
     .since = "2.6.0",
     .summary = "Check existence of scripts in the script cache.",
     .complexity = "O(N) with N being the number of scripts to check (so checking a single script "
                   "is an O(1) operation).",
     .syntax = "sha1...",
     .acl_categories = "slow scripting",
     .tips = "request_policy:all_shards response_policy:agg_logical_and",
     .merge = MergePolicy::kAllTrue},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = cmd_script_help,
     .group = "scripting",
     .since = "5.0.0",
     .summary = "Show helpful text about the different subcommands",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow scripting"},
    {.name = "load",
     .arity = 3,
     .flags = kNoscript | kStale | kClusterWide,
     .handler = cmd_script_load,
     .group = "scripting",
     .since = "2.6.0",
     .summary = "Load the specified Lua script into the script cache.",
     .complexity = "O(N) with N being the length in bytes of the script body.",
     .syntax = "script",
     .acl_categories = "slow scripting",
     .tips = "request_policy:all_nodes response_policy:all_succeeded",
     .merge = MergePolicy::kSame},
    {.name = "flush",
     .arity = -2,
     .flags = kNoscript | kClusterWide,
     .handler = cmd_script_flush,
     .group = "scripting",
     .since = "2.6.0",
     .summary = "Remove all the scripts from the script cache.",
     .complexity = "O(N) with N being the number of scripts in cache",
     .syntax = "[async: ASYNC | SYNC]@6.2.0",
     .acl_categories = "slow scripting",
     .tips = "request_policy:all_nodes response_policy:all_succeeded",
     .history = "6.2.0|Added the `ASYNC` and `SYNC` flushing mode modifiers.",
     .merge = MergePolicy::kAllOk},
    {.name = "kill",
     .arity = 2,
     .flags = kNoscript | kAllowBusy,
     .handler = cmd_script_kill,
     .group = "scripting",
     .since = "2.6.0",
     .summary = "Kill the script currently in execution.",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow scripting",
     .tips = "request_policy:all_shards response_policy:one_succeeded"},
};

}  // namespace ringkv::engine
