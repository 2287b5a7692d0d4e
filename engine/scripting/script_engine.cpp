// ScriptEngine: the script cache, running one script, redis.call and the busy-script hook.
#include "engine/scripting/script_engine.h"

#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <lua.hpp>
#include <string>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/scripting/lua_convert.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// The hook runs every this many Lua instructions (as Redis).
constexpr int kHookInstructions = 100000;

uint64_t monotonic_ms() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > start) parts.push_back(s.substr(start, i - start));
  }
  return parts;
}

void hook(lua_State* L, lua_Debug*) { engine_of(L)->on_hook(L); }

// The hook of a script being debugged: every line, and every kHookInstructions instructions
// (the infinite-loop check). Raises what on_debug_line pushed, with no C++ object alive here.
void debug_hook(lua_State* L, lua_Debug* ar) {
  if (engine_of(L)->on_debug_line(L, ar)) lua_error(L);
}

// The message handler of a script's pcall, after Redis's __redis__err__handler: makes the error
// a table {err=..., source=..., line=...} naming the script line that failed (the caller of a C
// function such as redis.call).
int error_handler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
  if (have && std::string_view(ar.what) == "C") {
    have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
  }
  if (!lua_istable(L, 1)) {
    const char* msg = lua_tostring(L, 1);
    std::string text = "ERR ";
    text += msg != nullptr ? msg : "nil";
    lua_newtable(L);
    lua_pushstring(L, "err");
    lua_pushlstring(L, text.data(), text.size());
    lua_settable(L, -3);
    lua_replace(L, 1);
  }
  if (have) {
    lua_pushstring(L, "source");
    lua_pushstring(L, ar.source);
    lua_settable(L, 1);
    lua_pushstring(L, "line");
    lua_pushnumber(L, ar.currentline);
    lua_settable(L, 1);
  }
  lua_settop(L, 1);
  return 1;
}

// A Lua number as a command argument, as Redis 7.0 prints it ("%.17g").
std::string number_argument(lua_Number n) {
  char buf[64];
  const int len = std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(n));
  return std::string(buf, static_cast<size_t>(len));
}

}  // namespace

std::string_view busy_error(bool function) {
  return function ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                    "SHUTDOWN NOSAVE."
                  : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                    "SHUTDOWN NOSAVE.";
}

std::string sha1_hex(std::string_view data) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

bool parse_shebang(std::string_view body, uint32_t& flags, size_t& skip, std::string& error) {
  flags = kScriptCompat;
  skip = 0;
  if (body.substr(0, 2) != "#!") return true;
  const size_t end = body.find('\n');
  if (end == std::string_view::npos) {
    error = "ERR Invalid script shebang";
    return false;
  }
  const std::vector<std::string_view> parts = split_spaces(body.substr(0, end));
  if (parts.empty() || parts[0] != "#!lua") {
    error = "ERR Unexpected engine in script shebang: " +
            std::string(parts.empty() ? std::string_view{} : parts[0]);
    return false;
  }
  flags = 0;
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"no-writes", kScriptNoWrites},
      {"allow-oom", kScriptAllowOom},
      {"allow-stale", kScriptAllowStale},
      {"no-cluster", kScriptNoCluster},
      {"allow-cross-slot-keys", kScriptAllowCrossSlot}};
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].substr(0, 6) != "flags=") {
      error = "ERR Unknown lua shebang option: " + std::string(parts[i]);
      return false;
    }
    std::string_view list = parts[i].substr(6);
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string_view name = list.substr(0, comma);
      bool known = false;
      for (const auto& [flag_name, flag] : kNames) {
        if (name == flag_name) {
          flags |= flag;
          known = true;
        }
      }
      if (!known) {
        error = "ERR Unexpected flag in script shebang: " + std::string(name);
        return false;
      }
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  skip = end;
  return true;
}

ScriptEngine::ScriptEngine(ScriptHost* host) : host_(host) {
  open();
  open_functions();
}

ScriptEngine::~ScriptEngine() {
  close();
  functions_.take_all();
  lua_close(fn_lua_);
}

void ScriptEngine::open() { lua_ = new_script_state(this); }

void ScriptEngine::close() {
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = nullptr;
}

void ScriptEngine::flush() {
  scripts_.clear();
  close();
  open();
}

size_t ScriptEngine::memory_bytes() const {
  return lua_ != nullptr ? static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNT, 0)) * 1024 : 0;
}

bool ScriptEngine::exists(std::string_view sha) const {
  return scripts_.count(common::lowercase(sha)) != 0;
}

bool ScriptEngine::compile(std::string_view body, const std::string& sha, std::string& error) {
  uint32_t flags = 0;
  size_t skip = 0;
  if (!parse_shebang(body, flags, skip, error)) return false;
  const std::string_view code = body.substr(skip);
  if (luaL_loadbuffer(lua_, code.data(), code.size(), "@user_script") != 0) {
    const char* msg = lua_tostring(lua_, -1);
    error = "ERR Error compiling script (new function): ";
    error += msg != nullptr ? msg : "";
    lua_pop(lua_, 1);
    return false;
  }
  lua_setfield(lua_, LUA_REGISTRYINDEX, ("f_" + sha).c_str());
  scripts_[sha] = Script{std::string(body), flags};
  return true;
}

bool read_numkeys(CommandContext& ctx, std::string_view not_a_number, int64_t& numkeys) {
  if (!parse_int64(ctx.argv[2], numkeys)) {
    ctx.reply.error(not_a_number);
    return false;
  }
  if (numkeys > static_cast<int64_t>(ctx.argv.size()) - 3) {
    ctx.reply.error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  if (numkeys < 0) {
    ctx.reply.error("ERR Number of keys can't be negative");
    return false;
  }
  return true;
}

std::string ScriptEngine::load(std::string_view body, std::string& error) {
  std::string sha = sha1_hex(body);
  if (scripts_.count(sha) != 0) return sha;
  if (!compile(body, sha, error)) return {};
  return sha;
}

void ScriptEngine::eval(CommandContext& ctx, bool by_sha, bool read_only) {
  // As Redis: a SHA1 of another length names no script, before anything else is looked at.
  if (by_sha && ctx.argv[1].size() != 40) {
    ctx.reply.error(kNoScript);
    return;
  }
  using ScriptDebug = ClientSession::ScriptDebug;
  const ScriptDebug debug =
      ctx.client != nullptr && !debugger_.active() ? ctx.client->script_debug() : ScriptDebug::kOff;
  if (debug != ScriptDebug::kOff) {
    if (by_sha) {
      ctx.reply.error("ERR Please use EVAL instead of EVALSHA for debugging");
    } else {
      debug_eval(ctx, read_only, debug == ScriptDebug::kSync);
    }
    return;
  }
  int64_t numkeys = 0;
  if (!read_numkeys(ctx, protocol::err::kNotInteger, numkeys)) return;
  std::string sha;
  if (by_sha) {
    sha = common::lowercase(ctx.argv[1]);
  } else {
    std::string error;
    sha = load(ctx.argv[1], error);
    if (sha.empty()) {
      ctx.reply.error(error);
      return;
    }
  }
  auto it = scripts_.find(sha);
  if (it == scripts_.end()) {
    ctx.reply.error(kNoScript);
    return;
  }
  // The script's own writes are logged as the commands it runs (effects replication), never
  // as EVAL itself.
  if (ctx.propagation != nullptr) ctx.propagation->suppress();
  const Script script = it->second;  // SCRIPT FLUSH from a script's busy loop must not free it
  run(ctx, sha, script, static_cast<size_t>(numkeys), read_only);
}

void ScriptEngine::debug_eval(CommandContext& ctx, bool read_only, bool sync) {
  if (!sync) {
    const int pid = host_->debug_fork(ctx.client);
    if (pid != 0) {
      // The node's side: the copy answers the client, whose connection is closed here.
      ctx.client->set_script_debug(ClientSession::ScriptDebug::kOff);
      if (pid < 0) {
        ctx.reply.error(std::string("ERR Fork() failed: can't run EVAL in debugging mode: ") +
                        std::strerror(errno));
      }
      return;
    }
  }
  debugger_.start(ctx.client->debug_link(), ctx.argv[1]);
  eval(ctx, false, read_only);
  if (!sync) {
    // The copy: the replies (this one and any before it) follow the session's end, and the
    // copy is done, closing the connection it carried on.
    debugger_.end(ctx.reply.buffer());
    ctx.client->debug_link()->close();
    ::_exit(0);
  }
  debugger_.end();
  // The session ends the connection once the script's reply is written, as in Redis.
  ctx.client->close_after_reply();
}

void ScriptEngine::run(CommandContext& ctx, const std::string& sha, const Script& script,
                       size_t numkeys, bool read_only) {
  // The request's arguments are copied: while a busy script lets the server read other
  // clients, the caller's input buffer may move.
  const std::vector<std::string> keys(ctx.argv.begin() + 3, ctx.argv.begin() + 3 + numkeys);
  const std::vector<std::string> args(ctx.argv.begin() + 3 + numkeys, ctx.argv.end());
  std::vector<std::string_view> key_views(keys.begin(), keys.end());
  std::vector<std::string_view> arg_views(args.begin(), args.end());
  set_script_arrays(lua_, key_views, arg_views);
  lua_getfield(lua_, LUA_REGISTRYINDEX, ("f_" + sha).c_str());
  call_script(ctx, lua_, 0, sha, script.flags, read_only);
}

void ScriptEngine::call_script(CommandContext& ctx, lua_State* L, int nargs,
                               const std::string& name, uint32_t flags, bool read_only) {
  const bool function = L == fn_lua_;
  // A script declared as one that may write (a shebang without no-writes, a function without
  // it) does not start while the node refuses writes; one without a shebang fails at its first
  // write instead (call_command).
  if (!read_only && (flags & (kScriptNoWrites | kScriptCompat)) == 0 && ctx.spec != nullptr) {
    if (const std::string refusal = host_->writes_refused(*ctx.spec, ctx.argv); !refusal.empty()) {
      lua_pop(L, nargs + 1);  // the function and its arguments
      ctx.reply.error(refusal);
      return;
    }
  }
  running_ = true;
  timed_out_ = false;
  kill_requested_ = false;
  wrote_ = false;
  read_only_ = read_only || (flags & kScriptNoWrites) != 0;
  running_name_ = function ? name : std::string();
  running_argv_.assign(ctx.argv.begin(), ctx.argv.end());
  start_ms_ = monotonic_ms();
  hook_calls_ = 0;
  script_resp_ = protocol::RespVersion::kResp2;
  client_resp_ = ctx.reply.version();
  if (debugger_.active()) {
    lua_sethook(L, debug_hook, LUA_MASKLINE | LUA_MASKCOUNT, kHookInstructions);
  } else {
    lua_sethook(L, hook, LUA_MASKCOUNT, kHookInstructions);
  }
  host_->script_begin(ctx.client);

  lua_pushcfunction(L, error_handler);
  const int handler = lua_gettop(L) - nargs - 1;
  lua_insert(L, handler);
  const int status = lua_pcall(L, nargs, 1, handler);
  lua_sethook(L, nullptr, 0, 0);
  const bool was_busy = timed_out_;
  running_ = false;
  timed_out_ = false;
  running_name_.clear();
  running_argv_.clear();
  if (status != 0) {
    std::string text;
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      const char* err = lua_tostring(L, -1);
      text = err != nullptr ? err : "ERR unknown error";
      lua_pop(L, 1);
      lua_getfield(L, -1, "source");
      lua_getfield(L, -2, "line");
      if (lua_isstring(L, -2) && lua_isnumber(L, -1)) {
        text += " script: " + name + ", on " + lua_tostring(L, -2) + ":" +
                std::to_string(static_cast<int64_t>(lua_tonumber(L, -1))) + ".";
      }
      lua_pop(L, 2);
    } else {
      const char* msg = lua_tostring(L, -1);
      text = "ERR Error running script f_" + name + ", " + (msg != nullptr ? msg : "");
    }
    lua_pop(L, 2);  // the error and the handler
    ctx.reply.error(text);
  } else {
    write_lua_value(L, ctx.reply, script_resp_);
    lua_pop(L, 1);  // the handler
  }
  host_->script_end(was_busy);
  lua_gc(L, LUA_GCSTEP, 1);
}

void ScriptEngine::begin_load(lua_State* L, FunctionLibrary* lib, bool timeout) {
  loading_ = lib;
  load_timeout_ = timeout;
  start_ms_ = monotonic_ms();
  lua_sethook(L, hook, LUA_MASKCOUNT, kHookInstructions);
}

void ScriptEngine::end_load(lua_State* L) {
  lua_sethook(L, nullptr, 0, 0);
  loading_ = nullptr;
}

uint64_t ScriptEngine::running_ms() const { return running_ ? monotonic_ms() - start_ms_ : 0; }

ScriptEngine::KillResult ScriptEngine::kill(bool force, bool eval) {
  if (!running_) return KillResult::kNotBusy;
  if (wrote_ && !force) return KillResult::kUnkillable;
  if (!force && eval == running_function()) return KillResult::kOtherKind;
  kill_requested_ = true;
  return KillResult::kKilled;
}

bool ScriptEngine::on_debug_line(lua_State* L, lua_Debug* ar) {
  bool stopped = false;
  const bool failed = debugger_.on_line(L, ar, static_cast<int64_t>(monotonic_ms() - start_ms_),
                                        busy_threshold_ms_, stopped);
  // The time the script waited for the debugger does not count.
  if (stopped) start_ms_ = monotonic_ms();
  return failed;
}

void ScriptEngine::on_hook(lua_State* L) {
  if (loading_ != nullptr) {
    // A library's code registering its functions: at most 500 ms (Redis's LOAD_TIMEOUT_MS).
    if (!load_timeout_ || monotonic_ms() - start_ms_ <= 500) return;
    lua_sethook(L, hook, LUA_MASKLINE, 0);
    push_error_table(L, "FUNCTION LOAD timeout");
    lua_error(L);
  }
  if (!kill_requested_) {
    const uint64_t elapsed = monotonic_ms() - start_ms_;
    if (busy_threshold_ms_ <= 0 || elapsed < static_cast<uint64_t>(busy_threshold_ms_)) return;
    const bool first = !timed_out_;
    timed_out_ = true;
    host_->script_busy(first);
    if (!kill_requested_) return;
  }
  // Killed: every further line fails too, so a pcall in the script cannot go on.
  lua_sethook(L, hook, LUA_MASKLINE, 0);
  push_error_table(L, "Script killed by user with SCRIPT KILL...");
  lua_error(L);
}

int ScriptEngine::lua_call_command(lua_State* L, bool raise) {
  // Lua errors are longjmps: no C++ object may be alive when one is raised.
  const bool failed = call_command(L);
  if (failed && raise) return lua_error(L);
  return 1;
}

bool ScriptEngine::call_command(lua_State* L) {
  const int argc = lua_gettop(L);
  const auto fail = [L](std::string_view error) {
    push_error_table(L, error);
    return true;
  };
  if (argc == 0) return fail("Please specify at least one argument for this redis lib call");
  std::vector<std::string> args;
  args.reserve(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; ++i) {
    const int type = lua_type(L, i);
    if (type == LUA_TNUMBER) {
      args.push_back(number_argument(lua_tonumber(L, i)));
    } else if (type == LUA_TSTRING) {
      args.emplace_back(lua_view(L, i));
    } else {
      return fail("Lua redis lib command arguments must be strings or integers");
    }
  }
  const std::vector<std::string_view> argv(args.begin(), args.end());
  if (debugger_.logging()) debugger_.log_command(argv);
  std::string resolve_error;
  const CommandSpec* spec = resolve_command(argv, resolve_error);
  if (spec == nullptr) {
    const bool arity = resolve_error.find("wrong number of arguments") != std::string::npos;
    return fail(arity ? "Wrong number of args calling Redis command from script"
                      : "Unknown Redis command called from script");
  }
  if (spec->flags & kNoscript) return fail("This Redis command is not allowed from script");
  if (spec->flags & kWrite) {
    if (read_only_) return fail("Write commands are not allowed from read-only scripts.");
    // Once the script has written it goes on: it cannot be stopped half done.
    if (!wrote_) {
      if (const std::string refusal = host_->writes_refused(*spec, argv); !refusal.empty()) {
        return fail("-" + refusal);
      }
    }
    wrote_ = true;
  }
  std::string out;
  protocol::ReplyWriter writer(out, script_resp_);
  host_->script_call(*spec, argv, writer);
  push_reply_bytes(L, out);
  if (debugger_.logging()) debugger_.log_reply(out);
  return !out.empty() && out[0] == '-';
}

}  // namespace ringkv::engine
