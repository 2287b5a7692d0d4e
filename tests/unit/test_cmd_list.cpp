// Unit tests of the list command handlers: reply bytes in RESP2 and RESP3, argument validation
// order and error texts (taken from a real redis-server 7.0.15), key-ready reports, the blocking
// contract (wait request, timeout reply) and the LMPOP/BLMPOP key finders.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/hash.h"
#include "engine/commands/list.h"
#include "engine/commands/list_pop.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_writer.h"
#include "tests/unit/command_harness.h"

namespace {

using namespace ringkv::engine;
using ringkv::protocol::RespVersion;

using Harness = ringkv::test::CommandHarness;
using ringkv::test::keys_of;
using ringkv::test::kWrongType;

}  // namespace

TEST_CASE("pushes reply the new length and report the key ready") {
  Harness h;
  CHECK(h.run(cmd_lpushx, {"LPUSHX", "l", "a"}) == ":0\r\n");
  CHECK(h.ready.keys.empty());
  CHECK(h.run(cmd_rpush, {"RPUSH", "l", "a", "b"}) == ":2\r\n");
  CHECK(h.run(cmd_lpush, {"LPUSH", "l", "x", "y"}) == ":4\r\n");
  CHECK(h.run(cmd_rpushx, {"RPUSHX", "l", "z"}) == ":5\r\n");
  CHECK(h.ready.keys == std::vector<std::string>{"l", "l", "l"});
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "0", "-1"}) ==
        "*5\r\n$1\r\ny\r\n$1\r\nx\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nz\r\n");
  CHECK(h.run(cmd_llen, {"LLEN", "l"}) == ":5\r\n");
  CHECK(h.run(cmd_llen, {"LLEN", "nokey"}) == ":0\r\n");
  h.run(cmd_hset, {"HSET", "h", "f", "v"});
  CHECK(h.run(cmd_lpush, {"LPUSH", "h", "a"}) == kWrongType);
  CHECK(h.run(cmd_llen, {"LLEN", "h"}) == kWrongType);
}

TEST_CASE("LPOP and RPOP with and without a count, RESP2 and RESP3") {
  Harness h;
  h.run(cmd_rpush, {"RPUSH", "l", "a", "b", "c", "d"});
  CHECK(h.run(cmd_lpop, {"LPOP", "l"}) == "$1\r\na\r\n");
  CHECK(h.run(cmd_rpop, {"RPOP", "l", "2"}) == "*2\r\n$1\r\nd\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_lpop, {"LPOP", "l", "0"}) == "*0\r\n");
  CHECK(h.run(cmd_lpop, {"LPOP", "l", "-1"}) == "-ERR value is out of range, must be positive\r\n");
  CHECK(h.run(cmd_lpop, {"LPOP", "l", "x"}) == "-ERR value is out of range, must be positive\r\n");
  CHECK(h.run(cmd_lpop, {"lpop", "l", "1", "2"}) ==
        "-ERR wrong number of arguments for 'lpop' command\r\n");
  CHECK(h.run(cmd_lpop, {"LPOP", "l", "10"}) == "*1\r\n$1\r\nb\r\n");
  CHECK_FALSE(h.store.contains("l"));
  CHECK(h.run(cmd_lpop, {"LPOP", "l"}) == "$-1\r\n");
  CHECK(h.run(cmd_lpop, {"LPOP", "l", "0"}) == "*-1\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_lpop, {"LPOP", "l"}) == "_\r\n");
  CHECK(h.run(cmd_rpop, {"RPOP", "l", "3"}) == "_\r\n");
}

TEST_CASE("LRANGE, LINDEX, LSET, LINSERT") {
  Harness h;
  h.run(cmd_rpush, {"RPUSH", "l", "a", "b", "c"});
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "-100", "100"}) ==
        "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "2", "1"}) == "*0\r\n");
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "-1", "-1"}) == "*1\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_lrange, {"LRANGE", "nokey", "x", "1"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_lindex, {"LINDEX", "l", "-3"}) == "$1\r\na\r\n");
  CHECK(h.run(cmd_lindex, {"LINDEX", "l", "3"}) == "$-1\r\n");
  CHECK(h.run(cmd_lindex, {"LINDEX", "nokey", "x"}) == "$-1\r\n");  // key before index
  CHECK(h.run(cmd_lindex, {"LINDEX", "l", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_lset, {"LSET", "nokey", "x", "v"}) == "-ERR no such key\r\n");
  CHECK(h.run(cmd_lset, {"LSET", "l", "3", "v"}) == "-ERR index out of range\r\n");
  CHECK(h.run(cmd_lset, {"LSET", "l", "-1", "C"}) == "+OK\r\n");
  CHECK(h.run(cmd_linsert, {"LINSERT", "l", "middle", "a", "x"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_linsert, {"LINSERT", "nokey", "BEFORE", "a", "x"}) == ":0\r\n");
  CHECK(h.run(cmd_linsert, {"LINSERT", "l", "before", "zz", "x"}) == ":-1\r\n");
  CHECK(h.run(cmd_linsert, {"LINSERT", "l", "BEFORE", "a", "0"}) == ":4\r\n");
  CHECK(h.run(cmd_linsert, {"LINSERT", "l", "after", "C", "D"}) == ":5\r\n");
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "0", "-1"}) ==
        "*5\r\n$1\r\n0\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nC\r\n$1\r\nD\r\n");
}

TEST_CASE("LREM and LTRIM") {
  Harness h;
  h.run(cmd_rpush, {"RPUSH", "l", "a", "b", "a", "c", "a"});
  CHECK(h.run(cmd_lrem, {"LREM", "l", "x", "a"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_lrem, {"LREM", "l", "-1", "a"}) == ":1\r\n");
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "0", "-1"}) ==
        "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_lrem, {"LREM", "l", "1", "a"}) == ":1\r\n");
  CHECK(h.run(cmd_lrem, {"LREM", "l", "-9223372036854775808", "a"}) == ":1\r\n");
  CHECK(h.run(cmd_lrem, {"LREM", "nokey", "0", "a"}) == ":0\r\n");
  CHECK(h.run(cmd_ltrim, {"LTRIM", "nokey", "0", "1"}) == "+OK\r\n");
  CHECK(h.run(cmd_ltrim, {"LTRIM", "l", "0", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_ltrim, {"LTRIM", "l", "-1", "100"}) == "+OK\r\n");
  CHECK(h.run(cmd_lrange, {"LRANGE", "l", "0", "-1"}) == "*1\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_ltrim, {"LTRIM", "l", "1", "0"}) == "+OK\r\n");
  CHECK_FALSE(h.store.contains("l"));
}

TEST_CASE("LPOS options, errors and the extreme rank") {
  Harness h;
  h.run(cmd_rpush, {"RPUSH", "l", "a", "b", "c", "a", "b", "c"});
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c"}) == ":2\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "RANK", "-1"}) == ":5\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "RANK", "3"}) == "$-1\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "COUNT", "0"}) == "*2\r\n:2\r\n:5\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "count", "0", "rank", "-1"}) == "*2\r\n:5\r\n:2\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "3"}) == "*1\r\n:2\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "a", "RANK", "-9223372036854775808", "COUNT", "5"}) ==
        "*2\r\n:3\r\n:0\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "RANK", "0"}) ==
        "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
        "use negative to start from the end of the list\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "COUNT", "x"}) == "-ERR COUNT can't be negative\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "MAXLEN", "-1"}) == "-ERR MAXLEN can't be negative\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "l", "c", "RANK"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "nokey", "c"}) == "$-1\r\n");
  CHECK(h.run(cmd_lpos, {"LPOS", "nokey", "c", "COUNT", "1"}) == "*0\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_lpos, {"LPOS", "nokey", "c"}) == "_\r\n");
}

TEST_CASE("LMOVE, RPOPLPUSH and LMPOP") {
  Harness h;
  h.run(cmd_rpush, {"RPUSH", "l", "a", "b", "c"});
  h.ready.keys.clear();
  CHECK(h.run(cmd_lmove, {"LMOVE", "l", "m", "LEFT", "up"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_lmove, {"LMOVE", "l", "m", "left", "RIGHT"}) == "$1\r\na\r\n");
  CHECK(h.ready.keys == std::vector<std::string>{"m"});
  CHECK(h.run(cmd_rpoplpush, {"RPOPLPUSH", "l", "l"}) == "$1\r\nc\r\n");
  CHECK(h.run(cmd_lmove, {"LMOVE", "nokey", "m", "left", "left"}) == "$-1\r\n");
  h.run(cmd_hset, {"HSET", "h", "f", "v"});
  CHECK(h.run(cmd_lmove, {"LMOVE", "l", "h", "left", "left"}) == kWrongType);
  CHECK(h.run(cmd_llen, {"LLEN", "l"}) == ":2\r\n");
  CHECK(h.run(cmd_lmpop, {"LMPOP", "0", "l", "left"}) ==
        "-ERR numkeys should be greater than 0\r\n");
  CHECK(h.run(cmd_lmpop, {"LMPOP", "3", "l", "left"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_lmpop, {"LMPOP", "1", "l", "left", "COUNT", "0"}) ==
        "-ERR count should be greater than 0\r\n");
  CHECK(h.run(cmd_lmpop, {"LMPOP", "1", "l", "left", "COUNT", "1", "COUNT", "1"}) ==
        "-ERR syntax error\r\n");
  CHECK(h.run(cmd_lmpop, {"LMPOP", "2", "nokey", "h", "left"}) == kWrongType);
  CHECK(h.run(cmd_lmpop, {"LMPOP", "3", "nokey", "l", "h", "right", "count", "5"}) ==
        "*2\r\n$1\r\nl\r\n*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_lmpop, {"LMPOP", "1", "l", "left"}) == "*-1\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_lmpop, {"LMPOP", "1", "l", "left"}) == "_\r\n");
  CHECK(h.run(cmd_lmove, {"LMOVE", "nokey", "m", "left", "left"}) == "_\r\n");
}

TEST_CASE("blocking commands serve data, wait, or answer as timed out") {
  Harness h;
  // Not blockable (inside MULTI): answered at once, BLMOVE/BRPOPLPUSH with their non-blocking
  // forms' null bulk, the others with a null array.
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "b", "0"}) == "*-1\r\n");
  CHECK(h.run(cmd_blmove, {"BLMOVE", "a", "b", "left", "left", "0"}) == "$-1\r\n");
  CHECK(h.run(cmd_brpoplpush, {"BRPOPLPUSH", "a", "b", "0"}) == "$-1\r\n");
  // A wait that timed out: a null array for all of them.
  h.timed_out = true;
  CHECK(h.run(cmd_blmove, {"BLMOVE", "a", "b", "left", "left", "0"}) == "*-1\r\n");
  CHECK(h.run(cmd_brpoplpush, {"BRPOPLPUSH", "a", "b", "0"}) == "*-1\r\n");
  h.timed_out = false;
  h.blockable = true;
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "b", "1.5"}).empty());
  CHECK(h.block.active);
  CHECK(h.block.keys == std::vector<std::string>{"a", "b"});
  CHECK(h.block.timeout_ms == 1500);
  CHECK(h.run(cmd_blmpop, {"BLMPOP", "0", "2", "a", "b", "left"}).empty());
  CHECK(h.block.keys == std::vector<std::string>{"a", "b"});
  CHECK(h.block.timeout_ms == 0);
  CHECK(h.run(cmd_brpoplpush, {"BRPOPLPUSH", "a", "b", "0.0001"}).empty());
  CHECK(h.block.keys == std::vector<std::string>{"a"});
  CHECK(h.block.timeout_ms == 0);  // truncated to 0 ms: forever, as Redis
  h.run(cmd_rpush, {"RPUSH", "b", "1", "2", "3"});
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "b", "0"}) == "*2\r\n$1\r\nb\r\n$1\r\n1\r\n");
  CHECK(h.run(cmd_brpop, {"BRPOP", "a", "b", "0"}) == "*2\r\n$1\r\nb\r\n$1\r\n3\r\n");
  CHECK(h.run(cmd_blmove, {"BLMOVE", "b", "a", "right", "left", "0"}) == "$1\r\n2\r\n");
  CHECK(h.run(cmd_blmpop, {"BLMPOP", "0", "2", "b", "a", "left", "COUNT", "9"}) ==
        "*2\r\n$1\r\na\r\n*1\r\n$1\r\n2\r\n");
  CHECK_FALSE(h.block.active);
  // Argument errors, in Redis's order.
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "-1"}) == "-ERR timeout is negative\r\n");
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "inf"}) == "-ERR timeout is negative\r\n");
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "1e300"}) == "-ERR timeout is negative\r\n");
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "nan"}) ==
        "-ERR timeout is not a float or out of range\r\n");
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", " 1"}) ==
        "-ERR timeout is not a float or out of range\r\n");
  CHECK(h.run(cmd_blmove, {"BLMOVE", "a", "b", "left", "mid", "x"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_blmpop, {"BLMPOP", "x", "0", "a", "left"}) ==
        "-ERR numkeys should be greater than 0\r\n");
  CHECK(h.run(cmd_blmpop, {"BLMPOP", "x", "1", "a", "left"}) ==
        "-ERR timeout is not a float or out of range\r\n");
  h.run(cmd_hset, {"HSET", "h", "f", "v"});
  CHECK(h.run(cmd_blpop, {"BLPOP", "a", "h", "0"}) == kWrongType);
  CHECK(h.run(cmd_blmove, {"BLMOVE", "h", "a", "left", "left", "0"}) == kWrongType);
  CHECK_FALSE(h.block.active);
  h.blockable = false;
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_brpop, {"BRPOP", "a", "0"}) == "_\r\n");
}

TEST_CASE("LMPOP and BLMPOP key finders") {
  using V = std::vector<size_t>;
  CHECK(keys_of(lmpop_keys, {"LMPOP", "2", "a", "b", "LEFT"}) == V{2, 3});
  CHECK(keys_of(lmpop_keys, {"LMPOP", "1", "a", "LEFT", "COUNT", "3"}) == V{2});
  CHECK(keys_of(lmpop_keys, {"LMPOP", "3", "a", "b"}).empty());
  CHECK(keys_of(lmpop_keys, {"LMPOP", "0", "a", "b"}).empty());
  CHECK(keys_of(lmpop_keys, {"LMPOP", "x", "a", "b"}).empty());
  CHECK(keys_of(blmpop_keys, {"BLMPOP", "0", "2", "a", "b", "RIGHT"}) == V{3, 4});
  CHECK(keys_of(blmpop_keys, {"BLMPOP", "0", "-1", "a", "b"}).empty());
  CHECK(keys_of(blmpop_keys, {"BLMPOP", "0"}).empty());
}

TEST_CASE("List writes report the keys they changed, and no-ops report nothing") {
  using Keys = std::vector<std::string>;
  Harness h;
  CHECK(h.changed_by(cmd_lpushx, {"LPUSHX", "l", "a"}).empty());
  CHECK(h.changed_by(cmd_rpush, {"RPUSH", "l", "a", "b", "c", "b"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_rpushx, {"RPUSHX", "l", "d"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_lpop, {"LPOP", "nokey"}).empty());
  CHECK(h.changed_by(cmd_lpop, {"LPOP", "l", "0"}).empty());
  CHECK(h.changed_by(cmd_rpop, {"RPOP", "l"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_lset, {"LSET", "l", "9", "x"}).empty());
  CHECK(h.changed_by(cmd_lset, {"LSET", "l", "0", "x"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_linsert, {"LINSERT", "l", "BEFORE", "zz", "y"}).empty());
  CHECK(h.changed_by(cmd_linsert, {"LINSERT", "l", "AFTER", "x", "y"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_lrem, {"LREM", "l", "0", "zz"}).empty());
  CHECK(h.changed_by(cmd_lrem, {"LREM", "l", "-1", "b"}) == Keys{"l"});
  // LTRIM reports an existing list even when it keeps every element, as Redis.
  CHECK(h.changed_by(cmd_ltrim, {"LTRIM", "l", "0", "-1"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_ltrim, {"LTRIM", "nokey", "0", "-1"}).empty());
  CHECK(h.changed_by(cmd_lmove, {"LMOVE", "nokey", "m", "LEFT", "RIGHT"}).empty());
  CHECK(h.changed_by(cmd_lmove, {"LMOVE", "l", "m", "LEFT", "RIGHT"}) == Keys{"l", "m"});
  CHECK(h.changed_by(cmd_rpoplpush, {"RPOPLPUSH", "m", "l"}) == Keys{"m", "l"});
  CHECK(h.changed_by(cmd_lmpop, {"LMPOP", "2", "nokey", "l", "LEFT"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_blpop, {"BLPOP", "nokey", "l", "0"}) == Keys{"l"});
  CHECK(h.changed_by(cmd_brpop, {"BRPOP", "nokey", "0"}).empty());
}
