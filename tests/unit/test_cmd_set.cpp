// Unit tests of the set command handlers: reply bytes in RESP2 and RESP3, argument validation
// order and error texts as a real redis-server 7.0.15 answers, and SINTERCARD's key finder.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/set.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_writer.h"
#include "tests/unit/command_harness.h"

namespace {

using namespace ringkv::engine;
using ringkv::protocol::RespVersion;

using Harness = ringkv::test::CommandHarness;
using ringkv::test::kWrongType;

std::vector<size_t> finder(std::initializer_list<std::string_view> args) {
  return ringkv::test::keys_of(sintercard_keys, args);
}

}  // namespace

TEST_CASE("SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD") {
  Harness h;
  CHECK(h.run(cmd_sadd, {"SADD", "s", "3", "1", "2", "1"}) == ":3\r\n");
  CHECK(h.run(cmd_smembers, {"SMEMBERS", "s"}) == "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
  CHECK(h.run(cmd_sismember, {"SISMEMBER", "s", "2"}) == ":1\r\n");
  CHECK(h.run(cmd_sismember, {"SISMEMBER", "s", "02"}) == ":0\r\n");
  CHECK(h.run(cmd_sismember, {"SISMEMBER", "nokey", "2"}) == ":0\r\n");
  CHECK(h.run(cmd_smismember, {"SMISMEMBER", "s", "1", "zz"}) == "*2\r\n:1\r\n:0\r\n");
  CHECK(h.run(cmd_smismember, {"SMISMEMBER", "nokey", "a"}) == "*1\r\n:0\r\n");
  CHECK(h.run(cmd_scard, {"SCARD", "s"}) == ":3\r\n");
  CHECK(h.run(cmd_scard, {"SCARD", "nokey"}) == ":0\r\n");
  CHECK(h.run(cmd_srem, {"SREM", "s", "1", "zz"}) == ":1\r\n");
  CHECK(h.run(cmd_srem, {"SREM", "nokey", "1"}) == ":0\r\n");
  CHECK(h.run(cmd_smembers, {"SMEMBERS", "nokey"}) == "*0\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_smembers, {"SMEMBERS", "s"}) == "~2\r\n$1\r\n2\r\n$1\r\n3\r\n");
  CHECK(h.run(cmd_smembers, {"SMEMBERS", "nokey"}) == "~0\r\n");
  CHECK(h.run(cmd_srem, {"SREM", "s", "2", "3"}) == ":2\r\n");
  CHECK_FALSE(h.store.contains("s"));
}

TEST_CASE("WRONGTYPE from every set command on a string key") {
  Harness h;
  h.store.set_string("str", "x", Expiry::none());
  for (auto [handler, args] : std::vector<std::pair<CommandHandler, std::vector<std::string_view>>>{
           {cmd_sadd, {"SADD", "str", "a"}},
           {cmd_srem, {"SREM", "str", "a"}},
           {cmd_smembers, {"SMEMBERS", "str"}},
           {cmd_sismember, {"SISMEMBER", "str", "a"}},
           {cmd_smismember, {"SMISMEMBER", "str", "a"}},
           {cmd_scard, {"SCARD", "str"}},
           {cmd_spop, {"SPOP", "str"}},
           {cmd_spop, {"SPOP", "str", "1"}},
           {cmd_srandmember, {"SRANDMEMBER", "str"}},
           {cmd_srandmember, {"SRANDMEMBER", "str", "1"}},
           {cmd_sinter, {"SINTER", "nokey", "str"}},
           {cmd_sunion, {"SUNION", "nokey", "str"}},
           {cmd_sdiff, {"SDIFF", "nokey", "str"}},
           {cmd_sinterstore, {"SINTERSTORE", "d", "nokey", "str"}},
           {cmd_sintercard, {"SINTERCARD", "2", "str", "nokey"}},
           {cmd_sscan, {"SSCAN", "str", "0", "FOO"}},
       }) {
    std::string out;
    ringkv::protocol::ReplyWriter writer{out};
    CommandContext ctx{args, writer, h.store, nullptr, nullptr, nullptr};
    handler(ctx);
    CHECK(out == kWrongType);
  }
  CHECK(h.run(cmd_smove, {"SMOVE", "nokey", "str", "a"}) == ":0\r\n");
  h.run(cmd_sadd, {"SADD", "s", "a"});
  CHECK(h.run(cmd_smove, {"SMOVE", "s", "str", "a"}) == kWrongType);
  CHECK(h.run(cmd_smove, {"SMOVE", "str", "s", "a"}) == kWrongType);
  // Stores overwrite a destination of another type.
  CHECK(h.run(cmd_sunionstore, {"SUNIONSTORE", "str", "s"}) == ":1\r\n");
  CHECK(h.run(cmd_smembers, {"SMEMBERS", "str"}) == "*1\r\n$1\r\na\r\n");
}

TEST_CASE("SPOP and SRANDMEMBER: argument errors, empty replies and deterministic forms") {
  Harness h;
  h.run(cmd_sadd, {"SADD", "s", "5", "1", "3"});
  const std::string not_positive = "-ERR value is out of range, must be positive\r\n";
  CHECK(h.run(cmd_spop, {"SPOP", "s", "-1"}) == not_positive);
  CHECK(h.run(cmd_spop, {"SPOP", "s", "x"}) == not_positive);
  CHECK(h.run(cmd_spop, {"SPOP", "str", "x"}) == not_positive);
  CHECK(h.run(cmd_spop, {"SPOP", "s", "1", "2"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "nokey"}) == "$-1\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "nokey", "3"}) == "*0\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "s", "0"}) == "*0\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "nokey"}) == "$-1\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "nokey", "5"}) == "*0\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "nokey", "-5"}) == "*0\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "0"}) == "*0\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "-9223372036854775808"}) ==
        "-ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "1", "2"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "100"}) ==
        "*3\r\n$1\r\n1\r\n$1\r\n3\r\n$1\r\n5\r\n");
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "-4"}).substr(0, 4) == "*4\r\n");
  h.writer.set_version(RespVersion::kResp3);
  // SRANDMEMBER answers arrays, SPOP sets, as Redis 7.0 does.
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "s", "100"}).substr(0, 4) == "*3\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "nokey", "3"}) == "~0\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "s", "10"}) == "~3\r\n$1\r\n1\r\n$1\r\n3\r\n$1\r\n5\r\n");
  CHECK_FALSE(h.store.contains("s"));
  h.run(cmd_sadd, {"SADD", "one", "m"});
  CHECK(h.run(cmd_srandmember, {"SRANDMEMBER", "one"}) == "$1\r\nm\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "one"}) == "$1\r\nm\r\n");
  CHECK(h.run(cmd_spop, {"SPOP", "one"}) == "_\r\n");
}

TEST_CASE("SMOVE, SINTER, SUNION, SDIFF and the STORE forms") {
  Harness h;
  h.run(cmd_sadd, {"SADD", "a", "1", "2", "3"});
  h.run(cmd_sadd, {"SADD", "b", "3", "4"});
  CHECK(h.run(cmd_smove, {"SMOVE", "a", "a", "1"}) == ":1\r\n");
  CHECK(h.run(cmd_smove, {"SMOVE", "a", "a", "9"}) == ":0\r\n");
  CHECK(h.run(cmd_smove, {"SMOVE", "a", "b", "1"}) == ":1\r\n");
  CHECK(h.run(cmd_smove, {"SMOVE", "a", "b", "1"}) == ":0\r\n");
  CHECK(h.run(cmd_sinter, {"SINTER", "a", "b"}) == "*1\r\n$1\r\n3\r\n");
  CHECK(h.run(cmd_sinter, {"SINTER", "a", "nokey"}) == "*0\r\n");
  CHECK(h.run(cmd_sunion, {"SUNION", "a", "b", "nokey"}) ==
        "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n");
  CHECK(h.run(cmd_sdiff, {"SDIFF", "b", "a"}) == "*2\r\n$1\r\n1\r\n$1\r\n4\r\n");
  CHECK(h.run(cmd_sdiff, {"SDIFF", "nokey", "a"}) == "*0\r\n");
  CHECK(h.run(cmd_sinterstore, {"SINTERSTORE", "d", "a", "b"}) == ":1\r\n");
  CHECK(h.run(cmd_sdiffstore, {"SDIFFSTORE", "d", "a", "a"}) == ":0\r\n");
  CHECK_FALSE(h.store.contains("d"));
  CHECK(h.run(cmd_sunionstore, {"SUNIONSTORE", "d", "a", "b"}) == ":4\r\n");
  h.writer.set_version(RespVersion::kResp3);
  CHECK(h.run(cmd_sinter, {"SINTER", "a", "nokey"}) == "~0\r\n");
  CHECK(h.run(cmd_sdiff, {"SDIFF", "d", "b"}) == "~1\r\n$1\r\n2\r\n");
}

TEST_CASE("SINTERCARD: numkeys and LIMIT errors in Redis's order, then the count") {
  Harness h;
  h.run(cmd_sadd, {"SADD", "a", "1", "2", "3"});
  h.run(cmd_sadd, {"SADD", "b", "2", "3", "4"});
  const std::string numkeys = "-ERR numkeys should be greater than 0\r\n";
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "0", "a"}) == numkeys);
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "x", "a"}) == numkeys);
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "-1", "a"}) == numkeys);
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "3", "a"}) ==
        "-ERR Number of keys can't be greater than number of args\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "1", "a", "LIMIT", "-1"}) ==
        "-ERR LIMIT can't be negative\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "1", "a", "LIMIT", "x"}) ==
        "-ERR LIMIT can't be negative\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "1", "a", "FOO"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "1", "a", "LIMIT"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "2", "a", "b"}) == ":2\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "2", "a", "b", "limit", "1"}) == ":1\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "1", "a", "LIMIT", "0"}) == ":3\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "1", "a", "LIMIT", "1", "LIMIT", "2"}) == ":2\r\n");
  CHECK(h.run(cmd_sintercard, {"SINTERCARD", "2", "a", "nokey"}) == ":0\r\n");
}

TEST_CASE("SINTERCARD's key finder names numkeys keys and nothing for malformed argv") {
  CHECK(finder({"SINTERCARD", "2", "a", "b", "LIMIT", "1"}) == std::vector<size_t>{2, 3});
  CHECK(finder({"SINTERCARD", "1", "a"}) == std::vector<size_t>{2});
  CHECK(finder({"SINTERCARD", "3", "a", "b"}).empty());
  CHECK(finder({"SINTERCARD", "0", "a"}).empty());
  CHECK(finder({"SINTERCARD", "x", "a"}).empty());
  CHECK(finder({"SINTERCARD", "1"}).empty());
  const CommandSpec* spec = find_command("sintercard");
  REQUIRE(spec != nullptr);
  std::vector<std::string_view> argv{"SINTERCARD", "2", "k1", "k2", "LIMIT", "5"};
  CHECK(key_positions(*spec, argv) == std::vector<size_t>{2, 3});
}

TEST_CASE("SSCAN: cursor error first, empty scan for a missing key, options after the lookup") {
  Harness h;
  h.run(cmd_sadd, {"SADD", "s", "3", "1", "12"});
  CHECK(h.run(cmd_sscan, {"SSCAN", "s", "x"}) == "-ERR invalid cursor\r\n");
  CHECK(h.run(cmd_sscan, {"SSCAN", "nokey", "0", "FOO"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
  CHECK(h.run(cmd_sscan, {"SSCAN", "s", "0", "TYPE", "set"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_sscan, {"SSCAN", "s", "0", "COUNT", "0"}) == "-ERR syntax error\r\n");
  CHECK(h.run(cmd_sscan, {"SSCAN", "s", "0", "COUNT", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(h.run(cmd_sscan, {"SSCAN", "s", "0", "COUNT", "1"}) ==
        "*2\r\n$1\r\n0\r\n*3\r\n$1\r\n1\r\n$1\r\n3\r\n$2\r\n12\r\n");
  CHECK(h.run(cmd_sscan, {"SSCAN", "s", "0", "MATCH", "1*"}) ==
        "*2\r\n$1\r\n0\r\n*2\r\n$1\r\n1\r\n$2\r\n12\r\n");
}

TEST_CASE("Set writes report the keys they changed, and no-ops report nothing") {
  using Keys = std::vector<std::string>;
  Harness h;
  CHECK(h.changed_by(cmd_sadd, {"SADD", "s", "a", "b", "c"}) == Keys{"s"});
  CHECK(h.changed_by(cmd_sadd, {"SADD", "s", "a"}).empty());
  CHECK(h.changed_by(cmd_srem, {"SREM", "s", "zz"}).empty());
  CHECK(h.changed_by(cmd_srem, {"SREM", "nokey", "a"}).empty());
  CHECK(h.changed_by(cmd_srem, {"SREM", "s", "c"}) == Keys{"s"});
  CHECK(h.changed_by(cmd_spop, {"SPOP", "nokey"}).empty());
  CHECK(h.changed_by(cmd_spop, {"SPOP", "s", "0"}).empty());
  CHECK(h.changed_by(cmd_sadd, {"SADD", "d", "a"}) == Keys{"d"});
  CHECK(h.changed_by(cmd_smove, {"SMOVE", "s", "s", "a"}).empty());
  CHECK(h.changed_by(cmd_smove, {"SMOVE", "s", "d", "zz"}).empty());
  // The destination already holds "a": only the source changed.
  CHECK(h.changed_by(cmd_smove, {"SMOVE", "s", "d", "a"}) == Keys{"s"});
  CHECK(h.changed_by(cmd_smove, {"SMOVE", "s", "d", "b"}) == Keys{"s", "d"});
  CHECK(h.changed_by(cmd_spop, {"SPOP", "d"}) == Keys{"d"});
  CHECK(h.changed_by(cmd_sadd, {"SADD", "s", "a"}) == Keys{"s"});
  CHECK(h.changed_by(cmd_sinterstore, {"SINTERSTORE", "dst", "s", "nokey"}).empty());
  CHECK(h.changed_by(cmd_sunionstore, {"SUNIONSTORE", "dst", "s"}) == Keys{"dst"});
  // An empty result deletes the existing destination: a change.
  CHECK(h.changed_by(cmd_sdiffstore, {"SDIFFSTORE", "dst", "s", "s"}) == Keys{"dst"});
  CHECK(h.changed_by(cmd_sdiffstore, {"SDIFFSTORE", "dst", "s", "s"}).empty());
}
