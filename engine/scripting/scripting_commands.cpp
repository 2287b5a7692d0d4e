// The scripting commands: argument checks and replies; the scripts themselves run in the
// node's ScriptEngine (script_engine.h).
#include "engine/scripting/scripting_commands.h"

#include "engine/commands/string_ops.h"
#include "engine/scripting/script_engine.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kScriptHelp[] = {
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
};

constexpr std::string_view kNoScripting = "ERR scripts are not available here";

ScriptEngine* script_engine_of(CommandContext& ctx) {
  ScriptEngine* engine = ctx.server != nullptr ? ctx.server->script_engine() : nullptr;
  if (engine == nullptr) ctx.reply.error(kNoScripting);
  return engine;
}

void eval_generic(CommandContext& ctx, bool by_sha, bool read_only) {
  if (ScriptEngine* engine = script_engine_of(ctx)) engine->eval(ctx, by_sha, read_only);
}

}  // namespace

void eval_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  int64_t numkeys = 0;
  if (argv.size() < 3 || !parse_int64(argv[2], numkeys) || numkeys < 0 ||
      static_cast<uint64_t>(numkeys) > argv.size() - 3) {
    return;
  }
  for (size_t i = 0; i < static_cast<size_t>(numkeys); ++i) positions.push_back(3 + i);
}

void cmd_eval(CommandContext& ctx) { eval_generic(ctx, false, false); }
void cmd_evalsha(CommandContext& ctx) { eval_generic(ctx, true, false); }
void cmd_eval_ro(CommandContext& ctx) { eval_generic(ctx, false, true); }
void cmd_evalsha_ro(CommandContext& ctx) { eval_generic(ctx, true, true); }

void cmd_script_load(CommandContext& ctx) {
  ScriptEngine* engine = script_engine_of(ctx);
  if (engine == nullptr) return;
  std::string error;
  const std::string sha = engine->load(ctx.argv[2], error);
  if (sha.empty()) {
    ctx.reply.error(error);
    return;
  }
  ctx.reply.bulk(sha);
}

void cmd_script_exists(CommandContext& ctx) {
  ScriptEngine* engine = script_engine_of(ctx);
  if (engine == nullptr) return;
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) ctx.reply.integer(engine->exists(ctx.argv[i]));
}

void cmd_script_flush(CommandContext& ctx) {
  if (ctx.argv.size() > 3 || (ctx.argv.size() == 3 && !equals_ignore_case(ctx.argv[2], "sync") &&
                              !equals_ignore_case(ctx.argv[2], "async"))) {
    ctx.reply.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  ScriptEngine* engine = script_engine_of(ctx);
  if (engine == nullptr) return;
  engine->flush();
  ctx.reply.ok();
}

void cmd_script_kill(CommandContext& ctx) {
  ScriptEngine* engine = script_engine_of(ctx);
  if (engine == nullptr) return;
  reply_kill(ctx, *engine, true);
}

void reply_kill(CommandContext& ctx, ScriptEngine& engine, bool eval) {
  switch (engine.kill(false, eval)) {
    case ScriptEngine::KillResult::kNotBusy:
      ctx.reply.error("NOTBUSY No scripts in execution right now.");
      return;
    case ScriptEngine::KillResult::kUnkillable:
      ctx.reply.error(
          "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
          "can either wait the script termination or kill the server in a hard way using the "
          "SHUTDOWN NOSAVE command.");
      return;
    case ScriptEngine::KillResult::kKilled:
      ctx.reply.ok();
      return;
    case ScriptEngine::KillResult::kOtherKind:
      // SCRIPT KILL while a function runs, FUNCTION KILL while an EVAL does.
      ctx.reply.error(busy_error(engine.running_function()));
      return;
  }
}

void cmd_script_debug(CommandContext& ctx) {
  using ScriptDebug = ClientSession::ScriptDebug;
  ScriptEngine* engine = script_engine_of(ctx);
  if (engine == nullptr || ctx.client == nullptr) return;
  if (ctx.client->has_pending_replies()) {
    ctx.reply.error("ERR SCRIPT DEBUG must be called outside a pipeline");
    return;
  }
  const std::string_view mode = ctx.argv[2];
  if (equals_ignore_case(mode, "no")) {
    ctx.client->set_script_debug(ScriptDebug::kOff);
    ctx.reply.ok();
    return;
  }
  const bool yes = equals_ignore_case(mode, "yes");
  if (!yes && !equals_ignore_case(mode, "sync")) {
    ctx.reply.error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    return;
  }
  // The debugger talks over the client's own connection (a peer's link has none to lend).
  if (ctx.client->debug_link() == nullptr) {
    ctx.reply.error("ERR SCRIPT DEBUG is not available on this connection");
    return;
  }
  engine->debugger().enable();
  ctx.client->set_script_debug(yes ? ScriptDebug::kFork : ScriptDebug::kSync);
  ctx.reply.ok();
}

void cmd_script_help(CommandContext& ctx) {
  ctx.reply.array(std::size(kScriptHelp));
  for (std::string_view line : kScriptHelp) ctx.reply.simple(line);
}

namespace {

constexpr CommandSpec kScriptingCommands[] = {
    {.name = "eval",
     .arity = -3,
     .flags = kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys | kMayReplicate,
     .handler = cmd_eval,
     .group = "scripting",
     .since = "2.6.0",
     .summary = "Execute a Lua script server side",
     .complexity = "Depends on the script that is executed.",
     .syntax = "script numkeys<integer> [key<key>]... [arg]...",
     .acl_categories = "slow scripting",
     .key_specs = "RW access update|2|keynum|0,1,1||We cannot tell how the keys will be used so we "
                  "assume the worst, RW and UPDATE",
     .find_keys = eval_keys},
    {.name = "evalsha",
     .arity = -3,
     .flags = kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys | kMayReplicate,
     .handler = cmd_evalsha,
     .group = "scripting",
     .since = "2.6.0",
     .summary = "Execute a Lua script server side",
     .complexity = "Depends on the script that is executed.",
     .syntax = "sha1 numkeys<integer> [key<key>]... [arg]...",
     .acl_categories = "slow scripting",
     .key_specs = "RW access update|2|keynum|0,1,1",
     .find_keys = eval_keys},
    {.name = "eval_ro",
     .arity = -3,
     .flags = kReadonly | kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys,
     .handler = cmd_eval_ro,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Execute a read-only Lua script server side",
     .complexity = "Depends on the script that is executed.",
     .syntax = "script numkeys<integer> [key<key>]... [arg]...",
     .acl_categories = "slow scripting",
     .key_specs = "RO access|2|keynum|0,1,1||We cannot tell how the keys will be used so we assume "
                  "the worst, RO and ACCESS",
     .find_keys = eval_keys},
    {.name = "evalsha_ro",
     .arity = -3,
     .flags = kReadonly | kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys,
     .handler = cmd_evalsha_ro,
     .group = "scripting",
     .since = "7.0.0",
     .summary = "Execute a read-only Lua script server side",
     .complexity = "Depends on the script that is executed.",
     .syntax = "sha1 numkeys<integer> [key<key>]... [arg]...",
     .acl_categories = "slow scripting",
     .key_specs = "RO access|2|keynum|0,1,1",
     .find_keys = eval_keys},
    container_row("script", "scripting", "2.6.0", "A container for Lua scripts management commands",
                  kScriptSubcommands),
};

}  // namespace

std::span<const CommandSpec> scripting_commands() { return kScriptingCommands; }

}  // namespace ringkv::engine
