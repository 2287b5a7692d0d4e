// The Lua interpreter scripts run in, set up as Redis 7.0 sets up its own: the base, table,
// string, math and debug libraries plus cjson and bit (Debian's lua-cjson and lua-bitop, linked
// statically) and cmsgpack and struct (lua_libraries.h), no os/io/loadfile/dofile/print, a `redis`
// table, and read-only globals: reading a missing global or writing any global (or a library table)
// fails with Redis's error texts.
//
// Stock Lua 5.1 has no read-only tables (Redis patches its copy), so the globals scripts see are
// an empty proxy whose metatable reads from the real table and refuses writes, and each library
// table is replaced by such a proxy; rawset and setmetatable refuse the proxies.
#include <cstdint>
#include <cstring>
#include <lua.hpp>

#include "common/version.h"
#include "engine/scripting/lua_convert.h"
#include "engine/scripting/lua_libraries.h"
#include "engine/scripting/script_engine.h"

extern "C" {
int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

namespace ringkv::engine {
namespace {

constexpr const char* kEngineKey = "ringkv.engine";
constexpr const char* kReadonlyKey = "ringkv.readonly";  // proxy → the table behind it
constexpr const char* kReadonlyError = "Attempt to modify a readonly table";

// Raises Redis's error table {err="ERR msg"} (no position: Redis's luaPushError + luaError).
int raise_error(lua_State* L, const char* msg) {
  push_error_table(L, msg);
  return lua_error(L);
}

int redis_register_function(lua_State* L) {
  if (!engine_of(L)->lua_register_function(L)) return lua_error(L);
  return 0;
}

int redis_call(lua_State* L) { return engine_of(L)->lua_call_command(L, true); }
// redis.breakpoint() and redis.debug(): the Lua debugger's (no-ops outside a session).
int redis_breakpoint(lua_State* L) { return engine_of(L)->debugger().lua_breakpoint(L); }
int redis_debug(lua_State* L) { return engine_of(L)->debugger().lua_debug(L); }
int redis_pcall(lua_State* L) { return engine_of(L)->lua_call_command(L, false); }

int redis_sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) return raise_error(L, "wrong number of arguments");
  const std::string hex = sha1_hex(lua_view(L, 1));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

// redis.error_reply / redis.status_reply: {err=...} / {ok=...}.
int redis_error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || !lua_isstring(L, -1)) {
    push_error_table(L, "wrong number or type of arguments");
    return 1;
  }
  std::string err(lua_view(L, -1));
  if (err.empty() || err[0] != '-') err.insert(0, "-");
  push_error_table(L, err);
  return 1;
}

int redis_status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || !lua_isstring(L, -1)) {
    push_error_table(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int redis_log(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) return raise_error(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return raise_error(L, "First argument must be a number (log level).");
  const int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return raise_error(L, "Invalid debug level.");
  return 0;
}

int redis_setresp(lua_State* L) {
  if (lua_gettop(L) != 1) return raise_error(L, "redis.setresp() requires one argument.");
  const int resp = static_cast<int>(lua_tonumber(L, -1));
  if (resp != 2 && resp != 3) return raise_error(L, "RESP version must be 2 or 3.");
  engine_of(L)->set_script_resp(resp == 3 ? protocol::RespVersion::kResp3
                                          : protocol::RespVersion::kResp2);
  return 0;
}

int redis_set_repl(lua_State* L) {
  if (lua_gettop(L) != 1) return raise_error(L, "redis.set_repl() requires one argument.");
  const int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~3) != 0) {
    return raise_error(L,
                       "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                       "REPL_NONE.");
  }
  return 0;
}

int redis_replicate_commands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// The scripts' pcall, as Redis 7.0 wraps it: an error table with an `err` string comes back as
// that string.
int script_pcall(lua_State* L) {
  const int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

void set_function(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushstring(L, name);
  lua_pushcfunction(L, f);
  lua_settable(L, -3);
}

void set_number(lua_State* L, const char* name, lua_Number n) {
  lua_pushstring(L, name);
  lua_pushnumber(L, n);
  lua_settable(L, -3);
}

bool is_readonly(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  lua_getfield(L, LUA_REGISTRYINDEX, kReadonlyKey);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  const bool ro = lua_toboolean(L, -1) != 0;
  lua_pop(L, 2);
  return ro;
}

// A write through a proxy: refused, with the position of the script line.
int proxy_newindex(lua_State* L) { return luaL_error(L, kReadonlyError); }

constexpr const char* kLoadingKey = "ringkv.loading";
constexpr const char* kLibraryApiKey = "ringkv.library_api";

// Redis's error for a read of a global nobody set (its name at index 2).
int missing_global(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name != nullptr ? name : "?");
}

// A read of a strict proxy: the real value, or Redis's error for a missing global.
int strict_index(lua_State* L) {
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return lua_isnil(L, -1) ? missing_global(L) : 1;
}

// A read of the globals proxy. While a function library's code runs, the globals are Redis's
// library API (a `redis` table with register_function, log and the version) and nothing else.
int globals_index(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kLoadingKey);
  const bool loading = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  lua_pushvalue(L, 2);
  if (loading) {
    lua_getfield(L, LUA_REGISTRYINDEX, kLibraryApiKey);
    lua_insert(L, -2);
    lua_rawget(L, -2);
  } else {
    lua_rawget(L, lua_upvalueindex(1));
  }
  return lua_isnil(L, -1) ? missing_global(L) : 1;
}

int protected_rawset(lua_State* L) {
  if (is_readonly(L, 1)) {
    lua_pushstring(L, kReadonlyError);
    return lua_error(L);
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int protected_setmetatable(lua_State* L) {
  if (is_readonly(L, 1)) {
    lua_pushstring(L, kReadonlyError);
    return lua_error(L);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Replaces the table at index `real` by a proxy reading from it; pushes the proxy.
void push_proxy(lua_State* L, int real, lua_CFunction index) {
  lua_newtable(L);  // the proxy
  lua_newtable(L);  // its metatable
  lua_pushstring(L, "__index");
  if (index != nullptr) {
    lua_pushvalue(L, real);
    lua_pushcclosure(L, index, 1);
  } else {
    lua_pushvalue(L, real);
  }
  lua_settable(L, -3);
  set_function(L, "__newindex", proxy_newindex);
  lua_pushstring(L, "__metatable");
  lua_pushboolean(L, 0);
  lua_settable(L, -3);
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kReadonlyKey);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, real);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

// Lua 5.1 has no __pairs, so next() and pairs() of a proxy would see an empty table; Redis's
// read-only tables are real ones that iterate. So next() walks the table behind a proxy.
int script_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, kReadonlyKey);
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  if (lua_istable(L, -1)) lua_replace(L, 1);
  lua_settop(L, 2);
  if (lua_next(L, 1) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

// pairs(t): next, t, nil. The next it returns is its own copy, not the global one (as in Lua
// 5.1's base library, where pairs({}) ~= next).
int script_pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

void open_library(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (lua_istable(L, -1)) {
    lua_setglobal(L, name);
  } else {
    lua_pop(L, 1);
  }
}

void set_version(lua_State* L) {
  lua_pushstring(L, "REDIS_VERSION");
  lua_pushlstring(L, common::kRedisVersion.data(), common::kRedisVersion.size());
  lua_settable(L, -3);
  set_number(L, "REDIS_VERSION_NUM", common::kRedisVersionNum);
}

void set_log_levels(lua_State* L) {
  set_number(L, "LOG_DEBUG", 0);
  set_number(L, "LOG_VERBOSE", 1);
  set_number(L, "LOG_NOTICE", 2);
  set_number(L, "LOG_WARNING", 3);
}

void open_redis_table(lua_State* L, bool functions) {
  lua_newtable(L);
  set_function(L, "call", redis_call);
  set_function(L, "pcall", redis_pcall);
  set_function(L, "sha1hex", redis_sha1hex);
  set_function(L, "error_reply", redis_error_reply);
  set_function(L, "status_reply", redis_status_reply);
  set_function(L, "log", redis_log);
  set_function(L, "setresp", redis_setresp);
  set_function(L, "set_repl", redis_set_repl);
  set_function(L, "replicate_commands", redis_replicate_commands);
  if (!functions) {
    set_function(L, "breakpoint", redis_breakpoint);
    set_function(L, "debug", redis_debug);
  }
  set_log_levels(L);
  set_number(L, "REPL_NONE", 0);
  set_number(L, "REPL_AOF", 1);
  set_number(L, "REPL_SLAVE", 2);
  set_number(L, "REPL_REPLICA", 2);
  set_number(L, "REPL_ALL", 3);
  set_version(L);
  lua_setglobal(L, "redis");
}

// Redis's library API (functions_lua.c): the globals a library's code sees while it loads,
// {redis = strict proxy over {register_function, log, levels, version}}.
void open_library_api(lua_State* L) {
  lua_newtable(L);  // the API's globals
  const int api = lua_gettop(L);
  lua_newtable(L);  // its redis table
  const int redis = lua_gettop(L);
  set_function(L, "register_function", redis_register_function);
  set_function(L, "log", redis_log);
  set_log_levels(L);
  set_version(L);
  push_proxy(L, redis, strict_index);
  lua_setfield(L, api, "redis");
  lua_pop(L, 1);  // the real redis table (the proxy keeps it)
  lua_setfield(L, LUA_REGISTRYINDEX, kLibraryApiKey);
}

}  // namespace

ScriptEngine* engine_of(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kEngineKey);
  auto* engine = static_cast<ScriptEngine*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return engine;
}

lua_State* new_script_state(ScriptEngine* engine, bool functions) {
  lua_State* L = luaL_newstate();
  if (L == nullptr) return nullptr;
  lua_pushlightuserdata(L, engine);
  lua_setfield(L, LUA_REGISTRYINDEX, kEngineKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kReadonlyKey);

  lua_pushcfunction(L, luaopen_base);
  lua_pushstring(L, "");
  lua_call(L, 1, 0);
  open_library(L, LUA_TABLIBNAME, luaopen_table);
  open_library(L, LUA_STRLIBNAME, luaopen_string);
  open_library(L, LUA_MATHLIBNAME, luaopen_math);
  open_library(L, LUA_DBLIBNAME, luaopen_debug);
  open_library(L, "cjson", luaopen_cjson);
  open_library(L, "struct", open_struct);
  open_library(L, "cmsgpack", open_cmsgpack);
  open_library(L, "bit", luaopen_bit);
  for (const char* name : {"loadfile", "dofile", "print"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  open_redis_table(L, functions);

  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, protected_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_pushcfunction(L, protected_rawset);
  lua_setglobal(L, "rawset");
  lua_pushcfunction(L, script_pcall);
  lua_setglobal(L, "pcall");
  lua_pushcfunction(L, script_next);
  lua_setglobal(L, "next");
  lua_pushcfunction(L, script_next);
  lua_pushcclosure(L, script_pairs, 1);
  lua_setglobal(L, "pairs");

  // Library tables become read-only proxies.
  for (const char* name : {"redis", "string", "table", "math", "debug", "cjson", "struct",
                           "cmsgpack", "bit", "coroutine"}) {
    lua_getglobal(L, name);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    push_proxy(L, lua_gettop(L), nullptr);
    lua_setglobal(L, name);
    lua_pop(L, 1);
  }
  // Then the globals themselves: scripts (and C functions looking globals up) see the proxy.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int real = lua_gettop(L);
  push_proxy(L, real, globals_index);
  lua_pushstring(L, "_G");
  lua_pushvalue(L, -2);
  lua_rawset(L, real);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_setfield(L, LUA_REGISTRYINDEX, "ringkv.globals");
  if (functions) open_library_api(L);
  return L;
}

void set_library_loading(lua_State* L, bool loading) {
  lua_pushboolean(L, loading ? 1 : 0);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadingKey);
}

void set_script_arrays(lua_State* L, std::span<const std::string_view> keys,
                       std::span<const std::string_view> args) {
  lua_getfield(L, LUA_REGISTRYINDEX, "ringkv.globals");
  const auto set_array = [L](const char* name, std::span<const std::string_view> values) {
    lua_pushstring(L, name);
    lua_createtable(L, static_cast<int>(values.size()), 0);
    for (size_t i = 0; i < values.size(); ++i) {
      lua_pushlstring(L, values[i].data(), values[i].size());
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_rawset(L, -3);
  };
  set_array("KEYS", keys);
  set_array("ARGV", args);
  lua_pop(L, 1);
}

}  // namespace ringkv::engine
