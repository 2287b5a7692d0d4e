// Unit tests of the sandbox's cmsgpack and struct libraries: the MessagePack forms chosen for
// boundary integers, floats and lengths, round trips through pack/unpack in a bare Lua state,
// the nesting limit, the offsets of unpack_one/unpack_limit, struct's byte orders, alignment and
// sizes, and the error texts. (Byte-for-byte agreement with redis-server is the integration
// test's job: tests/integration/test_lua_pack.py.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <lua.hpp>
#include <string>

#include "engine/scripting/lua_libraries.h"

namespace ringkv::engine {
namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xf]);
  }
  return out;
}

template <typename F, typename T>
std::string encoded(F append, T value) {
  std::string out;
  append(out, value);
  return hex(out);
}

// A Lua state with the base, string and table libraries plus cmsgpack and struct as globals.
class Lua {
 public:
  Lua() : L_(luaL_newstate()) {
    luaL_openlibs(L_);
    lua_pushcfunction(L_, open_cmsgpack);
    lua_call(L_, 0, 1);
    lua_setglobal(L_, "cmsgpack");
    lua_pushcfunction(L_, open_struct);
    lua_call(L_, 0, 1);
    lua_setglobal(L_, "struct");
  }
  ~Lua() { lua_close(L_); }
  Lua(const Lua&) = delete;
  Lua& operator=(const Lua&) = delete;

  // Runs `code` (a chunk named "s") and returns its one result as a string, or "error: " and
  // the error message.
  std::string run(const std::string& code) {
    if (luaL_loadbuffer(L_, code.data(), code.size(), "=s") != 0 || lua_pcall(L_, 0, 1, 0) != 0) {
      std::string err = std::string("error: ") + lua_tostring(L_, -1);
      lua_pop(L_, 1);
      return err;
    }
    size_t len = 0;
    const char* s = lua_tolstring(L_, -1, &len);
    std::string out = s != nullptr ? std::string(s, len) : luaL_typename(L_, -1);
    lua_pop(L_, 1);
    return out;
  }
  std::string run_hex(const std::string& code) { return hex(run(code)); }

 private:
  lua_State* L_;
};

TEST_CASE("msgpack integers take the smallest form") {
  const auto i = [](int64_t n) { return encoded(msgpack_append_int, n); };
  CHECK(i(0) == "00");
  CHECK(i(127) == "7f");
  CHECK(i(128) == "cc80");
  CHECK(i(255) == "ccff");
  CHECK(i(256) == "cd0100");
  CHECK(i(65535) == "cdffff");
  CHECK(i(65536) == "ce00010000");
  CHECK(i(4294967295) == "ceffffffff");
  CHECK(i(4294967296) == "cf0000000100000000");
  CHECK(i(std::numeric_limits<int64_t>::max()) == "cf7fffffffffffffff");
  CHECK(i(-1) == "ff");
  CHECK(i(-32) == "e0");
  CHECK(i(-33) == "d0df");
  CHECK(i(-128) == "d080");
  CHECK(i(-129) == "d1ff7f");
  CHECK(i(-32768) == "d18000");
  CHECK(i(-32769) == "d2ffff7fff");
  CHECK(i(-2147483648LL) == "d280000000");
  CHECK(i(-2147483649LL) == "d3ffffffff7fffffff");
  CHECK(i(std::numeric_limits<int64_t>::min()) == "d38000000000000000");
}

TEST_CASE("msgpack floats: float32 when exact, else float64") {
  const auto d = [](double x) { return encoded(msgpack_append_double, x); };
  CHECK(d(0.5) == "ca3f000000");
  CHECK(d(-7.25) == "cac0e80000");
  CHECK(d(0.1) == "cb3fb999999999999a");
  CHECK(d(1e300) == "cb7e37e43c8800759c");
  CHECK(d(HUGE_VAL) == "ca7f800000");
  CHECK(d(-HUGE_VAL) == "caff800000");
  CHECK(d(std::numeric_limits<double>::quiet_NaN()).substr(0, 2) == "cb");
  CHECK(d(static_cast<double>(std::numeric_limits<float>::max())) == "ca7f7fffff");
}

TEST_CASE("msgpack length headers") {
  CHECK(encoded(msgpack_append_str_header, size_t{31}) == "bf");
  CHECK(encoded(msgpack_append_str_header, size_t{32}) == "d920");
  CHECK(encoded(msgpack_append_str_header, size_t{255}) == "d9ff");
  CHECK(encoded(msgpack_append_str_header, size_t{256}) == "da0100");
  CHECK(encoded(msgpack_append_str_header, size_t{65536}) == "db00010000");
  CHECK(encoded(msgpack_append_array_header, uint64_t{15}) == "9f");
  CHECK(encoded(msgpack_append_array_header, uint64_t{16}) == "dc0010");
  CHECK(encoded(msgpack_append_array_header, uint64_t{65536}) == "dd00010000");
  CHECK(encoded(msgpack_append_map_header, uint64_t{15}) == "8f");
  CHECK(encoded(msgpack_append_map_header, uint64_t{65535}) == "deffff");
  CHECK(encoded(msgpack_append_map_header, uint64_t{65536}) == "df00010000");
}

TEST_CASE("cmsgpack.pack: values, tables and the nesting limit") {
  Lua lua;
  CHECK(lua.run_hex("return cmsgpack.pack(1, -1, 'ab', true, false, nil, 2^53)") ==
        "01ffa26162c3c2c0cf0020000000000000");
  CHECK(lua.run_hex("return cmsgpack.pack(2^63, -0, 1.5, print)") == "ca5f00000000ca3fc00000c0");
  CHECK(lua.run_hex("return cmsgpack.pack({1, 2, 3})") == "93010203");
  CHECK(lua.run_hex("return cmsgpack.pack({})") == "90");
  // A hole or a key outside 1..n makes a map.
  CHECK(lua.run_hex("return cmsgpack.pack({[1] = 1, [3] = 3})").substr(0, 2) == "82");
  CHECK(lua.run_hex("return cmsgpack.pack({a = 1})") == "81a16101");
  CHECK(lua.run_hex("return cmsgpack.pack({[1.5] = 1})") == "81ca3fc0000001");
  // Sixteen levels of tables, then nil: a table that contains itself still encodes.
  CHECK(lua.run_hex("return cmsgpack.pack({{{{{{{{{{{{{{{{{1}}}}}}}}}}}}}}}}})") ==
        "91919191919191919191919191919191c0");
  CHECK(lua.run_hex("local t = {} t[1] = t return cmsgpack.pack(t)") ==
        "91919191919191919191919191919191c0");
  CHECK(lua.run("return cmsgpack.pack()") ==
        "error: s:1: bad argument #0 to 'pack' (MessagePack pack needs input.)");
}

TEST_CASE("cmsgpack round trips") {
  Lua lua;
  const std::string check = R"(
    local v = {cmsgpack.unpack(cmsgpack.pack(0, 127, 128, -33, 65536, -2^31, 2^40, -2^40, 0.25,
                                             1/3, 'x', string.rep('y', 300),
                                             string.rep('z', 70000), true, false))}
    local want = {0, 127, 128, -33, 65536, -2^31, 2^40, -2^40, 0.25, 1/3, 'x',
                  string.rep('y', 300), string.rep('z', 70000), true, false}
    for i = 1, #want do if v[i] ~= want[i] then return 'differs at ' .. i end end
    local t = cmsgpack.unpack(cmsgpack.pack({1, {a = {2, 3}, b = 'c'}, 'd'}))
    if t[2].a[2] ~= 3 or t[2].b ~= 'c' or t[3] ~= 'd' then return 'nested differs' end
    return #v == #want and 'same' or 'count ' .. #v)";
  CHECK(lua.run(check) == "same");
  // uint64 above INT64_MAX comes back negative, as in lua-cmsgpack 0.4.0.
  CHECK(lua.run(
            "return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'))") ==
        "-1");
  CHECK(lua.run("return cmsgpack.unpack('\\217\\3abc')") == "abc");
}

TEST_CASE("cmsgpack.unpack_one and unpack_limit return the next offset") {
  Lua lua;
  CHECK(
      lua.run("local o, v = cmsgpack.unpack_one(cmsgpack.pack(7, 'ab', 9)) return o .. ':' .. v") ==
      "1:7");
  CHECK(lua.run("local o, v = cmsgpack.unpack_one(cmsgpack.pack(7, 'ab', 9), 1) return o .. v") ==
        "4ab");
  CHECK(
      lua.run(
          "local o, v = cmsgpack.unpack_one(cmsgpack.pack(7, 'ab', 9), 4) return o .. ':' .. v") ==
      "-1:9");
  CHECK(lua.run("return select('#', cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2))") == "3");
  CHECK(lua.run("return (cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2))") == "2");
  CHECK(lua.run("return cmsgpack.unpack_one('\\1', 2)") ==
        "error: s:1: Start offset 2 greater than input length 1.");
  CHECK(lua.run("return cmsgpack.unpack_limit('abc', -1)") ==
        "error: s:1: Invalid request to unpack with offset of 0 and limit of 3.");
}

TEST_CASE("cmsgpack decoding errors") {
  Lua lua;
  CHECK(lua.run("return cmsgpack.unpack('\\146\\1')") == "error: s:1: Missing bytes in input.");
  CHECK(lua.run("return cmsgpack.unpack('\\196\\1a')") == "error: s:1: Bad data format in input.");
  CHECK(lua.run("return cmsgpack.unpack('\\193')") == "error: s:1: Bad data format in input.");
  CHECK(lua.run("return cmsgpack.unpack('\\129\\192\\1')") == "error: table index is nil");
  CHECK(lua.run("return cmsgpack.unpack()") ==
        "error: s:1: bad argument #1 to 'unpack' (string expected, got no value)");
  CHECK(lua.run("return cmsgpack.unpack(string.rep('\\1', 9000))") ==
        "error: s:1: stack overflow (too many return values at once; use unpack_one or "
        "unpack_limit instead.)");
}

TEST_CASE("struct.pack: byte order, widths, alignment, strings") {
  Lua lua;
  CHECK(lua.run_hex("return struct.pack('>i2', -2)") == "fffe");
  CHECK(lua.run_hex("return struct.pack('<I3', 0x010203)") == "030201");
  CHECK(lua.run_hex("return struct.pack('>bBhH', -1, 255, -2, 65535)") ==
        "ffff"
        "fffe"
        "ffff");
  CHECK(lua.run_hex("return struct.pack('<l', -1)") == "ffffffffffffffff");
  CHECK(lua.run_hex("return struct.pack('>i10', -1)") == "0000ffffffffffffffff");
  CHECK(lua.run_hex("return struct.pack('!4 b i', 1, 2)") ==
        "01000000"
        "02000000");
  CHECK(lua.run_hex("return struct.pack('b d', 1, 0.5)") == "01000000000000e03f");
  CHECK(lua.run_hex("return struct.pack('!b d', 1, 0.5)") ==
        "01"
        "00000000000000"
        "000000000000e03f");
  CHECK(lua.run_hex("return struct.pack('>f', 1.5)") == "3fc00000");
  CHECK(lua.run("return struct.pack('c3c0sx', 'abcd', 'ef', 'g')") == std::string("abcefg\0\0", 8));
  CHECK(lua.run_hex("return struct.pack('>L', 2^64)") == "0000000000000000");
  CHECK(lua.run_hex("return struct.pack('>l', 2^63)") == "8000000000000000");
}

TEST_CASE("struct.unpack and struct.size") {
  Lua lua;
  CHECK(lua.run("local a, b, c, n = struct.unpack('>hBs', struct.pack('>hBs', -300, 200, 'hi')) "
                "return a .. ' ' .. b .. ' ' .. c .. ' ' .. n") == "-300 200 hi 7");
  CHECK(lua.run("local s, n = struct.unpack('bc0', '\\3abcd') return s .. n") == "abc5");
  CHECK(lua.run("return struct.unpack('b', 'xy', 2)") == "121");
  CHECK(lua.run("return struct.unpack('<d', struct.pack('<d', 0.1))") == "0.1");
  CHECK(lua.run("return struct.size('!4 b i c5 d')") == "24");
  CHECK(lua.run("return struct.size('z9')") == "0");
}

TEST_CASE("struct errors") {
  Lua lua;
  CHECK(lua.run("return struct.pack('i33', 1)") ==
        "error: s:1: integral size 33 is larger than limit of 32");
  CHECK(lua.run("return struct.pack('i99999999999', 1)") == "error: s:1: integral size overflow");
  CHECK(lua.run("return struct.pack('!3')") == "error: s:1: alignment 3 is not a power of 2");
  CHECK(lua.run("return struct.pack('z')") ==
        "error: s:1: bad argument #1 to 'pack' (invalid format option 'z')");
  CHECK(lua.run("return struct.pack('bb', 1)") ==
        "error: s:1: bad argument #3 to 'pack' (number expected, got nil)");
  CHECK(lua.run("return struct.pack('c3', 'ab')") ==
        "error: s:1: bad argument #3 to 'pack' (string too short)");
  CHECK(lua.run("return struct.unpack('b', 'x', 0)") ==
        "error: s:1: bad argument #3 to 'unpack' (offset must be 1 or greater)");
  CHECK(lua.run("return struct.unpack('i4', 'xy')") ==
        "error: s:1: bad argument #2 to 'unpack' (data string too short)");
  CHECK(lua.run("return struct.unpack('c0', 'xy')") ==
        "error: s:1: format 'c0' needs a previous size");
  CHECK(lua.run("return struct.unpack('s', 'xy')") == "error: s:1: unfinished string in data");
  CHECK(lua.run("return struct.size('s')") ==
        "error: s:1: bad argument #1 to 'size' (option 's' has no fixed size)");
  CHECK(lua.run("return struct.size('c0')") ==
        "error: s:1: bad argument #1 to 'size' (option 'c0' has no fixed size)");
}

}  // namespace
}  // namespace ringkv::engine
