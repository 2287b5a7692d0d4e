// Unit tests for how the Lua debugger shows a command's reply (Redis's ldbRedisProtocolToHuman).
// test_script_debug.py compares whole debugging sessions with redis-server's.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "engine/scripting/lua_debugger.h"

using ringkv::engine::append_human_reply;

namespace {

std::string human(std::string_view resp) {
  std::string out;
  append_human_reply(out, resp);
  CHECK(resp.empty());  // the whole reply was consumed
  return out;
}

}  // namespace

TEST_CASE("RESP2 replies as the debugger logs them") {
  CHECK(human(":42\r\n") == "42");
  CHECK(human("+OK\r\n") == "\"+OK\"");
  CHECK(human("-ERR no \"such\"\r\n") == "\"-ERR no \\\"such\\\"\"");
  CHECK(human("$3\r\na\nb\r\n") == "\"a\\nb\"");
  CHECK(human("$-1\r\n") == "NULL");
  CHECK(human("*-1\r\n") == "NULL");
  CHECK(human("*0\r\n") == "[]");
  CHECK(human("*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+y\r\n") == "[1,\"x\",[\"+y\"]]");
}

TEST_CASE("RESP3 replies as the debugger logs them") {
  CHECK(human("%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n_\r\n") == "{\"a\" => 1,\"b\" => (null)}");
  CHECK(human("~2\r\n$1\r\na\r\n#t\r\n") == "~(\"a\",#true)");
  CHECK(human("#f\r\n") == "#false");
  CHECK(human(",1.5\r\n") == "(double) 1.5");
}

TEST_CASE("a type Redis does not show is left as it is") {
  std::string out;
  std::string_view resp = "=7\r\ntxt:abc\r\n";
  append_human_reply(out, resp);
  CHECK(out.empty());
  CHECK(resp == "=7\r\ntxt:abc\r\n");
}
