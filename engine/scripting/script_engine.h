// ScriptEngine: the Lua scripts of a node (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT ...), as
// Redis 7.0 runs them: one Lua 5.1 interpreter with Redis's sandbox (lua_sandbox.cpp), a cache
// of compiled scripts keyed by their SHA1, shebang flags, the conversions of replies both ways
// (lua_convert.h) and the busy-script rules (busy-reply-threshold, SCRIPT KILL).
//
// The commands a script calls run through the server's command pipeline: the engine checks what
// Redis checks inside scripts (unknown command, arity, noscript, writes from read-only scripts)
// and hands the command to its ScriptHost.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/command.h"
#include "engine/scripting/function_library.h"
#include "engine/scripting/lua_debugger.h"
#include "protocol/reply_writer.h"

struct lua_State;
struct lua_Debug;

namespace ringkv::engine {

// What runs a script's commands and keeps the node responsive while a script is busy
// (implemented by server/).
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  // A script is about to run for `client` (null in tests without clients).
  virtual void script_begin(ClientSession* client) = 0;
  // Runs one command a script called (its row resolved and arity-checked), writing its reply
  // to `reply` (whose RESP version is the script's, see redis.setresp).
  virtual void script_call(const CommandSpec& spec, std::span<const std::string_view> argv,
                           protocol::ReplyWriter& reply) = 0;
  // Called from the script's instruction hook once it has run longer than the busy threshold,
  // and then again every few thousand instructions: the server answers other clients (-BUSY,
  // SCRIPT KILL, SHUTDOWN NOSAVE). `first` is true on the first call of a script.
  virtual void script_busy(bool first) = 0;
  // Why the node refuses the write `argv` now (the error reply's text: Redis's MISCONF or
  // NOREPLICAS), or "". Asked with the EVAL or FCALL of a script that may write, which then does
  // not start, and with the first write command of a script.
  virtual std::string writes_refused(const CommandSpec& /*spec*/,
                                     std::span<const std::string_view> /*argv*/) {
    return {};
  }
  // The script ended (its reply is written); `was_busy`: it had passed the busy threshold.
  virtual void script_end(bool was_busy) = 0;
  // SCRIPT DEBUG YES: `client`'s EVAL is debugged in a copy of the node, whose changes are
  // thrown away. Forks: the node closes the client's connection (the copy answers it) and gets
  // the copy's pid; the copy gets 0, with every descriptor but the client's socket closed. -1
  // (errno set) when fork() failed.
  virtual int debug_fork(ClientSession* /*client*/) { return -1; }
};

// Script flags (shebang "#!lua flags=..."), as Redis names them.
enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1u << 0,        // "no-writes"
  kScriptAllowOom = 1u << 1,        // "allow-oom"
  kScriptAllowStale = 1u << 2,      // "allow-stale"
  kScriptNoCluster = 1u << 3,       // "no-cluster"
  kScriptAllowCrossSlot = 1u << 4,  // "allow-cross-slot-keys"
  kScriptCompat = 1u << 5,          // no shebang: Redis's "eval compatibility mode"
};

// Parses a script's shebang line, if any. Returns false with Redis's error text in `error`;
// otherwise sets `flags` and `skip` (the length of the shebang line, newline excluded, which is
// not compiled).
bool parse_shebang(std::string_view body, uint32_t& flags, size_t& skip, std::string& error);

// The -BUSY error other clients get while a script runs past the threshold: it names FUNCTION
// KILL while a function runs, SCRIPT KILL while an EVAL does.
std::string_view busy_error(bool function);
// The numkeys argument of EVAL and FCALL (argv[2]), checked as Redis checks it; false after
// replying with the error (`not_a_number` when it is no integer).
bool read_numkeys(CommandContext& ctx, std::string_view not_a_number, int64_t& numkeys);

// The lowercase hex SHA1 of `data` (redis.sha1hex, script names).
std::string sha1_hex(std::string_view data);

class ScriptEngine {
 public:
  explicit ScriptEngine(ScriptHost* host);
  ~ScriptEngine();
  ScriptEngine(const ScriptEngine&) = delete;
  ScriptEngine& operator=(const ScriptEngine&) = delete;

  // EVAL/EVALSHA (by_sha) and their _RO forms (read_only): ctx.argv is the command with the
  // script (or SHA1), numkeys, keys and arguments; writes the script's reply to ctx.reply.
  void eval(CommandContext& ctx, bool by_sha, bool read_only);
  // SCRIPT LOAD: compiles and caches `body`; returns its SHA1, or "" with the error reply text.
  std::string load(std::string_view body, std::string& error);
  bool exists(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every script (and starts a fresh interpreter).
  void flush();

  enum class KillResult { kNotBusy, kUnkillable, kKilled, kOtherKind };
  // SCRIPT KILL (`eval`) / FUNCTION KILL: stops the running script if it has not written and is
  // of that kind (kOtherKind: a function for SCRIPT KILL, an EVAL for FUNCTION KILL). `force`
  // (SHUTDOWN NOSAVE) stops whatever runs, even if it has written.
  KillResult kill(bool force = false, bool eval = true);
  // A script is running and has passed the busy threshold: other commands get -BUSY.
  bool busy() const { return running_ && timed_out_; }
  bool running() const { return running_; }
  // The running script is a function (FCALL), not an EVAL.
  bool running_function() const { return running_ && !running_name_.empty(); }

  // Functions (lua_functions.cpp). FUNCTION LOAD [REPLACE]: returns the library's name, or ""
  // with Redis's error text (without "ERR ") in `error`. `timeout`: the 500 ms limit on running
  // the library's code (FUNCTION LOAD), not applied when restoring.
  std::string function_load(std::string_view code, bool replace, bool timeout, std::string& error);
  // FUNCTION DELETE: false when there is no such library.
  bool function_delete(std::string_view library);
  // FUNCTION FLUSH: forgets every library.
  void function_flush();
  // FUNCTION RESTORE with its policy: false with Redis's error text (without "ERR ").
  enum class RestorePolicy { kAppend, kReplace, kFlush };
  bool function_restore(std::string_view payload, RestorePolicy policy, std::string& error);
  const FunctionLibraries& functions() const { return functions_; }
  // FCALL / FCALL_RO: ctx.argv is the command, function name, numkeys, keys and arguments.
  void fcall(CommandContext& ctx, bool read_only);
  // FUNCTION STATS's running_script: the running function's name, command and milliseconds.
  const std::string& running_name() const { return running_name_; }
  const std::vector<std::string>& running_argv() const { return running_argv_; }
  uint64_t running_ms() const;
  // redis.register_function, called by the Lua library: registers the function described by
  // the arguments on the Lua stack in the library being loaded; false with an error table
  // pushed.
  bool lua_register_function(lua_State* L);

  // busy-reply-threshold (lua-time-limit), milliseconds; 0 or less: never busy.
  void set_busy_threshold_ms(int64_t ms) { busy_threshold_ms_ = ms; }
  int64_t busy_threshold_ms() const { return busy_threshold_ms_; }
  size_t script_count() const { return scripts_.size(); }
  // Bytes of the cached scripts' bodies and SHA1 names (INFO used_memory_scripts_eval).
  size_t script_bytes() const {
    size_t n = 0;
    for (const auto& [sha, script] : scripts_) n += sha.size() + script.body.size();
    return n;
  }
  size_t memory_bytes() const;

  // Called by the Lua library (lua_sandbox.cpp): one redis.call/redis.pcall with the
  // arguments on the Lua stack. Returns what the C function returns.
  int lua_call_command(lua_State* L, bool raise);
  // redis.setresp.
  void set_script_resp(protocol::RespVersion v) { script_resp_ = v; }
  // The instruction hook: checks the time limit and the kill request.
  void on_hook(lua_State* L);
  // The line hook of a script being debugged; true with an error pushed when it must fail.
  bool on_debug_line(lua_State* L, lua_Debug* ar);
  // SCRIPT DEBUG's debugger (one per node, as Redis's).
  LuaDebugger& debugger() { return debugger_; }

 private:
  struct Script {
    std::string body;
    uint32_t flags = 0;
  };

  void open();
  void close();
  // Compiles `body` as the function registered under "f_<sha>"; returns false with the error
  // reply text.
  bool compile(std::string_view body, const std::string& sha, std::string& error);
  // redis.call's work: pushes the reply (or an error table); returns whether it is an error.
  bool call_command(lua_State* L);
  void run(CommandContext& ctx, const std::string& sha, const Script& script, size_t numkeys,
           bool read_only);
  // EVAL of a client that turned SCRIPT DEBUG on: the script runs with the debugger on the
  // client's socket, in a forked copy of the node (`sync` false) or in the node itself.
  void debug_eval(CommandContext& ctx, bool read_only, bool sync);
  // Calls what is pushed on L's stack (the function and `nargs` arguments) as the running
  // script named `name` (its SHA1 or function name), writing its reply or error to ctx.reply.
  void call_script(CommandContext& ctx, lua_State* L, int nargs, const std::string& name,
                   uint32_t flags, bool read_only);
  // Compiles and runs a library's code, collecting the functions it registers.
  std::unique_ptr<FunctionLibrary> create_library(std::string_view code, bool timeout,
                                                  std::string& error);
  void release(FunctionLibrary& lib);
  // Around running a library's code: the load clock and hook (on_hook's timeout).
  void begin_load(lua_State* L, FunctionLibrary* lib, bool timeout);
  void end_load(lua_State* L);
  void open_functions();

  ScriptHost* host_;
  LuaDebugger debugger_;
  lua_State* lua_ = nullptr;
  std::unordered_map<std::string, Script> scripts_;
  // Functions live in an interpreter of their own, as in Redis (SCRIPT FLUSH keeps them).
  lua_State* fn_lua_ = nullptr;
  FunctionLibraries functions_;
  FunctionLibrary* loading_ = nullptr;  // the library whose code runs now (FUNCTION LOAD)
  bool load_timeout_ = false;
  int64_t busy_threshold_ms_ = 5000;

  // The script running now.
  bool running_ = false;
  bool timed_out_ = false;
  bool kill_requested_ = false;
  bool wrote_ = false;
  bool read_only_ = false;
  std::string running_name_;  // the function running (empty for an EVAL)
  std::vector<std::string> running_argv_;
  uint64_t start_ms_ = 0;
  uint64_t hook_calls_ = 0;
  protocol::RespVersion script_resp_ = protocol::RespVersion::kResp2;
  protocol::RespVersion client_resp_ = protocol::RespVersion::kResp2;
};

// Lua interpreter set-up (lua_sandbox.cpp): a new state with the libraries Redis loads, the
// `redis` table bound to `engine`, and the globals protected as Redis protects them. For
// `functions`, the state also has redis.register_function and, while a library's code runs
// (set_library_loading), globals that are only the `redis` table of Redis's library API.
lua_State* new_script_state(ScriptEngine* engine, bool functions = false);
// The engine a state belongs to.
ScriptEngine* engine_of(lua_State* L);
void set_library_loading(lua_State* L, bool loading);
// Makes KEYS and ARGV the given arrays (on the protected globals).
void set_script_arrays(lua_State* L, std::span<const std::string_view> keys,
                       std::span<const std::string_view> args);

}  // namespace ringkv::engine
