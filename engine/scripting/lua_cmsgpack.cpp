// The `cmsgpack` library of the script sandbox: MessagePack encoding and decoding of Lua values
// with the API and the exact choices of lua-cmsgpack 0.4.0, the copy redis-server 7.0 embeds.
// Scripts store these bytes in keys and other clients decode them, so every byte counts: integral
// numbers take the smallest integer form, other numbers float32 when that loses nothing, strings
// use fixstr/str8/str16/str32, and a table is an array only when its keys are exactly 1..n.
//
// The decoder accepts what that version accepts (no bin, no ext: "Bad data format in input.")
// and walks the Lua stack the way it does, so the stack-overflow errors of deeply nested or very
// long input come at the same depth with the same text.
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>
#include <lua.hpp>
#include <string>

#include "engine/scripting/lua_libraries.h"

namespace ringkv::engine {

namespace {

// Deeper tables are written as nil: the encoder survives tables that contain themselves.
constexpr int kMaxNesting = 16;

void append_be(std::string& out, uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// An array or map header: the fix form under 16, else 16 bits (`type16`), else 32 (type16 + 1).
void append_container_header(std::string& out, uint64_t n, unsigned fix, unsigned type16) {
  if (n <= 15) {
    out.push_back(static_cast<char>(fix | n));
  } else if (n <= 0xffff) {
    out.push_back(static_cast<char>(type16));
    append_be(out, n, 2);
  } else {
    out.push_back(static_cast<char>(type16 + 1));
    append_be(out, n, 4);
  }
}

// A double that converts to int64_t and back unchanged (0.4.0's IS_INT64_EQUIVALENT).
bool is_int64_equivalent(double d) {
  return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && std::trunc(d) == d;
}

// A positive integral key that fits an int (0.4.0 counts array keys in an int).
bool is_array_index(double d) { return d > 0 && d <= INT_MAX && std::trunc(d) == d; }

void encode_value(lua_State* L, std::string& out, int level);

// Keys exactly 1..n, all numbers: the table encodes as an array.
bool table_is_array(lua_State* L) {
  const int top = lua_gettop(L);
  int count = 0;
  int max = 0;
  luaL_checkstack(L, 2, "in function table_is_an_array");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER || !is_array_index(lua_tonumber(L, -1))) {
      lua_settop(L, top);
      return false;
    }
    const int index = static_cast<int>(lua_tonumber(L, -1));
    if (index > max) max = index;
    ++count;
  }
  lua_settop(L, top);
  return max == count;
}

void encode_array(lua_State* L, std::string& out, int level) {
  const size_t len = lua_objlen(L, -1);
  msgpack_append_array_header(out, len);
  luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
  for (size_t i = 1; i <= len; ++i) {
    lua_pushnumber(L, static_cast<lua_Number>(i));
    lua_gettable(L, -2);
    encode_value(L, out, level + 1);
  }
}

void encode_map(lua_State* L, std::string& out, int level) {
  size_t len = 0;
  luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    ++len;
  }
  msgpack_append_map_header(out, len);
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pushvalue(L, -2);  // the key again: encoding pops it, lua_next needs the original
    encode_value(L, out, level + 1);
    encode_value(L, out, level + 1);
  }
}

// Encodes the value on top of the stack and pops it.
void encode_value(lua_State* L, std::string& out, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      msgpack_append_str_header(out, len);
      out.append(s, len);
      break;
    }
    case LUA_TBOOLEAN:
      out.push_back(static_cast<char>(lua_toboolean(L, -1) != 0 ? 0xc3 : 0xc2));
      break;
    case LUA_TNUMBER: {
      const lua_Number n = lua_tonumber(L, -1);
      if (is_int64_equivalent(n)) {
        msgpack_append_int(out, static_cast<int64_t>(lua_tointeger(L, -1)));
      } else {
        msgpack_append_double(out, n);
      }
      break;
    }
    case LUA_TTABLE:
      if (table_is_array(L)) {
        encode_array(L, out, level);
      } else {
        encode_map(L, out, level);
      }
      break;
    default:  // nil, and what MessagePack cannot carry (functions, userdata, threads)
      out.push_back(static_cast<char>(0xc0));
      break;
  }
  lua_pop(L, 1);
}

int mp_pack(lua_State* L) {
  const int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  if (lua_checkstack(L, nargs) == 0) {
    return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  }
  std::string out;
  for (int i = 1; i <= nargs; ++i) {
    luaL_checkstack(L, 1, "in function mp_check");
    lua_pushvalue(L, i);
    encode_value(L, out, 0);
    lua_pushlstring(L, out.data(), out.size());
    out.clear();
  }
  lua_concat(L, nargs);
  return 1;
}

enum class CursorError { kNone, kEof, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  CursorError err = CursorError::kNone;

  // True when `n` more bytes are there; otherwise marks the input truncated.
  bool need(size_t n) {
    if (left >= n) return true;
    err = CursorError::kEof;
    return false;
  }
  void consume(size_t n) {
    p += n;
    left -= n;
  }
  uint64_t be(size_t offset, int bytes) const {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | p[offset + i];
    return v;
  }
};

void decode_value(lua_State* L, Cursor& c);

void decode_array(lua_State* L, Cursor& c, size_t len) {
  lua_newtable(L);
  luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
  for (size_t index = 1; index <= len; ++index) {
    lua_pushnumber(L, static_cast<lua_Number>(index));
    decode_value(L, c);
    if (c.err != CursorError::kNone) return;
    lua_settable(L, -3);
  }
}

void decode_map(lua_State* L, Cursor& c, size_t len) {
  lua_newtable(L);
  while (len-- > 0) {
    decode_value(L, c);
    if (c.err != CursorError::kNone) return;
    decode_value(L, c);
    if (c.err != CursorError::kNone) return;
    lua_settable(L, -3);
  }
}

// A string whose `size_bytes`-byte length follows the type byte.
void decode_sized_string(lua_State* L, Cursor& c, int size_bytes) {
  if (!c.need(1 + size_bytes)) return;
  const size_t len = c.be(1, size_bytes);
  c.consume(1 + size_bytes);
  if (!c.need(len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c.p), len);
  c.consume(len);
}

// An array or map whose `size_bytes`-byte count follows the type byte.
void decode_sized_container(lua_State* L, Cursor& c, int size_bytes, bool map) {
  if (!c.need(1 + size_bytes)) return;
  const size_t len = c.be(1, size_bytes);
  c.consume(1 + size_bytes);
  if (map) {
    decode_map(L, c, len);
  } else {
    decode_array(L, c, len);
  }
}

// An integer of `bytes` bytes after the type byte. Like 0.4.0, unsigned values go through
// lua_Integer, so a uint64 above INT64_MAX comes out negative.
void decode_int(lua_State* L, Cursor& c, int bytes, bool is_signed) {
  if (!c.need(1 + bytes)) return;
  const uint64_t raw = c.be(1, bytes);
  int64_t value = static_cast<int64_t>(raw);
  if (is_signed && bytes < 8) {
    const uint64_t sign = uint64_t{1} << (bytes * 8 - 1);
    value = static_cast<int64_t>((raw ^ sign) - sign);
  }
  lua_pushinteger(L, static_cast<lua_Integer>(value));
  c.consume(1 + bytes);
}

// Decodes one value at the cursor and pushes it, or sets c.err.
void decode_value(lua_State* L, Cursor& c) {
  if (!c.need(1)) return;
  luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
  const unsigned char type = c.p[0];
  switch (type) {
    case 0xcc:
      return decode_int(L, c, 1, false);
    case 0xcd:
      return decode_int(L, c, 2, false);
    case 0xce:
      return decode_int(L, c, 4, false);
    case 0xcf:
      return decode_int(L, c, 8, false);
    case 0xd0:
      return decode_int(L, c, 1, true);
    case 0xd1:
      return decode_int(L, c, 2, true);
    case 0xd2:
      return decode_int(L, c, 4, true);
    case 0xd3:
      return decode_int(L, c, 8, true);
    case 0xc0:
      lua_pushnil(L);
      c.consume(1);
      return;
    case 0xc2:
    case 0xc3:
      lua_pushboolean(L, type == 0xc3 ? 1 : 0);
      c.consume(1);
      return;
    case 0xca: {
      if (!c.need(5)) return;
      const auto bits = static_cast<uint32_t>(c.be(1, 4));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      lua_pushnumber(L, f);
      c.consume(5);
      return;
    }
    case 0xcb: {
      if (!c.need(9)) return;
      const uint64_t bits = c.be(1, 8);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      lua_pushnumber(L, d);
      c.consume(9);
      return;
    }
    case 0xd9:
      return decode_sized_string(L, c, 1);
    case 0xda:
      return decode_sized_string(L, c, 2);
    case 0xdb:
      return decode_sized_string(L, c, 4);
    case 0xdc:
      return decode_sized_container(L, c, 2, false);
    case 0xdd:
      return decode_sized_container(L, c, 4, false);
    case 0xde:
      return decode_sized_container(L, c, 2, true);
    case 0xdf:
      return decode_sized_container(L, c, 4, true);
    default:
      break;
  }
  if ((type & 0x80) == 0) {  // positive fixint
    lua_pushinteger(L, type);
    c.consume(1);
  } else if ((type & 0xe0) == 0xe0) {  // negative fixint
    lua_pushinteger(L, static_cast<signed char>(type));
    c.consume(1);
  } else if ((type & 0xe0) == 0xa0) {  // fixstr
    const size_t len = type & 0x1f;
    if (!c.need(1 + len)) return;
    lua_pushlstring(L, reinterpret_cast<const char*>(c.p + 1), len);
    c.consume(1 + len);
  } else if ((type & 0xf0) == 0x90) {  // fixarray
    c.consume(1);
    decode_array(L, c, type & 0xf);
  } else if ((type & 0xf0) == 0x80) {  // fixmap
    c.consume(1);
    decode_map(L, c, type & 0xf);
  } else {  // 0xc1, bin, ext: not in the format 0.4.0 reads
    c.err = CursorError::kBadFormat;
  }
}

// unpack (limit 0, offset 0: every value, no offset returned), unpack_one and unpack_limit
// (the next offset, -1 at the end, then up to `limit` values).
int unpack_values(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    // 0.4.0 prints the input length where it says "limit"; so does Redis.
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (decode_all) limit = INT_MAX;
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset)};
  int count = 0;
  for (; c.left > 0 && count < limit; ++count) {
    decode_value(L, c);
    if (c.err == CursorError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.err == CursorError::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (decode_all) return count;
  luaL_checkstack(L, 1, "in function mp_unpack_full");
  lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
  lua_insert(L, 2);  // the offset goes before the values, right after the input string
  return count + 1;
}

int mp_unpack(lua_State* L) { return unpack_values(L, 0, 0); }

int mp_unpack_one(lua_State* L) {
  const lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_pop(L, lua_gettop(L) - 1);  // with no arguments at all the input stays "no value"
  return unpack_values(L, 1, offset);
}

int mp_unpack_limit(lua_State* L) {
  const lua_Integer limit = luaL_checkinteger(L, 2);
  const lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return unpack_values(L, limit, offset);
}

}  // namespace

void msgpack_append_int(std::string& out, int64_t n) {
  if (n >= 0) {
    if (n <= 127) {
      out.push_back(static_cast<char>(n));
    } else if (n <= 0xff) {
      out.push_back(static_cast<char>(0xcc));
      append_be(out, static_cast<uint64_t>(n), 1);
    } else if (n <= 0xffff) {
      out.push_back(static_cast<char>(0xcd));
      append_be(out, static_cast<uint64_t>(n), 2);
    } else if (n <= 0xffffffffLL) {
      out.push_back(static_cast<char>(0xce));
      append_be(out, static_cast<uint64_t>(n), 4);
    } else {
      out.push_back(static_cast<char>(0xcf));
      append_be(out, static_cast<uint64_t>(n), 8);
    }
    return;
  }
  if (n >= -32) {
    out.push_back(static_cast<char>(n));
  } else if (n >= -128) {
    out.push_back(static_cast<char>(0xd0));
    append_be(out, static_cast<uint64_t>(n), 1);
  } else if (n >= -32768) {
    out.push_back(static_cast<char>(0xd1));
    append_be(out, static_cast<uint64_t>(n), 2);
  } else if (n >= -2147483648LL) {
    out.push_back(static_cast<char>(0xd2));
    append_be(out, static_cast<uint64_t>(n), 4);
  } else {
    out.push_back(static_cast<char>(0xd3));
    append_be(out, static_cast<uint64_t>(n), 8);
  }
}

void msgpack_append_double(std::string& out, double d) {
  // float32 when converting loses nothing; NaN never compares equal, so it stays a float64,
  // and the infinities are exact floats.
  const bool as_float =
      std::isinf(d) || (std::fabs(d) <= FLT_MAX && static_cast<double>(static_cast<float>(d)) == d);
  if (as_float) {
    const float f = static_cast<float>(d);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    out.push_back(static_cast<char>(0xca));
    append_be(out, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    out.push_back(static_cast<char>(0xcb));
    append_be(out, bits, 8);
  }
}

void msgpack_append_str_header(std::string& out, size_t len) {
  if (len < 32) {
    out.push_back(static_cast<char>(0xa0 | len));
  } else if (len <= 0xff) {
    out.push_back(static_cast<char>(0xd9));
    append_be(out, len, 1);
  } else if (len <= 0xffff) {
    out.push_back(static_cast<char>(0xda));
    append_be(out, len, 2);
  } else {
    out.push_back(static_cast<char>(0xdb));
    append_be(out, len, 4);
  }
}

void msgpack_append_array_header(std::string& out, uint64_t n) {
  append_container_header(out, n, 0x90, 0xdc);
}

void msgpack_append_map_header(std::string& out, uint64_t n) {
  append_container_header(out, n, 0x80, 0xde);
}

int open_cmsgpack(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg functions[] = {{"pack", mp_pack},
                                {"unpack", mp_unpack},
                                {"unpack_one", mp_unpack_one},
                                {"unpack_limit", mp_unpack_limit}};
  for (const luaL_Reg& f : functions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  lua_pushliteral(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushliteral(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  return 1;
}

}  // namespace ringkv::engine
