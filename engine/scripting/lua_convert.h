// Conversions between Redis replies and Lua values, exactly as Redis 7.0 documents them:
//
//   reply → Lua: integer → number, bulk → string, null bulk/array → false (RESP3 null → nil),
//   array → table, status → {ok=...}, error → {err=...}; RESP3: map → {map={...}},
//   set → {set={member=true}}, boolean → boolean, double → {double=n},
//   verbatim → {verbatim_string={format=..., string=...}}.
//   Lua → reply: number → integer (truncated), string → bulk, true → 1 (RESP3 script: boolean),
//   false/nil → null, table → array up to the first nil, unless it has an ok/err/double/
//   big_number/verbatim_string/map/set field.
#pragma once

#include <string_view>

#include "protocol/reply_reader.h"
#include "protocol/reply_writer.h"

struct lua_State;

namespace ringkv::engine {

// The string (or number, as its text) at `index`; empty for any other value. Valid while the
// value stays on the stack.
std::string_view lua_view(lua_State* L, int index);
// Pushes `v` (a decoded command reply) on the Lua stack.
void push_reply(lua_State* L, const protocol::ReplyValue& v);
// Decodes the RESP bytes of one reply and pushes it; pushes an error table when malformed.
void push_reply_bytes(lua_State* L, std::string_view bytes);
// Writes the Lua value at the top of the stack as a reply and pops it. `script_resp` is the
// script's protocol (redis.setresp): it decides how booleans are written.
void write_lua_value(lua_State* L, protocol::ReplyWriter& w, protocol::RespVersion script_resp);
// Pushes Redis's error table {err="CODE message"} for `error` ("-CODE message" or a bare
// message, which gets the ERR code).
void push_error_table(lua_State* L, std::string_view error);

}  // namespace ringkv::engine
