// The Lua debugger (see lua_debugger.h), as Redis 7.0.15's ldb in eval.c: the same dialogue,
// texts, limits and quirks (a command's whole read buffer is dropped once it is parsed; a
// removed breakpoint moves the ones after it by bytes, not entries), so redis-cli --ldb works
// against ringkv as against redis-server.
#include "engine/scripting/lua_debugger.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>

#include "common/numbers.h"
#include "common/repr.h"
#include "engine/command.h"

namespace ringkv::engine {
namespace {

constexpr int kMaxBreakpoints = 64;
constexpr int kMaxValueDepth = LUA_MINSTACK / 2;
constexpr size_t kMaxInput = 1 << 20;

// C's atoi: leading blanks, a sign, the digits that follow; 0 for anything else.
int c_atoi(std::string_view s) {
  const std::string text(s);
  return std::atoi(text.c_str());
}

// Redis compares the command as a C string (strcasecmp).
bool equals_nocase(std::string_view a, std::string_view b) {
  return common::equals_ignore_case(common::c_string(a), b);
}

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

const char* kHelp[] = {
    "Redis Lua debugger help:",
    "[h]elp               Show this help.",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist               List source code around current line.",
    "[l]ist [line]        List source code around [line].",
    "                     line = 0 means: current position.",
    "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
    "                     to show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint              Show all the local variables.",
    "[p]rint <var>        Show the value of the specified variable.",
    "                     Can also show global vars KEYS and ARGV.",
    "[b]reak              Show all breakpoints.",
    "[b]reak <line>       Add a breakpoint to the specified line.",
    "[b]reak -<line>      Remove breakpoint from the specified line.",
    "[b]reak 0            Remove all breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[r]edis <cmd>        Execute a Redis command.",
    "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
    "                     Specifying zero as <len> means unlimited.",
    "[a]bort              Stop the execution of the script. In sync",
    "                     mode dataset changes will be retained.",
    "",
    "Debugger functions you can call from Lua scripts:",
    "redis.debug()        Produce logs in the debugger console.",
    "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
    "                     next line of code.",
};

// The header line of an aggregate or scalar reply: the text after its type byte, and the
// reply advanced past the line.
std::string_view take_line(std::string_view& resp) {
  const size_t cr = resp.find('\r');
  const std::string_view line =
      resp.substr(1, cr == std::string_view::npos ? resp.size() - 1 : cr - 1);
  resp.remove_prefix(cr == std::string_view::npos ? resp.size() : std::min(resp.size(), cr + 2));
  return line;
}

int64_t line_number(std::string_view text) { return common::parse_integer(text).value_or(0); }

}  // namespace

void append_human_reply(std::string& out, std::string_view& resp) {
  if (resp.empty()) return;
  const char type = resp[0];
  switch (type) {
    case ':':
      out += take_line(resp);
      return;
    case '$': {
      const int64_t len = line_number(take_line(resp));
      if (len == -1) {
        out += "NULL";
        return;
      }
      const size_t n = std::min(resp.size(), static_cast<size_t>(len));
      common::append_repr(out, resp.substr(0, n));
      resp.remove_prefix(std::min(resp.size(), n + 2));
      return;
    }
    case '+':
    case '-': {
      const size_t cr = resp.find('\r');
      common::append_repr(out, resp.substr(0, cr));
      resp.remove_prefix(cr == std::string_view::npos ? resp.size()
                                                      : std::min(resp.size(), cr + 2));
      return;
    }
    case '*':
    case '~': {
      const int64_t n = line_number(take_line(resp));
      if (type == '*' && n == -1) {
        out += "NULL";
        return;
      }
      out += type == '*' ? "[" : "~(";
      for (int64_t j = 0; j < n; ++j) {
        append_human_reply(out, resp);
        if (j != n - 1) out += ',';
      }
      out += type == '*' ? "]" : ")";
      return;
    }
    case '%': {
      const int64_t n = line_number(take_line(resp));
      out += '{';
      for (int64_t j = 0; j < n; ++j) {
        append_human_reply(out, resp);
        out += " => ";
        append_human_reply(out, resp);
        if (j != n - 1) out += ',';
      }
      out += '}';
      return;
    }
    case '_':
      take_line(resp);
      out += "(null)";
      return;
    case '#':
      out += resp.size() > 1 && resp[1] == 't' ? "#true" : "#false";
      take_line(resp);
      return;
    case ',':
      out += "(double) ";
      out += take_line(resp);
      return;
    default:
      // Redis shows nothing of the other RESP3 types (and does not move past them).
      return;
  }
}

void LuaDebugger::enable() {
  logs_.clear();
  step_ = true;
  breakpoints_.assign(kMaxBreakpoints, 0);
  breakpoint_count_ = 0;
  lua_breakpoint_ = false;
  input_.clear();
  maxlen_ = 256;
  maxlen_hint_sent_ = false;
}

void LuaDebugger::start(DebugLink* link, std::string_view source) {
  link_ = link;
  active_ = true;
  if (breakpoints_.size() != kMaxBreakpoints) breakpoints_.assign(kMaxBreakpoints, 0);
  while (!source.empty() && (source.back() == '\n' || source.back() == '\r')) {
    source.remove_suffix(1);
  }
  source_.clear();
  if (source.empty()) return;
  size_t at = 0;
  for (;;) {
    const size_t nl = source.find('\n', at);
    source_.emplace_back(source.substr(at, nl == std::string_view::npos ? nl : nl - at));
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
}

void LuaDebugger::end(std::string_view then) {
  log("<endsession>");
  send_logs(then);
  source_.clear();
  active_ = false;
  link_ = nullptr;
}

void LuaDebugger::log_with_maxlen(std::string entry) {
  bool trimmed = false;
  if (maxlen_ != 0 && entry.size() > maxlen_) {
    entry.resize(maxlen_);
    entry += " ...";
    trimmed = true;
  }
  log(std::move(entry));
  if (trimmed && !maxlen_hint_sent_) {
    maxlen_hint_sent_ = true;
    log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
  }
}

void LuaDebugger::send_logs(std::string_view then) {
  std::string proto = "*" + std::to_string(logs_.size()) + "\r\n";
  for (std::string& entry : logs_) {
    for (char& c : entry) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    proto += '+';
    proto += entry;
    proto += "\r\n";
  }
  logs_.clear();
  proto += then;
  link_->write_all(proto);
}

bool LuaDebugger::parse_command(std::vector<std::string>& argv, bool& protocol_error) {
  argv.clear();
  if (input_.empty()) return false;
  // Redis scans a C string: nothing after a NUL byte is seen, but the lengths count it.
  const std::string_view text(input_.c_str());
  const size_t star = text.find('*');
  if (star == std::string_view::npos) {
    protocol_error = true;
    return false;
  }
  size_t crlf = text.find("\r\n", star);
  if (crlf == std::string_view::npos) return false;
  const int count = c_atoi(text.substr(star + 1, crlf - star - 1));
  if (count <= 0 || count > 1024) {
    protocol_error = true;
    return false;
  }
  size_t p = crlf + 2;
  while (static_cast<int>(argv.size()) < count) {
    if (p >= text.size()) return false;
    if (text[p] != '$') {
      protocol_error = true;
      return false;
    }
    crlf = text.find("\r\n", p);
    if (crlf == std::string_view::npos) return false;
    const int len = c_atoi(text.substr(p + 1, crlf - p - 1));
    if (len <= 0 || len > 1024) {
      protocol_error = true;
      return false;
    }
    p = crlf + 2;
    if (p + static_cast<size_t>(len) + 2 > input_.size()) return false;
    argv.emplace_back(input_.substr(p, static_cast<size_t>(len)));
    p += static_cast<size_t>(len);
    if (p + 1 >= input_.size() || input_[p] != '\r' || input_[p + 1] != '\n') {
      protocol_error = true;
      return false;
    }
    p += 2;
  }
  return true;
}

LuaDebugger::Repl LuaDebugger::repl(lua_State* L) {
  std::vector<std::string> argv;
  for (;;) {
    bool protocol_error = false;
    while (!parse_command(argv, protocol_error)) {
      if (protocol_error) {
        lua_pushstring(L, "protocol error");
        return Repl::kFailed;
      }
      if (!link_->read_some(input_, idle_limit_ms_)) {
        // The client is gone (or idle past the limit): the script runs on without stopping.
        step_ = false;
        breakpoint_count_ = 0;
        return Repl::kClosed;
      }
      if (input_.size() > kMaxInput) {
        input_.clear();
        lua_pushstring(L, "max client buffer reached");
        return Repl::kFailed;
      }
    }
    // The whole buffer goes: what followed the command is dropped, as Redis drops it.
    input_.clear();
    const std::string_view cmd = argv[0];
    const size_t argc = argv.size();
    if (equals_nocase(cmd, "h") || equals_nocase(cmd, "help")) {
      for (const char* line : kHelp) log(line);
    } else if (equals_nocase(cmd, "s") || equals_nocase(cmd, "step") || equals_nocase(cmd, "n") ||
               equals_nocase(cmd, "next")) {
      step_ = true;
      return Repl::kResume;
    } else if (equals_nocase(cmd, "c") || equals_nocase(cmd, "continue")) {
      return Repl::kResume;
    } else if (equals_nocase(cmd, "t") || equals_nocase(cmd, "trace")) {
      trace(L);
    } else if (equals_nocase(cmd, "m") || equals_nocase(cmd, "maxlen")) {
      maxlen(argv);
    } else if (equals_nocase(cmd, "b") || equals_nocase(cmd, "break")) {
      set_breakpoints(argv);
    } else if (equals_nocase(cmd, "e") || equals_nocase(cmd, "eval")) {
      eval(L, argv);
    } else if (equals_nocase(cmd, "a") || equals_nocase(cmd, "abort")) {
      lua_pushstring(L, "script aborted for user request");
      return Repl::kFailed;
    } else if (argc > 1 && (equals_nocase(cmd, "r") || equals_nocase(cmd, "redis"))) {
      redis(L, argv);
    } else if (equals_nocase(cmd, "p") || equals_nocase(cmd, "print")) {
      if (argc == 2) {
        print(L, argv[1]);
      } else {
        print_all(L);
      }
    } else if (equals_nocase(cmd, "l") || equals_nocase(cmd, "list")) {
      int around = current_line_;
      int context = 5;
      if (argc > 1) {
        const int num = c_atoi(argv[1]);
        if (num > 0) around = num;
      }
      if (argc > 2) context = c_atoi(argv[2]);
      list(around, context);
    } else if (equals_nocase(cmd, "w") || equals_nocase(cmd, "whole")) {
      list(1, 1000000);
    } else {
      log("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
    }
    send_logs();
  }
}

bool LuaDebugger::on_line(lua_State* L, lua_Debug* ar, int64_t elapsed_ms, int64_t limit_ms,
                          bool& stopped) {
  stopped = false;
  lua_getstack(L, 0, ar);
  lua_getinfo(L, "Sl", ar);
  current_line_ = ar->currentline;
  const bool bp = is_breakpoint(current_line_) || lua_breakpoint_;
  bool timeout = false;
  // Lines of anything but the script (ldb_eval, the error handler) do not stop.
  if (std::strstr(ar->short_src, "user_script") == nullptr) return false;
  if (ar->event == LUA_HOOKCOUNT && !step_ && !bp) {
    if (elapsed_ms < (limit_ms > 0 ? limit_ms : 5000)) return false;
    timeout = true;
    step_ = true;
  }
  if (!step_ && !bp) return false;
  const char* reason = "step over";
  if (bp) {
    reason = lua_breakpoint_ ? "redis.breakpoint() called" : "break point";
  } else if (timeout) {
    reason = "timeout reached, infinite loop?";
  }
  step_ = false;
  lua_breakpoint_ = false;
  log(format("* Stopped at %d, stop reason = %s", current_line_, reason));
  log_source_line(current_line_);
  send_logs();
  const Repl result = repl(L);
  if (result == Repl::kFailed) return true;
  if (result == Repl::kClosed && timeout) {
    // Nobody is left to stop an infinite loop: the script fails instead.
    lua_pushstring(L, "timeout during Lua debugging with client closing connection");
    return true;
  }
  stopped = true;
  return false;
}

std::string_view LuaDebugger::source_line(int line) const {
  const int index = line - 1;
  if (index < 0 || index >= static_cast<int>(source_.size())) {
    return "<out of range source code line>";
  }
  return source_[static_cast<size_t>(index)];
}

bool LuaDebugger::is_breakpoint(int line) const {
  for (int j = 0; j < breakpoint_count_; ++j) {
    if (breakpoints_[static_cast<size_t>(j)] == line) return true;
  }
  return false;
}

void LuaDebugger::log_source_line(int line) {
  const bool bp = is_breakpoint(line);
  const bool current = current_line_ == line;
  const char* prefix = current && bp ? "->#" : current ? "-> " : bp ? "  #" : "   ";
  std::string text = format("%s%-3d ", prefix, line);
  text += source_line(line);
  log(std::move(text));
}

void LuaDebugger::list(int around, int context) {
  for (int j = 1; j <= static_cast<int>(source_.size()); ++j) {
    if (around != 0 && std::abs(around - j) > context) continue;
    log_source_line(j);
  }
}

void LuaDebugger::append_value(std::string& out, lua_State* L, int index, int level) {
  if (index < 0) index = lua_gettop(L) + index + 1;
  if (level++ == kMaxValueDepth) {
    out += "<max recursion level reached! Nested table?>";
    return;
  }
  const int type = lua_type(L, index);
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      common::append_repr(out, std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      out += lua_toboolean(L, index) ? "true" : "false";
      break;
    case LUA_TNUMBER:
      out += format("%g", static_cast<double>(lua_tonumber(L, index)));
      break;
    case LUA_TNIL:
      out += "nil";
      break;
    case LUA_TTABLE: {
      // Shown as an array when its keys are 1, 2, 3... in the order lua_next gives them.
      int expected = 1;
      bool is_array = true;
      std::string as_array;
      std::string as_map;
      lua_pushnil(L);
      while (lua_next(L, index)) {
        if (is_array && (lua_type(L, -2) != LUA_TNUMBER || lua_tonumber(L, -2) != expected)) {
          is_array = false;
        }
        append_value(as_array, L, -1, level);
        as_array += "; ";
        as_map += '[';
        append_value(as_map, L, -2, level);
        as_map += "]=";
        append_value(as_map, L, -1, level);
        as_map += "; ";
        lua_pop(L, 1);
        expected++;
      }
      std::string& shown = is_array ? as_array : as_map;
      if (!shown.empty()) shown.resize(shown.size() - 2);
      out += '{';
      out += shown;
      out += '}';
      break;
    }
    case LUA_TFUNCTION:
    case LUA_TUSERDATA:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: {
      const char* name = type == LUA_TFUNCTION   ? "function"
                         : type == LUA_TUSERDATA ? "userdata"
                         : type == LUA_TTHREAD   ? "thread"
                                                 : "light-userdata";
      out += format("\"%s@%p\"", name, lua_topointer(L, index));
      break;
    }
    default:
      out += "\"<unknown-lua-type>\"";
  }
}

void LuaDebugger::print(lua_State* L, std::string_view name) {
  const std::string wanted(name);
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
    const char* local = nullptr;
    for (int i = 1; (local = lua_getlocal(L, &ar, i)) != nullptr; ++i) {
      if (std::strcmp(wanted.c_str(), local) == 0) {
        std::string text = "<value> ";
        append_value(text, L, -1, 0);
        log_with_maxlen(std::move(text));
        lua_pop(L, 1);
        return;
      }
      lua_pop(L, 1);
    }
  }
  if (std::strcmp(wanted.c_str(), "ARGV") == 0 || std::strcmp(wanted.c_str(), "KEYS") == 0) {
    lua_getglobal(L, wanted.c_str());
    std::string text = "<value> ";
    append_value(text, L, -1, 0);
    log_with_maxlen(std::move(text));
    lua_pop(L, 1);
  } else {
    log("No such variable.");
  }
}

void LuaDebugger::print_all(lua_State* L) {
  lua_Debug ar;
  int vars = 0;
  if (lua_getstack(L, 0, &ar) != 0) {
    const char* name = nullptr;
    for (int i = 1; (name = lua_getlocal(L, &ar, i)) != nullptr; ++i) {
      if (std::strstr(name, "(*temporary)") == nullptr) {
        std::string text = format("<value> %s = ", name);
        append_value(text, L, -1, 0);
        log_with_maxlen(std::move(text));
        vars++;
      }
      lua_pop(L, 1);
    }
  }
  if (vars == 0) log("No local variables in the current context.");
}

void LuaDebugger::set_breakpoints(std::span<const std::string> argv) {
  if (argv.size() == 1) {
    if (breakpoint_count_ == 0) {
      log("No breakpoints set. Use 'b <line>' to add one.");
      return;
    }
    log(format("%d breakpoints set:", breakpoint_count_));
    for (int j = 0; j < breakpoint_count_; ++j)
      log_source_line(breakpoints_[static_cast<size_t>(j)]);
    return;
  }
  for (size_t j = 1; j < argv.size(); ++j) {
    const std::optional<int64_t> parsed = common::parse_integer(argv[j]);
    if (!parsed) {
      log("Invalid argument:'" + std::string(std::string_view(argv[j].c_str())) + "'");
      continue;
    }
    // Redis hands the long to functions taking an int.
    const int64_t line = *parsed;
    const int as_int = static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(line)));
    if (line == 0) {
      breakpoint_count_ = 0;
      log("All breakpoints removed.");
    } else if (line > 0) {
      if (breakpoint_count_ == kMaxBreakpoints) {
        log("Too many breakpoints set.");
      } else if (as_int > 0 && as_int <= static_cast<int>(source_.size()) &&
                 !is_breakpoint(as_int)) {
        breakpoints_[static_cast<size_t>(breakpoint_count_++)] = as_int;
        list(as_int, 1);
      } else {
        log("Wrong line number.");
      }
    } else {
      const int removed = static_cast<int>(static_cast<uint32_t>(0u - static_cast<uint64_t>(line)));
      bool found = false;
      for (int k = 0; k < breakpoint_count_; ++k) {
        if (breakpoints_[static_cast<size_t>(k)] != removed) continue;
        breakpoint_count_--;
        // Redis's memmove counts bytes, not entries: only that many bytes move up.
        std::memmove(breakpoints_.data() + k, breakpoints_.data() + k + 1,
                     static_cast<size_t>(breakpoint_count_ - k));
        found = true;
        break;
      }
      log(found ? "Breakpoint removed." : "No breakpoint in the specified line.");
    }
  }
}

void LuaDebugger::eval(lua_State* L, std::span<const std::string> argv) {
  std::string code;
  for (size_t j = 1; j < argv.size(); ++j) {
    if (j > 1) code += ' ';
    code += argv[j];
  }
  const std::string expr = "return " + code;
  // As an expression first, then as a statement.
  if (luaL_loadbuffer(L, expr.data(), expr.size(), "@ldb_eval") != 0) {
    lua_pop(L, 1);
    if (luaL_loadbuffer(L, code.data(), code.size(), "@ldb_eval") != 0) {
      log(std::string("<error> ") + lua_tostring(L, -1));
      lua_pop(L, 1);
      return;
    }
  }
  if (lua_pcall(L, 0, 1, 0) != 0) {
    const char* error = lua_tostring(L, -1);
    log(std::string("<error> ") + (error != nullptr ? error : ""));
    lua_pop(L, 1);
    return;
  }
  std::string text = "<retval> ";
  append_value(text, L, -1, 0);
  log_with_maxlen(std::move(text));
  lua_pop(L, 1);
}

void LuaDebugger::redis(lua_State* L, std::span<const std::string> argv) {
  const int argc = static_cast<int>(argv.size());
  if (!lua_checkstack(L, argc + 1)) {
    log_with_maxlen("<reply> ");
    return;
  }
  lua_getglobal(L, "redis");
  lua_pushstring(L, "call");
  lua_gettable(L, -2);
  for (size_t j = 1; j < argv.size(); ++j) lua_pushlstring(L, argv[j].data(), argv[j].size());
  // redis.call() logs the command and its reply while a step is taken.
  step_ = true;
  lua_pcall(L, argc - 1, 1, 0);
  step_ = false;
  lua_pop(L, 2);
}

void LuaDebugger::trace(lua_State* L) {
  lua_Debug ar;
  int level = 0;
  while (lua_getstack(L, level, &ar) != 0) {
    lua_getinfo(L, "Snl", &ar);
    if (std::strstr(ar.short_src, "user_script") != nullptr) {
      log(format("%s %s:", level == 0 ? "In" : "From", ar.name != nullptr ? ar.name : "top level"));
      log_source_line(ar.currentline);
    }
    level++;
  }
  if (level == 0) log("<error> Can't retrieve Lua stack.");
}

void LuaDebugger::maxlen(std::span<const std::string> argv) {
  if (argv.size() == 2) {
    int value = c_atoi(argv[1]);
    maxlen_hint_sent_ = true;  // the user knows about the command
    if (value != 0 && value <= 60) value = 60;
    maxlen_ = static_cast<size_t>(value);
  }
  if (maxlen_ != 0) {
    log(format("<value> replies are truncated at %d bytes.", static_cast<int>(maxlen_)));
  } else {
    log("<value> replies are unlimited.");
  }
}

void LuaDebugger::log_command(std::span<const std::string_view> argv) {
  std::string text = "<redis>";
  for (size_t j = 0; j < argv.size(); ++j) {
    if (j == 10) {
      // Redis's count is one short.
      text += format(" ... (%d more)", static_cast<int>(argv.size() - j - 1));
      break;
    }
    text += ' ';
    text += argv[j];
  }
  log(std::move(text));
}

void LuaDebugger::log_reply(std::string_view resp) {
  std::string text = "<reply> ";
  append_human_reply(text, resp);
  log_with_maxlen(std::move(text));
}

int LuaDebugger::lua_debug(lua_State* L) {
  if (!active_) return 0;
  int argc = lua_gettop(L);
  std::string text = format("<debug> line %d: ", current_line_);
  while (argc--) {
    append_value(text, L, -1 - argc, 0);
    if (argc != 0) text += ", ";
  }
  log(std::move(text));
  return 0;
}

int LuaDebugger::lua_breakpoint(lua_State* L) {
  lua_pushboolean(L, active_ ? 1 : 0);
  if (active_) lua_breakpoint_ = true;
  return 1;
}

}  // namespace ringkv::engine
