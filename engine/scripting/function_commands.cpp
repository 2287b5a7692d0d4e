// The function commands: argument checks and replies, as Redis 7.0's functions.c answers them.
#include "engine/scripting/function_commands.h"

#include "common/glob.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/scripting/script_engine.h"
#include "engine/scripting/scripting_commands.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kFunctionHelp[] = {
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using "
    "FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore "
    "policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance "
    "of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
};

ScriptEngine* function_engine_of(CommandContext& ctx) {
  ScriptEngine* engine = ctx.server != nullptr ? ctx.server->script_engine() : nullptr;
  if (engine == nullptr) ctx.reply.error("ERR functions are not available here");
  return engine;
}

// Logs the command as sent: it changed the libraries, which are kept with the data (with
// REPLACE, a replay loads it over what an older record made).
void record(CommandContext& ctx) {
  if (ctx.propagation != nullptr) {
    ctx.propagation->record_always(std::vector<std::string>(ctx.argv.begin(), ctx.argv.end()));
  }
}

void error_text(CommandContext& ctx, std::string_view text) {
  std::string reply = "ERR ";
  reply += text;
  ctx.reply.error(reply);
}

void cmd_fcall(CommandContext& ctx) {
  if (ScriptEngine* engine = function_engine_of(ctx)) engine->fcall(ctx, false);
}

void cmd_fcall_ro(CommandContext& ctx) {
  if (ScriptEngine* engine = function_engine_of(ctx)) engine->fcall(ctx, true);
}

void cmd_function_load(CommandContext& ctx) {
  bool replace = false;
  size_t i = 2;
  while (i < ctx.argv.size() - 1) {
    if (!equals_ignore_case(ctx.argv[i], "replace")) {
      error_text(ctx, "Unknown option given: " + std::string(ctx.argv[i]));
      return;
    }
    replace = true;
    ++i;
  }
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  std::string error;
  const std::string name = engine->function_load(ctx.argv[i], replace, true, error);
  if (name.empty()) {
    error_text(ctx, error);
    return;
  }
  record(ctx);
  ctx.reply.bulk(name);
}

void cmd_function_delete(CommandContext& ctx) {
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  if (!engine->function_delete(ctx.argv[2])) {
    ctx.reply.error("ERR Library not found");
    return;
  }
  record(ctx);
  ctx.reply.ok();
}

void cmd_function_list(CommandContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    if (!with_code && equals_ignore_case(ctx.argv[i], "withcode")) {
      with_code = true;
    } else if (!pattern && equals_ignore_case(ctx.argv[i], "libraryname")) {
      if (i + 1 >= ctx.argv.size()) {
        ctx.reply.error("ERR library name argument was not given");
        return;
      }
      pattern = ctx.argv[++i];
    } else {
      error_text(ctx, "Unknown argument " + std::string(ctx.argv[i]));
      return;
    }
  }
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  std::vector<const FunctionLibrary*> libs;
  for (const auto& [name, lib] : engine->functions().libraries()) {
    if (!pattern || common::glob_match(*pattern, name, true)) libs.push_back(lib.get());
  }
  static constexpr std::string_view kFlagNames[] = {"no-writes", "allow-oom", "allow-stale",
                                                    "no-cluster", "allow-cross-slot-keys"};
  ctx.reply.array(libs.size());
  for (const FunctionLibrary* lib : libs) {
    ctx.reply.map(with_code ? 4 : 3);
    ctx.reply.bulk("library_name");
    ctx.reply.bulk(lib->name);
    ctx.reply.bulk("engine");
    ctx.reply.bulk("LUA");
    ctx.reply.bulk("functions");
    ctx.reply.array(lib->functions.size());
    for (const FunctionDef& f : lib->functions) {
      ctx.reply.map(3);
      ctx.reply.bulk("name");
      ctx.reply.bulk(f.name);
      ctx.reply.bulk("description");
      if (f.description) {
        ctx.reply.bulk(*f.description);
      } else {
        ctx.reply.null();
      }
      ctx.reply.bulk("flags");
      size_t n = 0;
      for (size_t b = 0; b < std::size(kFlagNames); ++b) n += (f.flags >> b) & 1;
      ctx.reply.set(n);
      for (size_t b = 0; b < std::size(kFlagNames); ++b) {
        if ((f.flags >> b) & 1) ctx.reply.bulk(kFlagNames[b]);
      }
    }
    if (with_code) {
      ctx.reply.bulk("library_code");
      ctx.reply.bulk(lib->code);
    }
  }
}

void cmd_function_dump(CommandContext& ctx) {
  if (ScriptEngine* engine = function_engine_of(ctx)) {
    ctx.reply.bulk(function_dump_payload(engine->functions()));
  }
}

void cmd_function_restore(CommandContext& ctx) {
  if (ctx.argv.size() > 4) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  ScriptEngine::RestorePolicy policy = ScriptEngine::RestorePolicy::kAppend;
  if (ctx.argv.size() == 4) {
    if (equals_ignore_case(ctx.argv[3], "append")) {
      policy = ScriptEngine::RestorePolicy::kAppend;
    } else if (equals_ignore_case(ctx.argv[3], "replace")) {
      policy = ScriptEngine::RestorePolicy::kReplace;
    } else if (equals_ignore_case(ctx.argv[3], "flush")) {
      policy = ScriptEngine::RestorePolicy::kFlush;
    } else {
      ctx.reply.error(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  std::string error;
  if (!engine->function_restore(ctx.argv[2], policy, error)) {
    error_text(ctx, error);
    return;
  }
  record(ctx);
  ctx.reply.ok();
}

void cmd_function_flush(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  if (ctx.argv.size() == 3 && !equals_ignore_case(ctx.argv[2], "sync") &&
      !equals_ignore_case(ctx.argv[2], "async")) {
    ctx.reply.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  engine->function_flush();
  record(ctx);
  ctx.reply.ok();
}

void cmd_function_stats(CommandContext& ctx) {
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  ctx.reply.map(2);
  ctx.reply.bulk("running_script");
  if (!engine->running_function()) {
    ctx.reply.null();
  } else {
    ctx.reply.map(3);
    ctx.reply.bulk("name");
    ctx.reply.bulk(engine->running_name());
    ctx.reply.bulk("command");
    ctx.reply.array(engine->running_argv().size());
    for (const std::string& arg : engine->running_argv()) ctx.reply.bulk(arg);
    ctx.reply.bulk("duration_ms");
    ctx.reply.integer(static_cast<int64_t>(engine->running_ms()));
  }
  ctx.reply.bulk("engines");
  ctx.reply.map(1);
  ctx.reply.bulk("LUA");
  ctx.reply.map(2);
  ctx.reply.bulk("libraries_count");
  ctx.reply.integer(static_cast<int64_t>(engine->functions().libraries().size()));
  ctx.reply.bulk("functions_count");
  ctx.reply.integer(static_cast<int64_t>(engine->functions().function_count()));
}

void cmd_function_kill(CommandContext& ctx) {
  ScriptEngine* engine = function_engine_of(ctx);
  if (engine == nullptr) return;
  reply_kill(ctx, *engine, false);
}

void cmd_function_help(CommandContext& ctx) {
  ctx.reply.array(std::size(kFunctionHelp));
  for (std::string_view line : kFunctionHelp) ctx.reply.simple(line);
}

constexpr CommandSpec kFunctionSubcommands[] = {
    {.name = "restore",
     .arity = -3,
     .flags = kWrite | kDenyOom | kNoscript | kClusterWide,
     .handler = cmd_function_restore,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Restore all the functions on the given payload",
     .complexity = "O(N) where N is the number of functions on the payload",
     .syntax = "serialized-value [policy: FLUSH | APPEND | REPLACE]",
     .acl_categories = "write slow scripting",
     .tips = "request_policy:all_shards response_policy:all_succeeded",
     .merge = MergePolicy::kAllOk},
    {.name = "stats",
     .arity = 2,
     .flags = kNoscript | kAllowBusy,
     .handler = cmd_function_stats,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Return information about the function currently running (name, description, "
                "duration)",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow scripting",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    help_row(cmd_function_help, "scripting", "7.0.0", "slow scripting"),
    {.name = "flush",
     .arity = -2,
     .flags = kWrite | kNoscript | kClusterWide,
     .handler = cmd_function_flush,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Deleting all functions",
     .complexity = "O(N) where N is the number of functions deleted",
     .syntax = "[async: ASYNC | SYNC]",
     .acl_categories = "write slow scripting",
     .tips = "request_policy:all_shards response_policy:all_succeeded",
     .merge = MergePolicy::kAllOk},
    {.name = "dump",
     .arity = 2,
     .flags = kNoscript,
     .handler = cmd_function_dump,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Dump all functions into a serialized binary payload",
     .complexity = "O(N) where N is the number of functions",
     .syntax = "",
     .acl_categories = "slow scripting"},
    {.name = "list",
     .arity = -2,
     .flags = kNoscript,
     .handler = cmd_function_list,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "List information about all the functions",
     .complexity = "O(N) where N is the number of functions",
     .syntax = "[LIBRARYNAME=library-name-pattern] [WITHCODE]",
     .acl_categories = "slow scripting",
     .tips = "nondeterministic_output_order"},
    {.name = "delete",
     .arity = 3,
     .flags = kWrite | kNoscript | kClusterWide,
     .handler = cmd_function_delete,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Delete a function by name",
     .complexity = "O(1)",
     .syntax = "library-name",
     .acl_categories = "write slow scripting",
     .tips = "request_policy:all_shards response_policy:all_succeeded",
     .merge = MergePolicy::kAllOk},
    {.name = "load",
     .arity = -3,
     .flags = kWrite | kDenyOom | kNoscript | kClusterWide,
     .handler = cmd_function_load,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Create a function with the given arguments (name, code, description)",
     .complexity = "O(1) (considering compilation time is redundant)",
     .syntax = "[REPLACE] function-code",
     .acl_categories = "write slow scripting",
     .tips = "request_policy:all_shards response_policy:all_succeeded",
     .merge = MergePolicy::kSame},
    {.name = "kill",
     .arity = 2,
     .flags = kNoscript | kAllowBusy,
     .handler = cmd_function_kill,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Kill the function currently in execution.",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow scripting",
     .tips = "request_policy:all_shards response_policy:one_succeeded"},
};

constexpr CommandSpec kFunctionCommands[] = {
    {.name = "fcall",
     .arity = -3,
     .flags = kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys | kMayReplicate,
     .handler = cmd_fcall,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Invoke a function",
     .complexity = "Depends on the function that is executed.",
     .syntax = "function numkeys<integer> [key<key>]... [arg]...",
     .acl_categories = "slow scripting",
     .key_specs = "RW access update|2|keynum|0,1,1||We cannot tell how the keys will be used so we "
                  "assume the worst, RW and UPDATE",
     .find_keys = eval_keys},
    {.name = "fcall_ro",
     .arity = -3,
     .flags = kReadonly | kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys,
     .handler = cmd_fcall_ro,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Invoke a read-only function",
     .complexity = "Depends on the function that is executed.",
     .syntax = "function numkeys<integer> [key<key>]... [arg]...",
     .acl_categories = "slow scripting",
     .key_specs = "RO access|2|keynum|0,1,1||We cannot tell how the keys will be used so we assume "
                  "the worst, RO and ACCESS",
     .find_keys = eval_keys},
    container_row("function", "scripting", "7.0.0", "A container for function commands",
                  kFunctionSubcommands),
};

}  // namespace

std::span<const CommandSpec> function_commands() { return kFunctionCommands; }

}  // namespace ringkv::engine
