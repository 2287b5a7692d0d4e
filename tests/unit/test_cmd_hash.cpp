// Unit tests of the hash command handlers: every reply's bytes in RESP2 and RESP3, argument
// validation order and error texts, taken from a real redis-server 7.0.15.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/hash.h"
#include "engine/commands/keys.h"
#include "engine/commands/keyspace.h"
#include "engine/commands/string.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_writer.h"
#include "tests/unit/command_harness.h"

namespace {

using namespace ringkv::engine;
using ringkv::protocol::RespVersion;

using Harness = ringkv::test::CommandHarness;
using ringkv::test::kWrongType;

}  // namespace

TEST_CASE("HSET, HMSET, HSETNX, HGET, HMGET, HLEN, HSTRLEN, HEXISTS") {
  Harness h;
  CHECK(h.run(cmd_hset, {"HSET", "h", "a", "1", "b", "2"}) == ":2\r\n");
  CHECK(h.run(cmd_hset, {"HSET", "h", "a", "10", "c", "3"}) == ":1\r\n");
  CHECK(h.run(cmd_hset, {"hset", "h", "a", "1", "b"}) ==
        "-ERR wrong number of arguments for 'hset' command\r\n");
  CHECK(h.run(cmd_hmset, {"HMSET", "h", "d", "4"}) == "+OK\r\n");
  CHECK(h.run(cmd_hmset, {"HMSET", "h", "d"}) ==
        "-ERR wrong number of arguments for 'hmset' command\r\n");
  CHECK(h.run(cmd_hsetnx, {"HSETNX", "h", "a", "x"}) == ":0\r\n");
  CHECK(h.run(cmd_hsetnx, {"HSETNX", "h", "e", "x"}) == ":1\r\n");
  CHECK(h.run(cmd_hget, {"HGET", "h", "a"}) == "$2\r\n10\r\n");
  CHECK(h.run(cmd_hget, {"HGET", "h", "zz"}) == "$-1\r\n");
  CHECK(h.run(cmd_hget, {"HGET", "nokey", "a"}) == "$-1\r\n");
  CHECK(h.run(cmd_hmget, {"HMGET", "h", "a", "zz", "b"}) == "*3\r\n$2\r\n10\r\n$-1\r\n$1\r\n2\r\n");
  CHECK(h.run(cmd_hmget, {"HMGET", "nokey", "a"}) == "*1\r\n$-1\r\n");
  CHECK(h.run(cmd_hlen, {"HLEN", "h"}) == ":5\r\n");
  CHECK(h.run(cmd_hlen, {"HLEN", "nokey"}) == ":0\r\n");
  CHECK(h.run(cmd_hstrlen, {"HSTRLEN", "h", "a"}) == ":2\r\n");
  CHECK(h.run(cmd_hstrlen, {"HSTRLEN", "h", "zz"}) == ":0\r\n");
  CHECK(h.run(cmd_hexists, {"HEXISTS", "h", "a"}) == ":1\r\n");
  CHECK(h.run(cmd_hexists, {"HEXISTS", "h", "zz"}) == ":0\r\n");
  CHECK(h.run(cmd_hexists, {"HEXISTS", "nokey", "a"}) == ":0\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_hmget, {"HMGET", "h", "a", "zz"}) == "*2\r\n$2\r\n10\r\n_\r\n");
  CHECK(h.run(cmd_hget, {"HGET", "h", "zz"}) == "_\r\n");
}

TEST_CASE("HGETALL, HKEYS, HVALS in insertion order; a map in RESP3") {
  Harness h;
  h.run(cmd_hset, {"HSET", "h", "b", "2", "a", "1"});
  CHECK(h.run(cmd_hgetall, {"HGETALL", "h"}) ==
        "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n");
  CHECK(h.run(cmd_hkeys, {"HKEYS", "h"}) == "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
  CHECK(h.run(cmd_hvals, {"HVALS", "h"}) == "*2\r\n$1\r\n2\r\n$1\r\n1\r\n");
  CHECK(h.run(cmd_hgetall, {"HGETALL", "nokey"}) == "*0\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_hgetall, {"HGETALL", "h"}) ==
        "%2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n");
  CHECK(h.run(cmd_hgetall, {"HGETALL", "nokey"}) == "%0\r\n");
  CHECK(h.run(cmd_hkeys, {"HKEYS", "nokey"}) == "*0\r\n");
}

TEST_CASE("HDEL deletes fields and the emptied key") {
  Harness h;
  h.run(cmd_hset, {"HSET", "h", "a", "1", "b", "2"});
  CHECK(h.run(cmd_hdel, {"HDEL", "h", "a", "a", "zz"}) == ":1\r\n");
  CHECK(h.run(cmd_hdel, {"HDEL", "nokey", "a"}) == ":0\r\n");
  CHECK(h.run(cmd_hdel, {"HDEL", "h", "b", "c"}) == ":1\r\n");
  CHECK(h.store.peek("h") == nullptr);
}

TEST_CASE("HINCRBY and HINCRBYFLOAT: argument checks first, then the key, then the value") {
  Harness h;
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "h", "a", "5"}) == ":5\r\n");
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "h", "a", "-7"}) == ":-2\r\n");
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "h", "a", "1.5"}) ==
        "-ERR value is not an integer or out of range\r\n");
  h.run(cmd_hset, {"HSET", "h", "s", "abc", "max", "9223372036854775807"});
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "h", "s", "1"}) == "-ERR hash value is not an integer\r\n");
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "h", "max", "1"}) ==
        "-ERR increment or decrement would overflow\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "a", "1.5"}) == "$4\r\n-0.5\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "a", "0.5"}) == "$1\r\n0\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "f", "1e3"}) == "$4\r\n1000\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "a", "x"}) ==
        "-ERR value is not a valid float\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "a", "inf"}) ==
        "-ERR value is NaN or Infinity\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "s", "1"}) ==
        "-ERR hash value is not a float\r\n");
  h.store.set_string("str", "1", Expiry::none());
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "str", "a", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "str", "a", "x"}) ==
        "-ERR value is not a valid float\r\n");
  CHECK(h.run(cmd_hincrby, {"HINCRBY", "str", "a", "1"}) == kWrongType);
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "big", "a", "1e4932"}).starts_with("$4933\r\n"));
  CHECK(h.run(cmd_hincrbyfloat, {"HINCRBYFLOAT", "big", "a", "1e4932"}) ==
        "-ERR increment would produce NaN or Infinity\r\n");
  CHECK(h.run(cmd_hstrlen, {"HSTRLEN", "big", "a"}) == ":4933\r\n");
}

TEST_CASE("every hash command answers WRONGTYPE on a string") {
  Harness h;
  h.store.set_string("s", "v", Expiry::none());
  CHECK(h.run(cmd_hset, {"HSET", "s", "a", "1"}) == kWrongType);
  CHECK(h.run(cmd_hmset, {"HMSET", "s", "a", "1"}) == kWrongType);
  CHECK(h.run(cmd_hsetnx, {"HSETNX", "s", "a", "1"}) == kWrongType);
  CHECK(h.run(cmd_hget, {"HGET", "s", "a"}) == kWrongType);
  CHECK(h.run(cmd_hmget, {"HMGET", "s", "a"}) == kWrongType);
  CHECK(h.run(cmd_hdel, {"HDEL", "s", "a"}) == kWrongType);
  CHECK(h.run(cmd_hlen, {"HLEN", "s"}) == kWrongType);
  CHECK(h.run(cmd_hstrlen, {"HSTRLEN", "s", "a"}) == kWrongType);
  CHECK(h.run(cmd_hexists, {"HEXISTS", "s", "a"}) == kWrongType);
  CHECK(h.run(cmd_hgetall, {"HGETALL", "s"}) == kWrongType);
  CHECK(h.run(cmd_hkeys, {"HKEYS", "s"}) == kWrongType);
  CHECK(h.run(cmd_hvals, {"HVALS", "s"}) == kWrongType);
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "s"}) == kWrongType);
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "s", "1", "WITHVALUES"}) == kWrongType);
  CHECK(h.run(cmd_hscan, {"HSCAN", "s", "0", "COUNT", "0"}) == kWrongType);
  CHECK(h.run(cmd_hscan, {"HSCAN", "s", "x"}) == "-ERR invalid cursor\r\n");
  // And the string commands answer WRONGTYPE on a hash.
  h.run(cmd_hset, {"HSET", "h", "a", "1"});
  CHECK(h.run(cmd_get, {"GET", "h"}) == kWrongType);
  CHECK(h.run(cmd_append, {"APPEND", "h", "x"}) == kWrongType);
  CHECK(h.run(cmd_incr, {"INCR", "h"}) == kWrongType);
  CHECK(h.run(cmd_mget, {"MGET", "h"}) == "*1\r\n$-1\r\n");
  CHECK(h.run(cmd_type, {"TYPE", "h"}) == "+hash\r\n");
  CHECK(h.run(cmd_object_encoding, {"OBJECT", "ENCODING", "h"}) == "$8\r\nlistpack\r\n");
  CHECK(h.run(cmd_set, {"SET", "h", "v"}) == "+OK\r\n");
  CHECK(h.run(cmd_type, {"TYPE", "h"}) == "+string\r\n");
}

TEST_CASE("HRANDFIELD: counts, WITHVALUES, RESP3 nesting and range errors") {
  Harness h;
  h.run(cmd_hset, {"HSET", "h", "a", "1", "b", "2"});
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "5"}) == "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "5", "withvalues"}) ==
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "0"}) == "*0\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "nokey"}) == "$-1\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "nokey", "3", "WITHVALUES"}) == "*0\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "-5"}).starts_with("*5\r\n"));
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "-3", "WITHVALUES"}).starts_with("*6\r\n"));
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "1"}).starts_with("*1\r\n$1\r\n"));
  const std::string one = h.run(cmd_hrandfield, {"HRANDFIELD", "h"});
  CHECK((one == "$1\r\na\r\n" || one == "$1\r\nb\r\n"));
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "x", "withvalue"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "1", "withvalue"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "1", "withvalues", "x"}) ==
        "-ERR syntax error\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "-9223372036854775808"}) ==
        "-ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "nokey", "4611686018427387904", "WITHVALUES"}) ==
        "-ERR value is out of range\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "nokey", "4611686018427387903", "WITHVALUES"}) ==
        "*0\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "5", "WITHVALUES"}) ==
        "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "h", "-1", "WITHVALUES"}).starts_with("*1\r\n*2\r\n"));
  CHECK(h.run(cmd_hrandfield, {"HRANDFIELD", "nokey"}) == "_\r\n");
}

TEST_CASE("HSCAN: listpack in one call, hashtable by cursor, MATCH and COUNT, errors") {
  Harness h;
  h.run(cmd_hset, {"HSET", "h", "a1", "1", "b", "2", "a2", "3"});
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "0"}) ==
        "*2\r\n$1\r\n0\r\n*6\r\n$2\r\na1\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$2\r\na2\r\n$"
        "1\r\n3\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "7", "MATCH", "a*", "COUNT", "1"}) ==
        "*2\r\n$1\r\n0\r\n*4\r\n$2\r\na1\r\n$1\r\n1\r\n$2\r\na2\r\n$1\r\n3\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "nokey", "0", "COUNT", "0"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "x"}) == "-ERR invalid cursor\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "0", "COUNT", "0"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "0", "COUNT", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "0", "MATCH"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_hscan, {"HSCAN", "h", "0", "TYPE", "string"}) == "-ERR syntax error\r\n");

  std::vector<std::string> args = {"HSET", "big"};
  for (int i = 0; i < 2000; ++i) {
    args.push_back("f" + std::to_string(i));
    args.push_back("v");
  }
  std::vector<std::string_view> argv(args.begin(), args.end());
  h.out.clear();
  CommandContext ctx{argv, h.writer, h.store, nullptr, nullptr, nullptr};
  cmd_hset(ctx);
  CHECK(h.out == ":2000\r\n");
  CHECK(h.run(cmd_object_encoding, {"OBJECT", "ENCODING", "big"}) == "$9\r\nhashtable\r\n");
  // Walk the cursor: each call returns about COUNT fields; all 2000 come back.
  std::string cursor = "0";
  size_t fields = 0;
  int calls = 0;
  do {
    const std::string reply = h.run(cmd_hscan, {"HSCAN", "big", cursor, "COUNT", "100"});
    const size_t start = reply.find("$", 0);
    const size_t len_end = reply.find("\r\n", start);
    const size_t len = std::stoul(reply.substr(start + 1, len_end - start - 1));
    cursor = reply.substr(len_end + 2, len);
    const size_t items = std::stoul(reply.substr(len_end + 2 + len + 3));
    fields += items / 2;
    ++calls;
  } while (cursor != "0" && calls < 1000);
  CHECK(cursor == "0");
  CHECK(fields == 2000);
  CHECK(calls > 5);
}

TEST_CASE("Hash writes report the key they changed, and no-ops report nothing") {
  using Keys = std::vector<std::string>;
  Harness h;
  CHECK(h.changed_by(cmd_hset, {"HSET", "h", "f", "1"}) == Keys{"h"});
  // Rewriting a field with the same value still counts, as in Redis.
  CHECK(h.changed_by(cmd_hset, {"HSET", "h", "f", "1"}) == Keys{"h"});
  CHECK(h.changed_by(cmd_hmset, {"HMSET", "h", "g", "2"}) == Keys{"h"});
  CHECK(h.changed_by(cmd_hsetnx, {"HSETNX", "h", "f", "9"}).empty());
  CHECK(h.changed_by(cmd_hsetnx, {"HSETNX", "h", "n", "9"}) == Keys{"h"});
  CHECK(h.changed_by(cmd_hdel, {"HDEL", "h", "missing"}).empty());
  CHECK(h.changed_by(cmd_hdel, {"HDEL", "nokey", "f"}).empty());
  CHECK(h.changed_by(cmd_hdel, {"HDEL", "h", "n", "missing"}) == Keys{"h"});
  CHECK(h.changed_by(cmd_hincrby, {"HINCRBY", "h", "f", "0"}) == Keys{"h"});
  CHECK(h.changed_by(cmd_hincrby, {"HINCRBY", "h", "f", "x"}).empty());
  CHECK(h.changed_by(cmd_hincrbyfloat, {"HINCRBYFLOAT", "h", "f", "0.5"}) == Keys{"h"});
}
