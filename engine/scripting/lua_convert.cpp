// Reply ↔ Lua conversions (see lua_convert.h), after Redis 7.0's script_lua.c.
#include "engine/scripting/lua_convert.h"

#include <cstdlib>
#include <lua.hpp>
#include <string>

#include "common/numbers.h"
#include "engine/scripting/script_engine.h"

namespace ringkv::engine {
namespace {

void set_field_string(lua_State* L, const char* field, std::string_view value) {
  lua_pushstring(L, field);
  lua_pushlstring(L, value.data(), value.size());
  lua_settable(L, -3);
}

// Pushes {field=<the value on top of the stack>}, consuming that value.
void wrap_in_field(lua_State* L, const char* field) {
  lua_newtable(L);
  lua_pushstring(L, field);
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  lua_remove(L, -2);
}

// While the debugger takes a step, each error table a script gets is logged, as Redis's
// luaPushErrorBuff logs it: `error` as it was given ("-CODE msg" or a bare message).
void log_error_table(lua_State* L, std::string_view error) {
  ScriptEngine* engine = engine_of(L);
  if (engine != nullptr && engine->debugger().logging()) engine->debugger().log_error(error);
}

// Pushes table[field] of the table on top of the stack when it has type `type` (true), else
// pushes nothing (false).
bool push_field(lua_State* L, const char* field, int type) {
  lua_pushstring(L, field);
  lua_rawget(L, -2);
  if (lua_type(L, -1) == type) return true;
  lua_pop(L, 1);
  return false;
}

// A reply text with its CR/LF made spaces, as status and big-number replies are written.
std::string single_line(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

std::string_view lua_view(lua_State* L, int index) {
  size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  return s == nullptr ? std::string_view{} : std::string_view(s, len);
}

void push_error_table(lua_State* L, std::string_view error) {
  log_error_table(L, error);
  std::string code = "ERR";
  std::string_view msg = error;
  if (!error.empty() && error[0] == '-') {
    const size_t space = error.find(' ');
    if (space == std::string_view::npos) {
      msg = error.substr(1);
    } else {
      code.assign(error.substr(1, space - 1));
      msg = error.substr(space + 1);
    }
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.remove_prefix(1);
  lua_newtable(L);
  set_field_string(L, "err", code + " " + std::string(msg));
}

void push_reply(lua_State* L, const protocol::ReplyValue& v) {
  if (!lua_checkstack(L, 5)) {
    lua_pushnil(L);
    return;
  }
  switch (v.type) {
    case ':':
      lua_pushnumber(L, static_cast<lua_Number>(v.integer));
      return;
    case '$':
      if (v.null) {
        lua_pushboolean(L, 0);
      } else {
        lua_pushlstring(L, v.text.data(), v.text.size());
      }
      return;
    case '+':
      lua_newtable(L);
      set_field_string(L, "ok", v.text);
      return;
    case '-':
      log_error_table(L, "-" + std::string(v.text));
      lua_newtable(L);
      set_field_string(L, "err", v.text);
      return;
    case '_':
      lua_pushnil(L);
      return;
    case '#':
      lua_pushboolean(L, v.integer != 0);
      return;
    case ',': {
      const std::string text(v.text);
      lua_pushnumber(L, std::strtod(text.c_str(), nullptr));
      wrap_in_field(L, "double");
      return;
    }
    case '(':
      lua_pushlstring(L, v.text.data(), v.text.size());
      wrap_in_field(L, "big_number");
      return;
    case '=': {
      lua_newtable(L);
      std::string_view format = v.text.substr(0, 3);
      std::string_view text = v.text.size() >= 4 ? v.text.substr(4) : std::string_view{};
      set_field_string(L, "format", format);
      set_field_string(L, "string", text);
      wrap_in_field(L, "verbatim_string");
      return;
    }
    case '%': {
      lua_newtable(L);
      for (size_t i = 0; i + 1 < v.elements.size(); i += 2) {
        push_reply(L, v.elements[i]);
        push_reply(L, v.elements[i + 1]);
        lua_settable(L, -3);
      }
      wrap_in_field(L, "map");
      return;
    }
    case '~': {
      lua_newtable(L);
      for (const auto& e : v.elements) {
        push_reply(L, e);
        lua_pushboolean(L, 1);
        lua_settable(L, -3);
      }
      wrap_in_field(L, "set");
      return;
    }
    case '*':
    case '>':
      if (v.null) {
        lua_pushboolean(L, 0);
        return;
      }
      lua_newtable(L);
      for (size_t i = 0; i < v.elements.size(); ++i) {
        lua_pushnumber(L, static_cast<lua_Number>(i + 1));
        push_reply(L, v.elements[i]);
        lua_settable(L, -3);
      }
      return;
    default:
      lua_pushnil(L);
  }
}

void push_reply_bytes(lua_State* L, std::string_view bytes) {
  protocol::ReplyValue v;
  if (!protocol::decode_reply(bytes, v)) {
    push_error_table(L, "ERR malformed reply of a command called from script");
    return;
  }
  push_reply(L, v);
}

void write_lua_value(lua_State* L, protocol::ReplyWriter& w, protocol::RespVersion script_resp) {
  if (!lua_checkstack(L, 4)) {
    lua_pop(L, 1);
    w.error("ERR reached lua stack limit");
    return;
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING:
      w.bulk(lua_view(L, -1));
      break;
    case LUA_TBOOLEAN:
      if (script_resp == protocol::RespVersion::kResp2) {
        if (lua_toboolean(L, -1)) {
          w.integer(1);
        } else {
          w.null();
        }
      } else {
        w.boolean(lua_toboolean(L, -1) != 0);
      }
      break;
    case LUA_TNUMBER:
      // As Redis's (long long) cast on x86-64: out of range and NaN give INT64_MIN.
      w.integer(common::x86_to_int64(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE: {
      if (push_field(L, "err", LUA_TSTRING)) {
        w.error(lua_view(L, -1));
        lua_pop(L, 2);
        return;
      }
      if (push_field(L, "ok", LUA_TSTRING)) {
        w.simple(single_line(lua_view(L, -1)));
        lua_pop(L, 2);
        return;
      }
      if (push_field(L, "double", LUA_TNUMBER)) {
        w.double_value(lua_tonumber(L, -1));
        lua_pop(L, 2);
        return;
      }
      if (push_field(L, "big_number", LUA_TSTRING)) {
        const std::string text = single_line(lua_view(L, -1));
        if (w.version() == protocol::RespVersion::kResp3) {
          w.raw("(" + text + "\r\n");
        } else {
          w.bulk(text);
        }
        lua_pop(L, 2);
        return;
      }
      if (push_field(L, "verbatim_string", LUA_TTABLE)) {
        lua_pushstring(L, "format");
        lua_rawget(L, -2);
        lua_pushstring(L, "string");
        lua_rawget(L, -3);
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
          w.verbatim(lua_view(L, -1), lua_view(L, -2));
          lua_pop(L, 4);
          return;
        }
        lua_pop(L, 3);
      }
      if (push_field(L, "map", LUA_TTABLE)) {
        const size_t token = w.begin_deferred();
        size_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pushvalue(L, -2);
          write_lua_value(L, w, script_resp);  // the key
          write_lua_value(L, w, script_resp);  // the value
          n++;
        }
        w.end_deferred_map(token, n);
        lua_pop(L, 2);
        return;
      }
      if (push_field(L, "set", LUA_TTABLE)) {
        const size_t token = w.begin_deferred();
        size_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pop(L, 1);
          lua_pushvalue(L, -1);
          write_lua_value(L, w, script_resp);
          n++;
        }
        w.end_deferred_set(token, n);
        lua_pop(L, 2);
        return;
      }
      const size_t token = w.begin_deferred();
      size_t n = 0;
      for (int j = 1;; ++j) {
        lua_pushnumber(L, j);
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TNIL) {
          lua_pop(L, 1);
          break;
        }
        write_lua_value(L, w, script_resp);
        n++;
      }
      w.end_deferred_array(token, n);
      break;
    }
    default:
      w.null();
  }
  lua_pop(L, 1);
}

}  // namespace ringkv::engine
