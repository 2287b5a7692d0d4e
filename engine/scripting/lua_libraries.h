// The script libraries Redis 7.0 embeds that Debian has no package for: `cmsgpack` (MessagePack,
// as lua-cmsgpack 0.4.0) and `struct` (binary packing, as Roberto Ierusalimschy's struct 0.2
// with Redis's bounds fixes). Both write the same bytes and raise the same errors as
// redis-server 7.0.15; scripts see them as read-only globals (lua_sandbox.cpp).
#pragma once

#include <cstdint>
#include <string>

struct lua_State;

namespace ringkv::engine {

// Pushes a new table with the cmsgpack functions and metadata (pack, unpack, unpack_one,
// unpack_limit, _NAME, _VERSION, _COPYRIGHT, _DESCRIPTION); returns 1. A lua_CFunction.
int open_cmsgpack(lua_State* L);

// Pushes a new table with the struct functions (pack, unpack, size); returns 1.
int open_struct(lua_State* L);

// The MessagePack encodings cmsgpack.pack chooses, exposed for the unit tests: the smallest
// integer form, float32 when the double survives the round trip (else float64), and the
// str/array/map headers for a length.
void msgpack_append_int(std::string& out, int64_t n);
void msgpack_append_double(std::string& out, double d);
void msgpack_append_str_header(std::string& out, size_t len);
void msgpack_append_array_header(std::string& out, uint64_t n);
void msgpack_append_map_header(std::string& out, uint64_t n);

}  // namespace ringkv::engine
