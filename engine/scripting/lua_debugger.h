// The Lua debugger of SCRIPT DEBUG (what redis-cli --ldb talks to), as Redis 7.0.15's ldb: a
// client that turned debugging on runs its next EVAL stopping at every line, and talks to the
// debugger over its own socket in a blocking dialogue of its own (commands as RESP arrays,
// answers as arrays of status lines) until the script ends: step, continue, breakpoints, list,
// print, eval, redis, trace, maxlen, abort, plus redis.debug() and redis.breakpoint() in the
// script. The engine runs the script; the server gives the socket and, in the default mode,
// forks a copy of the node to run it in (see ScriptHost::debug_fork).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct lua_State;
struct lua_Debug;

namespace ringkv::engine {

class DebugLink;

class LuaDebugger {
 public:
  // SCRIPT DEBUG YES/SYNC: the next session starts stepping, with no breakpoints (ldbEnable).
  void enable();
  // How long the debugger waits for a command before it takes the client for gone (the script
  // then runs on without stopping, as when the client closes); 0: as long as it takes, as
  // Redis. The node's idle client `timeout`: an idle SYNC session must not hold it forever.
  void set_idle_limit_ms(int64_t ms) { idle_limit_ms_ = ms; }
  // A session over `link` (the client's connection, which the debugger may block on) for the
  // script `source`.
  void start(DebugLink* link, std::string_view source);
  // Sends what is left of the log and the <endsession> mark, then `then` (the replies a forked
  // copy owes the client), and ends the session.
  void end(std::string_view then = {});
  bool active() const { return active_; }
  // Whether the script's redis.call()s are logged now (ldbIsEnabled: a step is being taken).
  bool logging() const { return active_ && step_; }

  // The line hook: stops where it should and runs the dialogue. `elapsed_ms` is how long the
  // script has run since it last stopped, `limit_ms` the busy threshold after which a script
  // that neither steps nor hits a breakpoint is stopped as an infinite loop. Returns true with
  // an error message pushed when the script must fail (abort, a broken dialogue); `stopped` is
  // set when it stopped (the caller restarts the script's clock).
  bool on_line(lua_State* L, lua_Debug* ar, int64_t elapsed_ms, int64_t limit_ms, bool& stopped);

  // What a script's redis.call logs while a step is taken: the command, then its RESP reply.
  void log_command(std::span<const std::string_view> argv);
  void log_reply(std::string_view resp);
  // An error table made while a step is taken (Redis's luaPushErrorBuff logs each).
  void log_error(std::string_view error) { log("<error> " + std::string(error)); }
  // redis.debug(...) and redis.breakpoint().
  int lua_debug(lua_State* L);
  int lua_breakpoint(lua_State* L);

 private:
  enum class Repl { kResume, kClosed, kFailed };

  void log(std::string entry) { logs_.push_back(std::move(entry)); }
  void log_with_maxlen(std::string entry);
  // The log as an array of status lines, followed by `then`, in one write.
  void send_logs(std::string_view then = {});
  // The next complete command of the dialogue into `argv`; false when more must be read (or
  // `protocol_error` when the bytes are no command).
  bool parse_command(std::vector<std::string>& argv, bool& protocol_error);
  Repl repl(lua_State* L);
  std::string_view source_line(int line) const;
  bool is_breakpoint(int line) const;
  void log_source_line(int line);
  void list(int around, int context);
  void print(lua_State* L, std::string_view name);
  void print_all(lua_State* L);
  void set_breakpoints(std::span<const std::string> argv);
  void eval(lua_State* L, std::span<const std::string> argv);
  void redis(lua_State* L, std::span<const std::string> argv);
  void trace(lua_State* L);
  void maxlen(std::span<const std::string> argv);
  void append_value(std::string& out, lua_State* L, int index, int level);

  DebugLink* link_ = nullptr;
  bool active_ = false;
  std::vector<std::string> logs_;
  std::vector<std::string> source_;
  std::vector<int> breakpoints_;  // kMaxBreakpoints slots, the first breakpoint_count_ in use
  int breakpoint_count_ = 0;
  bool step_ = false;
  bool lua_breakpoint_ = false;
  int current_line_ = 0;
  std::string input_;
  size_t maxlen_ = 256;
  bool maxlen_hint_sent_ = false;
  int64_t idle_limit_ms_ = 0;
};

// A RESP reply as the debugger shows it (Redis's ldbRedisProtocolToHuman): "+OK" and errors
// quoted, bulks quoted, nulls as NULL, arrays in brackets; consumed from the front of `resp`.
void append_human_reply(std::string& out, std::string_view& resp);

}  // namespace ringkv::engine
