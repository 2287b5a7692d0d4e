// Unit tests of the sorted-set command handlers: reply bytes in RESP2 and RESP3, argument
// validation order and error texts (taken from a real redis-server 7.0.15), the blocking
// contract of BZPOPMIN/BZPOPMAX and the key finders of the set operations.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/zset.h"
#include "engine/commands/zset_combine.h"
#include "engine/commands/zset_pop.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_reader.h"
#include "protocol/reply_writer.h"
#include "tests/unit/command_harness.h"

namespace {

using namespace ringkv::engine;
using ringkv::protocol::RespVersion;

using Harness = ringkv::test::CommandHarness;
using ringkv::test::keys_of;
using ringkv::test::kWrongType;

}  // namespace

TEST_CASE("ZADD options, conflicts and replies") {
  Harness h;
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b"}) == ":2\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "CH", "5", "a", "3", "c"}) == ":2\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "NX", "9", "a"}) == ":0\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "XX", "CH", "9", "a", "9", "new"}) == ":1\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "GT", "CH", "1", "a"}) == ":0\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "LT", "CH", "1", "a"}) == ":1\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "INCR", "1.5", "a"}) == "$3\r\n2.5\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "NX", "INCR", "1", "a"}) == "$-1\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "nokey", "XX", "1", "a"}) == ":0\r\n");
  CHECK_FALSE(h.store.contains("nokey"));
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "NX", "XX", "1", "a"}) ==
        "-ERR XX and NX options at the same time are not compatible\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "GT", "LT", "1", "a"}) ==
        "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "INCR", "1", "a", "2", "b"}) ==
        "-ERR INCR option supports a single increment-element pair\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "x", "a"}) == "-ERR value is not a valid float\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "nan", "a"}) == "-ERR value is not a valid float\r\n");
  CHECK(h.run(cmd_zadd, {"ZADD", "z", "inf", "i"}) == ":1\r\n");
  CHECK(h.run(cmd_zincrby, {"ZINCRBY", "z", "-inf", "i"}) ==
        "-ERR resulting score is not a number (NaN)\r\n");
  CHECK(h.run(cmd_zincrby, {"ZINCRBY", "z", "0.1", "p"}) == "$19\r\n0.10000000000000001\r\n");
  h.store.set_string("s", "x", Expiry::none());
  CHECK(h.run(cmd_zadd, {"ZADD", "s", "1", "a"}) == kWrongType);
  CHECK(h.run(cmd_zadd, {"ZADD", "s", "x", "a"}) == "-ERR value is not a valid float\r\n");
  CHECK(h.ready.keys == std::vector<std::string>{"z", "z", "z", "z"});
}

TEST_CASE("ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "z", "1.1", "a", "2", "b", "3", "c", "-0.0", "d"});
  CHECK(h.run(cmd_zscore, {"ZSCORE", "z", "a"}) == "$18\r\n1.1000000000000001\r\n");
  CHECK(h.run(cmd_zscore, {"ZSCORE", "z", "d"}) == "$1\r\n0\r\n");
  CHECK(h.run(cmd_zscore, {"ZSCORE", "z", "x"}) == "$-1\r\n");
  CHECK(h.run(cmd_zmscore, {"ZMSCORE", "z", "b", "x"}) == "*2\r\n$1\r\n2\r\n$-1\r\n");
  CHECK(h.run(cmd_zmscore, {"ZMSCORE", "nokey", "b"}) == "*1\r\n$-1\r\n");
  CHECK(h.run(cmd_zcard, {"ZCARD", "z"}) == ":4\r\n");
  CHECK(h.run(cmd_zrank, {"ZRANK", "z", "c"}) == ":3\r\n");
  CHECK(h.run(cmd_zrevrank, {"ZREVRANK", "z", "c"}) == ":0\r\n");
  CHECK(h.run(cmd_zrank, {"ZRANK", "z", "x"}) == "$-1\r\n");
  CHECK(h.run(cmd_zcount, {"ZCOUNT", "z", "(1.1", "+inf"}) == ":2\r\n");
  CHECK(h.run(cmd_zcount, {"ZCOUNT", "z", "3", "1"}) == ":0\r\n");
  CHECK(h.run(cmd_zcount, {"ZCOUNT", "z", "a", "1"}) == "-ERR min or max is not a float\r\n");
  CHECK(h.run(cmd_zlexcount, {"ZLEXCOUNT", "z", "-", "+"}) == ":4\r\n");
  CHECK(h.run(cmd_zlexcount, {"ZLEXCOUNT", "z", "a", "+"}) ==
        "-ERR min or max not valid string range item\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_zscore, {"ZSCORE", "z", "a"}) == ",1.1000000000000001\r\n");
  CHECK(h.run(cmd_zscore, {"ZSCORE", "z", "x"}) == "_\r\n");
  h.store.set_string("s", "x", Expiry::none());
  CHECK(h.run(cmd_zscore, {"ZSCORE", "s", "a"}) == kWrongType);
  // Range errors come before the type check.
  CHECK(h.run(cmd_zcount, {"ZCOUNT", "s", "x", "1"}) == "-ERR min or max is not a float\r\n");
}

TEST_CASE("ZRANGE and its older forms") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"});
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "-2", "-1"}) == "*2\r\n$1\r\nc\r\n$1\r\nd\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "0", "0", "WITHSCORES"}) ==
        "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "0", "1", "REV"}) == "*2\r\n$1\r\nd\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "5", "1"}) == "*0\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "(4", "2", "BYSCORE", "REV", "LIMIT", "1", "5"}) ==
        "*1\r\n$1\r\nb\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "0", "1", "LIMIT", "0", "1"}) ==
        "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
        "BYLEX\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"}) ==
        "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n");
  CHECK(h.run(cmd_zrangebyscore, {"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "2"}) ==
        "*0\r\n");
  CHECK(h.run(cmd_zrangebyscore, {"ZRANGEBYSCORE", "z", "2", "+inf", "LIMIT", "1", "-1"}) ==
        "*2\r\n$1\r\nc\r\n$1\r\nd\r\n");
  CHECK(h.run(cmd_zrangebyscore, {"ZRANGEBYSCORE", "z", "0", "1", "REV"}) ==
        "-ERR syntax error\r\n");
  CHECK(h.run(cmd_zrevrangebyscore, {"ZREVRANGEBYSCORE", "z", "3", "(1"}) ==
        "*2\r\n$1\r\nc\r\n$1\r\nb\r\n");
  CHECK(h.run(cmd_zrangebylex, {"ZRANGEBYLEX", "z", "[b", "(d"}) == "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(h.run(cmd_zrevrangebylex, {"ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", "0", "1"}) ==
        "*1\r\n$1\r\nd\r\n");
  CHECK(h.run(cmd_zrevrange, {"ZREVRANGE", "z", "0", "0", "WITHSCORES"}) ==
        "*2\r\n$1\r\nd\r\n$1\r\n4\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "nokey", "0", "-1"}) == "*0\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "x", "1"}) ==
        "-ERR value is not an integer or out of range\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_zrange, {"ZRANGE", "z", "0", "0", "WITHSCORES"}) ==
        "*1\r\n*2\r\n$1\r\na\r\n,1\r\n");
}

TEST_CASE("ZREM and ZREMRANGEBY* delete emptied keys") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"});
  CHECK(h.run(cmd_zrem, {"ZREM", "z", "a", "x"}) == ":1\r\n");
  CHECK(h.run(cmd_zremrangebyrank, {"ZREMRANGEBYRANK", "z", "-1", "-1"}) == ":1\r\n");
  CHECK(h.run(cmd_zremrangebyscore, {"ZREMRANGEBYSCORE", "z", "(2", "3"}) == ":1\r\n");
  CHECK(h.run(cmd_zremrangebylex, {"ZREMRANGEBYLEX", "z", "x", "+"}) ==
        "-ERR min or max not valid string range item\r\n");
  CHECK(h.run(cmd_zremrangebylex, {"ZREMRANGEBYLEX", "z", "-", "+"}) == ":2\r\n");
  CHECK_FALSE(h.store.contains("z"));
  CHECK(h.run(cmd_zrem, {"ZREM", "z", "a"}) == ":0\r\n");
}

TEST_CASE("ZPOPMIN, ZPOPMAX: counts and the RESP3 shapes") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b", "3", "c"});
  CHECK(h.run(cmd_zpopmin, {"ZPOPMIN", "z"}) == "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
  CHECK(h.run(cmd_zpopmin, {"ZPOPMIN", "z", "-1"}) ==
        "-ERR value is out of range, must be positive\r\n");
  CHECK(h.run(cmd_zpopmin, {"ZPOPMIN", "z", "0"}) == "*0\r\n");
  h.store.set_string("s", "x", Expiry::none());
  CHECK(h.run(cmd_zpopmin, {"ZPOPMIN", "s", "0"}) == kWrongType);
  CHECK(h.run(cmd_zpopmin, {"ZPOPMIN", "z", "1", "2"}) == "-ERR syntax error\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_zpopmax, {"ZPOPMAX", "z"}) == "*2\r\n$1\r\nc\r\n,3\r\n");
  CHECK(h.run(cmd_zpopmax, {"ZPOPMAX", "z", "5"}) == "*1\r\n*2\r\n$1\r\nb\r\n,2\r\n");
  CHECK_FALSE(h.store.contains("z"));
  CHECK(h.run(cmd_zpopmax, {"ZPOPMAX", "z"}) == "*0\r\n");
}

TEST_CASE("BZPOPMIN, BZPOPMAX: serve, block, time out") {
  Harness h;
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "z", "-1"}) == "-ERR timeout is negative\r\n");
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "z", "x"}) ==
        "-ERR timeout is not a float or out of range\r\n");
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "z", "1e20"}) == "-ERR timeout is negative\r\n");
  // Not blockable (MULTI): answers as a timeout at once.
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "z", "0"}) == "*-1\r\n");
  h.blockable = true;
  CHECK(h.run(cmd_bzpopmax, {"BZPOPMAX", "y", "z", "0.25"}).empty());
  CHECK(h.block.active);
  CHECK(h.block.keys == std::vector<std::string>{"y", "z"});
  CHECK(h.block.timeout_ms == 250);
  h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b"});
  CHECK(h.run(cmd_bzpopmax, {"BZPOPMAX", "y", "z", "0"}) ==
        "*3\r\n$1\r\nz\r\n$1\r\nb\r\n$1\r\n2\r\n");
  h.store.set_string("y", "x", Expiry::none());
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "y", "z", "0"}) == kWrongType);
  h.blockable = false;
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "nokey", "0"}) == "_\r\n");
  CHECK(h.run(cmd_bzpopmin, {"BZPOPMIN", "z", "0"}) == "*3\r\n$1\r\nz\r\n$1\r\na\r\n,1\r\n");
}

TEST_CASE("ZRANDMEMBER deterministic forms") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b", "3", "c"});
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "10"}) ==
        "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n");
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "0"}) == "*0\r\n");
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "nokey"}) == "$-1\r\n");
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "1", "x"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "-9223372036854775808"}) ==
        "-ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807\r\n");
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"}) ==
        "-ERR value is out of range\r\n");
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "-5"}).starts_with("*5\r\n"));
  CHECK(h.run(cmd_zrandmember, {"ZRANDMEMBER", "z", "2", "WITHSCORES"}).starts_with("*4\r\n"));
}

TEST_CASE("ZUNION, ZINTER, ZDIFF and the STORE forms") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "a", "1", "x", "2", "y", "inf", "i"});
  h.run(cmd_zadd, {"ZADD", "b", "10", "y", "1", "z", "-inf", "i"});
  CHECK(h.run(cmd_zunion, {"ZUNION", "2", "a", "b", "WITHSCORES"}) ==
        "*8\r\n$1\r\ni\r\n$1\r\n0\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\ny\r\n$"
        "2\r\n12\r\n");
  CHECK(h.run(cmd_zinter, {"ZINTER", "2", "a", "b", "WEIGHTS", "2", "1", "AGGREGATE", "MIN"}) ==
        "*2\r\n$1\r\ni\r\n$1\r\ny\r\n");
  CHECK(h.run(cmd_zdiff, {"ZDIFF", "2", "a", "b"}) == "*1\r\n$1\r\nx\r\n");
  CHECK(h.run(cmd_zdiff, {"ZDIFF", "1", "a", "WEIGHTS", "1"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_zunion, {"ZUNION", "0", "a"}) ==
        "-ERR at least 1 input key is needed for 'zunion' command\r\n");
  CHECK(h.run(cmd_zunion, {"ZUNION", "3", "a", "b"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_zunion, {"ZUNION", "1", "a", "WEIGHTS", "x"}) ==
        "-ERR weight value is not a float\r\n");
  CHECK(h.run(cmd_zunionstore, {"ZUNIONSTORE", "d", "1", "a", "WITHSCORES"}) ==
        "-ERR syntax error\r\n");
  CHECK(h.run(cmd_zinterstore, {"ZINTERSTORE", "d", "2", "a", "b"}) == ":2\r\n");
  CHECK(h.run(cmd_zrange, {"ZRANGE", "d", "0", "-1", "WITHSCORES"}) ==
        "*4\r\n$1\r\ni\r\n$1\r\n0\r\n$1\r\ny\r\n$2\r\n12\r\n");
  CHECK(h.run(cmd_zdiffstore, {"ZDIFFSTORE", "d", "2", "a", "a"}) == ":0\r\n");
  CHECK_FALSE(h.store.contains("d"));
  h.store.set_string("s", "x", Expiry::none());
  CHECK(h.run(cmd_zunion, {"ZUNION", "2", "a", "s"}) == kWrongType);
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_zdiff, {"ZDIFF", "2", "a", "b", "WITHSCORES"}) ==
        "*1\r\n*2\r\n$1\r\nx\r\n,1\r\n");
}

TEST_CASE("the set operations name their keys through numkeys") {
  CHECK(keys_of(zsetop_keys, {"ZUNION", "2", "a", "b", "WEIGHTS", "1", "2"}) ==
        std::vector<size_t>{2, 3});
  CHECK(keys_of(zsetop_keys, {"ZUNION", "3", "a", "b"}).empty());
  CHECK(keys_of(zsetop_keys, {"ZUNION", "0", "a"}).empty());
  CHECK(keys_of(zsetop_keys, {"ZUNION", "x", "a"}).empty());
  CHECK(keys_of(zsetop_store_keys, {"ZUNIONSTORE", "d", "2", "a", "b"}) ==
        std::vector<size_t>{1, 3, 4});
  CHECK(keys_of(zsetop_store_keys, {"ZUNIONSTORE", "d", "-1", "a"}).empty());
}

TEST_CASE("Sorted-set writes report the keys they changed, and no-ops report nothing") {
  using Keys = std::vector<std::string>;
  Harness h;
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "nokey", "XX", "1", "a"}).empty());
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b", "3", "c"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "z", "1", "a"}).empty());
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "z", "NX", "5", "a"}).empty());
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "z", "5", "a"}) == Keys{"z"});
  // An increment of 0 leaves the score as it was: no change, as in Redis.
  CHECK(h.changed_by(cmd_zincrby, {"ZINCRBY", "z", "0", "a"}).empty());
  CHECK(h.changed_by(cmd_zincrby, {"ZINCRBY", "z", "1", "a"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zrem, {"ZREM", "z", "zz"}).empty());
  CHECK(h.changed_by(cmd_zrem, {"ZREM", "z", "a", "zz"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zremrangebyscore, {"ZREMRANGEBYSCORE", "z", "10", "20"}).empty());
  CHECK(h.changed_by(cmd_zremrangebyrank, {"ZREMRANGEBYRANK", "z", "0", "0"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "z", "1", "a", "2", "b"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zpopmin, {"ZPOPMIN", "z", "0"}).empty());
  CHECK(h.changed_by(cmd_zpopmin, {"ZPOPMIN", "nokey"}).empty());
  CHECK(h.changed_by(cmd_zpopmax, {"ZPOPMAX", "z"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_bzpopmin, {"BZPOPMIN", "nokey", "z", "0"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zadd, {"ZADD", "z", "1", "a"}) == Keys{"z"});
  CHECK(h.changed_by(cmd_zunionstore, {"ZUNIONSTORE", "dst", "1", "nokey"}).empty());
  CHECK(h.changed_by(cmd_zunionstore, {"ZUNIONSTORE", "dst", "1", "z"}) == Keys{"dst"});
  // An empty result deletes the existing destination: a change.
  CHECK(h.changed_by(cmd_zinterstore, {"ZINTERSTORE", "dst", "2", "z", "nokey"}) == Keys{"dst"});
  CHECK(h.changed_by(cmd_zdiffstore, {"ZDIFFSTORE", "dst", "1", "nokey"}).empty());
}

TEST_CASE("ZSCAN: a listpack whole with its integer scores, a skiplist by cursor") {
  Harness h;
  h.run(cmd_zadd, {"ZADD", "z", "1.5", "a", "123456789012345680", "b", "0.1", "c"});
  CHECK(h.run(cmd_zscan, {"ZSCAN", "z", "0"}) ==
        "*2\r\n$1\r\n0\r\n*6\r\n$1\r\nc\r\n$19\r\n0.10000000000000001\r\n$1\r\na\r\n$3\r\n1.5\r\n"
        "$1\r\nb\r\n$18\r\n123456789012345680\r\n");
  CHECK(h.run(cmd_zscan, {"ZSCAN", "z", "0", "MATCH", "a"}) ==
        "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n");
  CHECK(h.run(cmd_zscan, {"ZSCAN", "nokey", "0"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
  CHECK(h.run(cmd_zscan, {"ZSCAN", "z", "x"}) == "-ERR invalid cursor\r\n");
  CHECK(h.run(cmd_zscan, {"ZSCAN", "z", "0", "TYPE", "zset"}) == "-ERR syntax error\r\n");
  // Past 128 members: a skiplist, walked by cursor; every member comes back with its score.
  for (int i = 0; i < 300; ++i) {
    h.run(cmd_zadd, {"ZADD", "big", std::to_string(i) + ".25", "m" + std::to_string(i)});
  }
  std::set<std::string> seen;
  std::string cursor = "0";
  do {
    // The decoded views point into `reply`, which must outlive them.
    const std::string reply = h.run(cmd_zscan, {"ZSCAN", "big", cursor, "COUNT", "7"});
    ringkv::protocol::ReplyValue v;
    REQUIRE(ringkv::protocol::decode_reply(reply, v));
    cursor = std::string(v.elements[0].text);
    for (size_t i = 0; i + 1 < v.elements[1].elements.size(); i += 2) {
      std::string member(v.elements[1].elements[i].text);
      CHECK(std::string(v.elements[1].elements[i + 1].text) == member.substr(1) + ".25");
      seen.insert(member);
    }
  } while (cursor != "0");
  CHECK(seen.size() == 300);
}
