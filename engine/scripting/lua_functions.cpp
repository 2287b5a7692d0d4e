// The ScriptEngine's functions (FUNCTION LOAD/DELETE/FLUSH/RESTORE, FCALL), after Redis 7.0's
// functions.c and function_lua.c: a library's code runs once, in the functions' own Lua state
// with only Redis's library API as globals, and registers its functions with
// redis.register_function; FCALL calls a function's callback with its keys and arguments as
// two tables.
#include <strings.h>

#include <lua.hpp>
#include <string>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/scripting/lua_convert.h"
#include "engine/scripting/script_engine.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kBadName =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
    "character long";

// A string argument of register_function (Lua strings and numbers, as lua_isstring).
bool lua_string_at(lua_State* L, int index, std::string& out) {
  if (!lua_isstring(L, index)) return false;
  out = lua_view(L, index);
  return true;
}

// The flags table of register_function: names of script flags.
bool read_flags(lua_State* L, int index, uint32_t& flags) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"no-writes", kScriptNoWrites},
      {"allow-oom", kScriptAllowOom},
      {"allow-stale", kScriptAllowStale},
      {"no-cluster", kScriptNoCluster},
      {"allow-cross-slot-keys", kScriptAllowCrossSlot}};
  bool ok = true;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    bool known = false;
    if (lua_type(L, -1) == LUA_TSTRING) {
      const std::string_view name = lua_tostring(L, -1);
      for (const auto& [flag_name, flag] : kNames) {
        if (equals_ignore_case(name, flag_name)) {
          flags |= flag;
          known = true;
        }
      }
    }
    lua_pop(L, 1);
    if (!known) ok = false;
  }
  return ok;
}

// Pushes {k1, k2, ...} made of argv[from, to).
void push_array(lua_State* L, std::span<const std::string_view> argv, size_t from, size_t to) {
  lua_createtable(L, static_cast<int>(to - from), 0);
  for (size_t i = from; i < to; ++i) {
    lua_pushlstring(L, argv[i].data(), argv[i].size());
    lua_rawseti(L, -2, static_cast<int>(i - from + 1));
  }
}

}  // namespace

void ScriptEngine::open_functions() { fn_lua_ = new_script_state(this, true); }

bool ScriptEngine::lua_register_function(lua_State* L) {
  const auto fail = [L](std::string_view error) {
    push_error_table(L, error);
    return false;
  };
  if (loading_ == nullptr) {
    return fail("redis.register_function can only be called on FUNCTION LOAD command");
  }
  const int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) return fail("wrong number of arguments to redis.register_function");
  FunctionDef def;
  bool have_name = false;
  int ref = LUA_NOREF;
  const auto fail_unref = [&](std::string_view error) {
    if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
    return fail(error);
  };
  if (argc == 2) {
    if (!lua_string_at(L, 1, def.name)) {
      return fail("first argument to redis.register_function must be a string");
    }
    if (!lua_isfunction(L, 2)) {
      return fail("second argument to redis.register_function must be a function");
    }
    lua_pushvalue(L, 2);
    ref = luaL_ref(L, LUA_REGISTRYINDEX);
    have_name = true;
  } else {
    if (!lua_istable(L, 1)) {
      return fail(
          "calling redis.register_function with a single argument is only applicable to Lua "
          "table (representing named arguments).");
    }
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        // Redis converts a number key to a string, which names no argument.
        const bool number = lua_type(L, -2) == LUA_TNUMBER;
        lua_pop(L, 2);
        return fail_unref(number ? "unknown argument given to redis.register_function"
                                 : "named argument key given to redis.register_function is not "
                                   "a string");
      }
      const std::string_view key = lua_tostring(L, -2);
      if (equals_ignore_case(key, "function_name")) {
        if (!lua_string_at(L, -1, def.name)) {
          lua_pop(L, 2);
          return fail_unref(
              "function_name argument given to redis.register_function must be a string");
        }
        have_name = true;
      } else if (equals_ignore_case(key, "description")) {
        std::string description;
        if (!lua_string_at(L, -1, description)) {
          lua_pop(L, 2);
          return fail_unref(
              "description argument given to redis.register_function must be a string");
        }
        def.description = std::move(description);
      } else if (equals_ignore_case(key, "callback")) {
        if (!lua_isfunction(L, -1)) {
          lua_pop(L, 2);
          return fail_unref(
              "callback argument given to redis.register_function must be a function");
        }
        if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
        ref = luaL_ref(L, LUA_REGISTRYINDEX);  // pops the value
        continue;
      } else if (equals_ignore_case(key, "flags")) {
        if (!lua_istable(L, -1)) {
          lua_pop(L, 2);
          return fail_unref(
              "flags argument to redis.register_function must be a table representing function "
              "flags");
        }
        if (!read_flags(L, lua_gettop(L), def.flags)) {
          lua_pop(L, 2);
          return fail_unref("unknown flag given");
        }
      } else {
        lua_pop(L, 2);
        return fail_unref("unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (!have_name) return fail_unref("redis.register_function must get a function name argument");
    if (ref == LUA_NOREF) return fail_unref("redis.register_function must get a callback argument");
  }
  if (!valid_function_name(def.name)) return fail_unref(kBadName);
  for (const FunctionDef& f : loading_->functions) {
    if (f.name == def.name) return fail_unref("Function already exists in the library");
  }
  def.ref = ref;
  loading_->functions.push_back(std::move(def));
  return true;
}

void ScriptEngine::release(FunctionLibrary& lib) {
  for (const FunctionDef& f : lib.functions) luaL_unref(fn_lua_, LUA_REGISTRYINDEX, f.ref);
  lib.functions.clear();
}

std::unique_ptr<FunctionLibrary> ScriptEngine::create_library(std::string_view code, bool timeout,
                                                              std::string& error) {
  LibraryMetadata md;
  if (!parse_library_metadata(code, md, error)) return nullptr;
  if (!valid_function_name(md.name)) {
    error = kBadName;
    return nullptr;
  }
  if (strcasecmp(md.engine.c_str(), "lua") != 0) {
    error = "Engine '" + md.engine + "' not found";
    return nullptr;
  }
  auto lib = std::make_unique<FunctionLibrary>();
  lib->name = md.name;
  lib->code = std::string(code);
  lua_State* L = fn_lua_;
  const std::string_view body = code.substr(md.body);
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_function") != 0) {
    const char* msg = lua_tostring(L, -1);
    error = std::string("Error compiling function: ") + (msg != nullptr ? msg : "");
    lua_pop(L, 1);
    return nullptr;
  }
  set_library_loading(L, true);
  begin_load(L, lib.get(), timeout);
  const int status = lua_pcall(L, 0, 0, 0);
  end_load(L);
  set_library_loading(L, false);
  if (status != 0) {
    std::string msg;
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      const char* err = lua_tostring(L, -1);
      msg = err != nullptr ? err : "";
      lua_pop(L, 1);
    } else {
      const char* err = lua_tostring(L, -1);
      msg = std::string("ERR ") + (err != nullptr ? err : "");
    }
    lua_pop(L, 1);
    error = "Error registering functions: " + msg;
    release(*lib);
    return nullptr;
  }
  if (lib->functions.empty()) {
    error = "No functions registered";
    return nullptr;
  }
  return lib;
}

std::string ScriptEngine::function_load(std::string_view code, bool replace, bool timeout,
                                        std::string& error) {
  std::unique_ptr<FunctionLibrary> lib = create_library(code, timeout, error);
  if (lib == nullptr) return {};
  const FunctionLibrary* old = functions_.find_library(lib->name);
  if (old != nullptr && !replace) {
    error = "Library '" + lib->name + "' already exists";
    release(*lib);
    return {};
  }
  for (const FunctionDef& f : lib->functions) {
    const FunctionDef* existing = functions_.find_function(f.name);
    if (existing != nullptr && existing->library != old) {
      error = "Function " + f.name + " already exists";
      release(*lib);
      return {};
    }
  }
  std::string name = lib->name;
  if (old != nullptr) release(*functions_.unlink(name));
  functions_.link(std::move(lib));
  return name;
}

bool ScriptEngine::function_delete(std::string_view library) {
  std::unique_ptr<FunctionLibrary> lib = functions_.unlink(library);
  if (lib == nullptr) return false;
  release(*lib);
  lua_gc(fn_lua_, LUA_GCCOLLECT, 0);
  return true;
}

void ScriptEngine::function_flush() {
  functions_.take_all();
  lua_close(fn_lua_);
  open_functions();
}

bool ScriptEngine::function_restore(std::string_view payload, RestorePolicy policy,
                                    std::string& error) {
  error.clear();
  std::vector<std::string> codes;
  if (!parse_function_payload(payload, codes, error)) return false;
  // The payload's libraries are created apart first: a payload that does not load changes
  // nothing.
  std::vector<std::unique_ptr<FunctionLibrary>> loaded;
  const auto drop_loaded = [&] {
    for (auto& lib : loaded) release(*lib);
  };
  for (const std::string& code : codes) {
    std::unique_ptr<FunctionLibrary> lib = create_library(code, false, error);
    if (lib == nullptr) {
      drop_loaded();
      return false;
    }
    for (const auto& other : loaded) {
      if (other->name == lib->name) error = "Library '" + lib->name + "' already exists";
      for (const FunctionDef& f : lib->functions) {
        for (const FunctionDef& g : other->functions) {
          if (equals_ignore_case(f.name, g.name)) error = "Function " + f.name + " already exists";
        }
      }
    }
    if (!error.empty()) {
      release(*lib);
      drop_loaded();
      return false;
    }
    loaded.push_back(std::move(lib));
  }
  if (policy == RestorePolicy::kFlush) {
    for (auto& lib : functions_.take_all()) release(*lib);
  }
  // Libraries this payload replaces, put back if it cannot be restored.
  std::vector<std::unique_ptr<FunctionLibrary>> replaced;
  const auto undo = [&] {
    for (auto& lib : replaced) functions_.link(std::move(lib));
    drop_loaded();
  };
  for (const auto& lib : loaded) {
    if (functions_.find_library(lib->name) == nullptr) continue;
    if (policy != RestorePolicy::kReplace) {
      error = "Library " + lib->name + " already exists";
      undo();
      return false;
    }
    replaced.push_back(functions_.unlink(lib->name));
  }
  for (const auto& lib : loaded) {
    for (const FunctionDef& f : lib->functions) {
      if (functions_.find_function(f.name) != nullptr) {
        error = "Function " + f.name + " already exists";
        undo();
        return false;
      }
    }
  }
  for (auto& lib : replaced) release(*lib);
  for (auto& lib : loaded) functions_.link(std::move(lib));
  return true;
}

void ScriptEngine::fcall(CommandContext& ctx, bool read_only) {
  const FunctionDef* fn = functions_.find_function(ctx.argv[1]);
  if (fn == nullptr) {
    ctx.reply.error("ERR Function not found");
    return;
  }
  int64_t numkeys = 0;
  if (!read_numkeys(ctx, "ERR Bad number of keys provided", numkeys)) return;
  if (read_only && (fn->flags & kScriptNoWrites) == 0) {
    ctx.reply.error("ERR Can not execute a script with write flag using *_ro command.");
    return;
  }
  // The function's own writes are logged as the commands it runs (effects replication).
  if (ctx.propagation != nullptr) ctx.propagation->suppress();
  lua_State* L = fn_lua_;
  const size_t keys_end = 3 + static_cast<size_t>(numkeys);
  lua_rawgeti(L, LUA_REGISTRYINDEX, fn->ref);
  push_array(L, ctx.argv, 3, keys_end);
  push_array(L, ctx.argv, keys_end, ctx.argv.size());
  // Copied: FUNCTION DELETE cannot run while the function does, but the name outlives it.
  const std::string name = fn->name;
  call_script(ctx, L, 2, name, fn->flags, read_only);
}

}  // namespace ringkv::engine
