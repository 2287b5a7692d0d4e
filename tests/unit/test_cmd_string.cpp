// Unit tests of the string commands: the Redis-exact number helpers, SET/GETEX option parsing,
// and every handler's reply bytes, encodings and TTLs, with expectations taken from a real
// redis-server 7.0.15.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/commands/string.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "tests/unit/command_harness.h"

namespace {

using namespace ringkv::engine;
namespace err = ringkv::protocol::err;

using ringkv::test::kNow;

// The handler harness with shortcuts for a key's encoding and expiry.
struct Harness : ringkv::test::CommandHarness {
  std::string_view encoding(std::string_view key) {
    const Entry* e = store.peek(key);
    REQUIRE(e != nullptr);
    return encoding_name(e->encoding());
  }

  int64_t expire_at(std::string_view key) {
    const Entry* e = store.peek(key);
    REQUIRE(e != nullptr);
    return e->expire_at();
  }
};

// A server whose only configuration is proto-max-bulk-len; counts how often it is read.
class FakeServer : public ServerControl {
 public:
  std::string bulk_len = "2000000";
  int config_reads = 0;

  std::string info(std::span<const std::string_view>) override { return {}; }
  std::string client_list(std::span<const uint64_t>, std::optional<ClientKind>) override {
    return {};
  }
  size_t kill_clients(const ClientKillFilter&) override { return 0; }
  void config_get(std::string_view pattern,
                  std::vector<std::pair<std::string, std::string>>& out) override {
    ++config_reads;
    if (pattern == "proto-max-bulk-len") out.emplace_back(pattern, bulk_len);
  }
  std::string config_set(std::span<const std::pair<std::string_view, std::string_view>>) override {
    return {};
  }
  void multi(ringkv::engine::CommandContext&) override {}
  void exec(ringkv::engine::CommandContext&) override {}
  void discard(ringkv::engine::CommandContext&) override {}
  void watch(ringkv::engine::CommandContext&) override {}
  void unwatch(ringkv::engine::CommandContext&) override {}
  void config_resetstat() override {}
  void shutdown() override {}
  int64_t last_save_unix() const override { return 0; }
};

std::string error_reply(std::string_view text) { return "-" + std::string(text) + "\r\n"; }

const std::string kOk = "+OK\r\n";
const std::string kNull = "$-1\r\n";
const std::string kEmpty = "$0\r\n\r\n";
const std::string kNotInt = error_reply(err::kNotInteger);
const std::string kNotFloat = error_reply(err::kNotFloat);
const std::string kSyntax = error_reply(err::kSyntax);

bool parses_int(std::string_view s, int64_t expected) {
  int64_t v = 12345;
  return parse_int64(s, v) && v == expected;
}

bool rejects_int(std::string_view s) {
  int64_t v = 12345;
  return !parse_int64(s, v) && v == 12345;
}

bool rejects_float(std::string_view s) {
  long double v = 0;
  return !parse_long_double(s, v);
}

Result<StringSetOptions> set_options(std::initializer_list<std::string_view> args) {
  std::vector<std::string_view> v(args);
  return parse_string_set_options(v, SetOptionsFor::kSet);
}

Result<StringSetOptions> getex_options(std::initializer_list<std::string_view> args) {
  std::vector<std::string_view> v(args);
  return parse_string_set_options(v, SetOptionsFor::kGetex);
}

}  // namespace

TEST_CASE("parse_int64 follows string2ll") {
  CHECK(parses_int("0", 0));
  CHECK(parses_int("-1", -1));
  CHECK(parses_int("99", 99));
  CHECK(parses_int("9223372036854775807", std::numeric_limits<int64_t>::max()));
  CHECK(parses_int("-9223372036854775808", std::numeric_limits<int64_t>::min()));
  CHECK(rejects_int(""));
  CHECK(rejects_int("-"));
  CHECK(rejects_int("+1"));
  CHECK(rejects_int(" 1"));
  CHECK(rejects_int("1 "));
  CHECK(rejects_int("01"));
  CHECK(rejects_int("-0"));
  CHECK(rejects_int("00"));
  CHECK(rejects_int("1a"));
  CHECK(rejects_int("1.0"));
  CHECK(rejects_int("9223372036854775808"));
  CHECK(rejects_int("-9223372036854775809"));
  CHECK(rejects_int("18446744073709551616"));
  CHECK(rejects_int("123456789012345678901"));
  CHECK(rejects_int(std::string_view("1\0", 2)));
}

TEST_CASE("parse_long_double follows string2ld") {
  long double v = 0;
  CHECK((parse_long_double("10.5", v) && v == 10.5L));
  CHECK((parse_long_double("3.0e3", v) && v == 3000.0L));
  CHECK((parse_long_double("0x10", v) && v == 16.0L));
  CHECK((parse_long_double("-inf", v) && v < 0));
  CHECK((parse_long_double("1 ", v) == false));
  // A subnormal is accepted even though strtold reports ERANGE; only a flush to zero is not.
  CHECK(parse_long_double("1.5e-4940", v));
  // Unlike options, numbers must use every byte: an embedded NUL is not the end.
  CHECK(rejects_float(std::string_view("7\0x", 3)));
  CHECK(rejects_float(std::string_view("1\0", 2)));
  CHECK(rejects_float(""));
  CHECK(rejects_float(" 1"));
  CHECK(rejects_float("abc"));
  CHECK(rejects_float("nan"));
  CHECK(rejects_float("1e5000"));
  CHECK(rejects_float("1e-5000"));
  CHECK(rejects_float(std::string(5120, '1')));
}

TEST_CASE("format_long_double prints as INCRBYFLOAT stores") {
  CHECK(format_long_double(10.5L) == "10.5");
  CHECK(format_long_double(3000.0L) == "3000");
  CHECK(format_long_double(1.1L + 2.2L) == "3.3");
  CHECK(format_long_double(5e-10L) == "0.0000000005");
  CHECK(format_long_double(-1e-20L) == "0");
  CHECK(format_long_double(-2.5L) == "-2.5");
  CHECK(format_long_double(1e20L) == "100000000000000000000");
}

TEST_CASE("SET option parsing and conflicts") {
  auto o = set_options({"ex", "10", "NX", "get"});
  REQUIRE(o.ok());
  CHECK(o.value().nx);
  CHECK(o.value().get);
  CHECK(o.value().expire == ExpireOption::kEx);
  CHECK(o.value().expire_arg == "10");

  auto last = set_options({"ex", "10", "ex", "20"});
  REQUIRE(last.ok());
  CHECK(last.value().expire_arg == "20");

  CHECK(set_options({"keepttl", "xx"}).ok());
  CHECK(set_options({"pxat", "1"}).value().expire == ExpireOption::kPxat);
  CHECK(set_options({"EXAT", "1"}).value().expire == ExpireOption::kExat);
  CHECK(set_options({"nx", "nx"}).ok());

  for (auto bad : std::vector<std::vector<std::string_view>>{
           {"nx", "xx"},
           {"xx", "nx"},
           {"ex", "10", "px", "100"},
           {"exat", "10", "pxat", "10"},
           {"keepttl", "ex", "10"},
           {"ex", "10", "keepttl"},
           {"persist"},
           {"ex"},
           {"nxx"},
           {std::string_view("nx\0", 3), "xx"},
       }) {
    CHECK(parse_string_set_options(bad, SetOptionsFor::kSet).error() == err::kSyntax);
  }
  // Options are C strings in Redis: what follows a NUL byte is ignored.
  CHECK(set_options({std::string_view("nx\0junk", 7)}).value().nx);
}

TEST_CASE("GETEX option parsing") {
  CHECK(getex_options({"persist"}).value().persist);
  CHECK(getex_options({"px", "5"}).value().expire == ExpireOption::kPx);
  CHECK(getex_options({"ex", "10", "ex", "20"}).value().expire_arg == "20");
  CHECK(getex_options({"nx"}).error() == err::kSyntax);
  CHECK(getex_options({"get"}).error() == err::kSyntax);
  CHECK(getex_options({"keepttl"}).error() == err::kSyntax);
  CHECK(getex_options({"persist", "ex", "10"}).error() == err::kSyntax);
  CHECK(getex_options({"ex", "10", "persist"}).error() == err::kSyntax);
}

TEST_CASE("resolve_expire_ms") {
  CHECK(*resolve_expire_ms(ExpireOption::kEx, "10", kNow) == kNow + 10'000);
  CHECK(*resolve_expire_ms(ExpireOption::kPx, "10", kNow) == kNow + 10);
  CHECK(*resolve_expire_ms(ExpireOption::kExat, "10", kNow) == 10'000);
  CHECK(*resolve_expire_ms(ExpireOption::kPxat, "1", kNow) == 1);
  CHECK(resolve_expire_ms(ExpireOption::kEx, "abc", kNow).error() == err::kNotInteger);
  for (auto bad : {"0", "-1", "9223372036854775807", "9223372036854775"}) {
    CHECK(resolve_expire_ms(ExpireOption::kEx, bad, kNow).error() == err::kInvalidExpireTime);
  }
  CHECK(resolve_expire_ms(ExpireOption::kPx, "9223372036854775807", kNow).error() ==
        err::kInvalidExpireTime);
  CHECK(resolve_expire_ms(ExpireOption::kPxat, "9223372036854775807", kNow).ok());
}

TEST_CASE("GET, SET and their replies") {
  Harness h;
  CHECK(h.run(cmd_get, {"get", "k"}) == kNull);
  CHECK(h.run(cmd_set, {"set", "k", "v"}) == kOk);
  CHECK(h.run(cmd_get, {"get", "k"}) == "$1\r\nv\r\n");
  CHECK(h.run(cmd_set, {"set", "k", "v", "nx", "xx"}) == kSyntax);
  CHECK(h.run(cmd_set, {"set", "k", "w", "nx"}) == kNull);
  CHECK(h.run(cmd_set, {"set", "k", "v", "nx", "nx"}) == kNull);
  CHECK(h.run(cmd_set, {"set", "k", "w", "get", "nx"}) == "$1\r\nv\r\n");
  CHECK(h.run(cmd_set, {"set", "k", "w", "get", "xx"}) == "$1\r\nv\r\n");
  CHECK(h.run(cmd_get, {"get", "k"}) == "$1\r\nw\r\n");
  CHECK(h.run(cmd_set, {"set", "n", "x", "xx"}) == kNull);
  CHECK(h.run(cmd_set, {"set", "n", "x", "get"}) == kNull);
  CHECK(h.run(cmd_get, {"get", "n"}) == "$1\r\nx\r\n");
  CHECK(h.run(cmd_set, {"set", "k", "v", "ex", "abc"}) == kNotInt);
  // Syntax is checked before the expiry value, the expiry value before the key.
  CHECK(h.run(cmd_set, {"set", "k", "v", "ex", "abc", "nx", "xx"}) == kSyntax);
  CHECK(h.run(cmd_set, {"SET", "k", "v", "EX", "0"}) ==
        "-ERR invalid expire time in 'set' command\r\n");
  CHECK(h.run(cmd_set, {"set", "k", "v", "ex", "-1", "get"}) ==
        "-ERR invalid expire time in 'set' command\r\n");
  CHECK(h.run(cmd_set, {"set", "k", "v", "ex", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'set' command\r\n");
  CHECK(h.run(cmd_get, {"get", "k"}) == "$1\r\nw\r\n");
}

TEST_CASE("SET expiry options") {
  Harness h;
  CHECK(h.run(cmd_set, {"set", "k", "v", "ex", "100"}) == kOk);
  CHECK(h.expire_at("k") == kNow + 100'000);
  CHECK(h.run(cmd_set, {"set", "k", "v2", "keepttl"}) == kOk);
  CHECK(h.expire_at("k") == kNow + 100'000);
  CHECK(h.run(cmd_set, {"set", "k", "v3"}) == kOk);
  CHECK(h.expire_at("k") == -1);
  CHECK(h.run(cmd_set, {"set", "k", "v", "px", "1500"}) == kOk);
  CHECK(h.expire_at("k") == kNow + 1500);
  CHECK(h.run(cmd_set, {"set", "k", "v", "exat", "2000000000"}) == kOk);
  CHECK(h.expire_at("k") == 2'000'000'000'000);
  CHECK(h.run(cmd_set, {"set", "k", "v", "pxat", "2000000000123"}) == kOk);
  CHECK(h.expire_at("k") == 2'000'000'000'123);
  // A time already past: Redis replies OK and the key is gone at its next lookup.
  CHECK(h.run(cmd_set, {"set", "k", "v", "pxat", "1"}) == kOk);
  CHECK(h.run(cmd_get, {"get", "k"}) == kNull);
  CHECK_FALSE(h.store.contains("k"));
}

TEST_CASE("SET encodings") {
  Harness h;
  h.run(cmd_set, {"set", "i", "123"});
  CHECK(h.encoding("i") == "int");
  h.run(cmd_set, {"set", "e", "hello"});
  CHECK(h.encoding("e") == "embstr");
  h.run(cmd_set, {"set", "r", std::string(45, 'x')});
  CHECK(h.encoding("r") == "raw");
  h.run(cmd_set, {"set", "z", "0123"});
  CHECK(h.encoding("z") == "embstr");
}

TEST_CASE("SETNX, SETEX, PSETEX") {
  Harness h;
  CHECK(h.run(cmd_setnx, {"setnx", "k", "v"}) == ":1\r\n");
  CHECK(h.run(cmd_setnx, {"setnx", "k", "w"}) == ":0\r\n");
  CHECK(h.run(cmd_get, {"get", "k"}) == "$1\r\nv\r\n");
  CHECK(h.run(cmd_setex, {"setex", "k", "10", "x"}) == kOk);
  CHECK(h.expire_at("k") == kNow + 10'000);
  CHECK(h.run(cmd_psetex, {"psetex", "k", "10", "y"}) == kOk);
  CHECK(h.expire_at("k") == kNow + 10);
  CHECK(h.run(cmd_get, {"get", "k"}) == "$1\r\ny\r\n");
  CHECK(h.run(cmd_setex, {"SETEX", "k", "0", "v"}) ==
        "-ERR invalid expire time in 'setex' command\r\n");
  CHECK(h.run(cmd_psetex, {"psetex", "k", "-1", "v"}) ==
        "-ERR invalid expire time in 'psetex' command\r\n");
  CHECK(h.run(cmd_setex, {"setex", "k", "x", "v"}) == kNotInt);
}

TEST_CASE("GETSET, GETDEL") {
  Harness h;
  CHECK(h.run(cmd_getset, {"getset", "k", "v"}) == kNull);
  h.run(cmd_set, {"set", "k", "v", "ex", "100"});
  CHECK(h.run(cmd_getset, {"getset", "k", "12"}) == "$1\r\nv\r\n");
  CHECK(h.expire_at("k") == -1);
  CHECK(h.encoding("k") == "int");
  CHECK(h.run(cmd_getdel, {"getdel", "k"}) == "$2\r\n12\r\n");
  CHECK_FALSE(h.store.contains("k"));
  CHECK(h.run(cmd_getdel, {"getdel", "k"}) == kNull);
}

TEST_CASE("GETEX") {
  Harness h;
  CHECK(h.run(cmd_getex, {"getex", "k"}) == kNull);
  // A missing key answers null before the expiry is validated.
  CHECK(h.run(cmd_getex, {"getex", "k", "ex", "-5"}) == kNull);
  CHECK(h.run(cmd_getex, {"getex", "k", "ex", "abc"}) == kNull);
  CHECK(h.run(cmd_getex, {"getex", "k", "nx"}) == kSyntax);
  h.run(cmd_set, {"set", "k", "v"});
  CHECK(h.run(cmd_getex, {"getex", "k", "ex", "abc"}) == kNotInt);
  CHECK(h.run(cmd_getex, {"GETEX", "k", "ex", "0"}) ==
        "-ERR invalid expire time in 'getex' command\r\n");
  CHECK(h.run(cmd_getex, {"getex", "k", "ex", "10"}) == "$1\r\nv\r\n");
  CHECK(h.expire_at("k") == kNow + 10'000);
  CHECK(h.run(cmd_getex, {"getex", "k", "pxat", "2000000000000"}) == "$1\r\nv\r\n");
  CHECK(h.expire_at("k") == 2'000'000'000'000);
  CHECK(h.run(cmd_getex, {"getex", "k"}) == "$1\r\nv\r\n");
  CHECK(h.expire_at("k") == 2'000'000'000'000);
  CHECK(h.run(cmd_getex, {"getex", "k", "persist"}) == "$1\r\nv\r\n");
  CHECK(h.expire_at("k") == -1);
  CHECK(h.run(cmd_getex, {"getex", "k", "exat", "1"}) == "$1\r\nv\r\n");
  CHECK_FALSE(h.store.contains("k"));
}

TEST_CASE("MGET, MSET, MSETNX") {
  Harness h;
  CHECK(h.run(cmd_mset, {"mset", "a", "1", "b", "2"}) == kOk);
  CHECK(h.run(cmd_mget, {"mget", "a", "x", "b"}) == "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n");
  CHECK(h.run(cmd_mset, {"mset", "a"}) == "-ERR wrong number of arguments for 'mset' command\r\n");
  CHECK(h.run(cmd_mset, {"MSET", "a", "1", "b"}) ==
        "-ERR wrong number of arguments for 'mset' command\r\n");
  CHECK(h.run(cmd_msetnx, {"msetnx", "a"}) ==
        "-ERR wrong number of arguments for 'msetnx' command\r\n");
  CHECK(h.run(cmd_msetnx, {"msetnx", "c", "3", "a", "9"}) == ":0\r\n");
  CHECK_FALSE(h.store.contains("c"));
  CHECK(h.run(cmd_msetnx, {"msetnx", "c", "3", "d", "4"}) == ":1\r\n");
  CHECK(h.run(cmd_get, {"get", "d"}) == "$1\r\n4\r\n");
  h.run(cmd_set, {"set", "t", "v", "ex", "100"});
  h.run(cmd_mset, {"mset", "t", "w"});
  CHECK(h.expire_at("t") == -1);
}

TEST_CASE("APPEND and STRLEN") {
  Harness h;
  CHECK(h.run(cmd_strlen, {"strlen", "k"}) == ":0\r\n");
  CHECK(h.run(cmd_append, {"append", "k", "12"}) == ":2\r\n");
  CHECK(h.encoding("k") == "int");
  h.run(cmd_set, {"set", "k", "ab", "ex", "100"});
  CHECK(h.run(cmd_append, {"append", "k", "cd"}) == ":4\r\n");
  CHECK(h.encoding("k") == "raw");
  CHECK(h.expire_at("k") == kNow + 100'000);
  CHECK(h.run(cmd_get, {"get", "k"}) == "$4\r\nabcd\r\n");
  CHECK(h.run(cmd_strlen, {"strlen", "k"}) == ":4\r\n");
  h.run(cmd_set, {"set", "e", "x"});
  CHECK(h.run(cmd_append, {"append", "e", ""}) == ":1\r\n");
  CHECK(h.encoding("e") == "raw");
}

TEST_CASE("INCR family") {
  Harness h;
  CHECK(h.run(cmd_incr, {"incr", "n"}) == ":1\r\n");
  CHECK(h.run(cmd_incrby, {"incrby", "n", "41"}) == ":42\r\n");
  CHECK(h.run(cmd_decr, {"decr", "n"}) == ":41\r\n");
  CHECK(h.run(cmd_decrby, {"decrby", "n", "-9"}) == ":50\r\n");
  CHECK(h.encoding("n") == "int");
  CHECK(h.run(cmd_incrby, {"incrby", "n", "abc"}) == kNotInt);
  CHECK(h.run(cmd_incrby, {"incrby", "n", " 1"}) == kNotInt);
  CHECK(h.run(cmd_decrby, {"decrby", "n", "-9223372036854775808"}) ==
        "-ERR decrement would overflow\r\n");
  // The increment is checked before the stored value.
  h.run(cmd_set, {"set", "s", "v"});
  CHECK(h.run(cmd_decrby, {"decrby", "s", "-9223372036854775808"}) ==
        "-ERR decrement would overflow\r\n");
  CHECK(h.run(cmd_incr, {"incr", "s"}) == kNotInt);
  for (auto bad : {" 1", "01", "1 ", "123456789012345678901", "1.5"}) {
    h.run(cmd_set, {"set", "p", bad});
    CHECK(h.run(cmd_incr, {"incr", "p"}) == kNotInt);
  }
  const std::string overflow = error_reply(err::kOverflow);
  h.run(cmd_set, {"set", "p", "9223372036854775807"});
  CHECK(h.run(cmd_incr, {"incr", "p"}) == overflow);
  h.run(cmd_set, {"set", "p", "-9223372036854775808"});
  CHECK(h.run(cmd_decr, {"decr", "p"}) == overflow);
  CHECK(h.run(cmd_incrby, {"incrby", "p", "-1"}) == overflow);
  CHECK(h.run(cmd_get, {"get", "p"}) == "$20\r\n-9223372036854775808\r\n");
  h.run(cmd_set, {"set", "t", "5", "ex", "100"});
  CHECK(h.run(cmd_incr, {"incr", "t"}) == ":6\r\n");
  CHECK(h.expire_at("t") == kNow + 100'000);
}

TEST_CASE("INCRBYFLOAT") {
  Harness h;
  h.run(cmd_set, {"set", "f", "10.5"});
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "f", "0"}) == "$4\r\n10.5\r\n");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "g", "3.0e3"}) == "$4\r\n3000\r\n");
  CHECK(h.encoding("g") == "embstr");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "h", "1.1"}) == "$3\r\n1.1\r\n");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "h", "2.2"}) == "$3\r\n3.3\r\n");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "i", "5e-10"}) == "$12\r\n0.0000000005\r\n");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "j", "-1e-20"}) == "$1\r\n0\r\n");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "j", "0x10"}) == "$2\r\n16\r\n");
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "j", "inf"}) == error_reply(err::kIncrFloatNaN));
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "j", "1e5000"}) == kNotFloat);
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "j", "abc"}) == kNotFloat);
  h.run(cmd_set, {"set", "s", "abc"});
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "s", "1"}) == kNotFloat);
  h.run(cmd_set, {"set", "o", "5", "ex", "100"});
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "o", "1"}) == "$1\r\n6\r\n");
  CHECK(h.encoding("o") == "embstr");
  CHECK(h.expire_at("o") == kNow + 100'000);
  CHECK(h.run(cmd_incrbyfloat, {"incrbyfloat", "m", "1e4000"}).substr(0, 8) == "$4000\r\n9");
  CHECK(h.encoding("m") == "raw");
}

TEST_CASE("GETRANGE and SUBSTR") {
  Harness h;
  CHECK(h.run(cmd_getrange, {"getrange", "k", "0", "1"}) == kEmpty);
  CHECK(h.run(cmd_getrange, {"getrange", "k", "a", "1"}) == kNotInt);
  CHECK(h.run(cmd_getrange, {"getrange", "k", "0", "b"}) == kNotInt);
  h.run(cmd_set, {"set", "s", "Hello"});
  CHECK(h.run(cmd_getrange, {"getrange", "s", "0", "-1"}) == "$5\r\nHello\r\n");
  CHECK(h.run(cmd_getrange, {"getrange", "s", "-3", "-1"}) == "$3\r\nllo\r\n");
  CHECK(h.run(cmd_getrange, {"getrange", "s", "-1", "-3"}) == kEmpty);
  CHECK(h.run(cmd_getrange, {"getrange", "s", "5", "10"}) == kEmpty);
  CHECK(h.run(cmd_getrange, {"getrange", "s", "4", "10"}) == "$1\r\no\r\n");
  CHECK(h.run(cmd_getrange, {"getrange", "s", "-100", "2"}) == "$3\r\nHel\r\n");
  CHECK(h.run(cmd_getrange, {"getrange", "s", "3", "1"}) == kEmpty);
  CHECK(h.run(cmd_getrange, {"getrange", "s", "0", "-100"}) == "$1\r\nH\r\n");
  CHECK(h.run(cmd_getrange, {"getrange", "s", "-9223372036854775808", "9223372036854775807"}) ==
        "$5\r\nHello\r\n");
  CHECK(h.run(cmd_getrange, {"substr", "s", "1", "2"}) == "$2\r\nel\r\n");
  h.run(cmd_set, {"set", "n", "-12345"});
  CHECK(h.run(cmd_getrange, {"getrange", "n", "0", "2"}) == "$3\r\n-12\r\n");
}

TEST_CASE("SETRANGE") {
  Harness h;
  CHECK(h.run(cmd_setrange, {"setrange", "k", "abc", "x"}) == kNotInt);
  CHECK(h.run(cmd_setrange, {"setrange", "k", "-1", "x"}) == error_reply(err::kOutOfRangeOffset));
  CHECK(h.run(cmd_setrange, {"setrange", "k", "0", ""}) == ":0\r\n");
  CHECK(h.run(cmd_setrange, {"setrange", "k", "100", ""}) == ":0\r\n");
  CHECK_FALSE(h.store.contains("k"));
  const std::string too_long = error_reply(err::kStringTooLong);
  CHECK(h.run(cmd_setrange, {"setrange", "k", "536870912", "x"}) == too_long);
  CHECK(h.run(cmd_setrange, {"setrange", "k", "536870911", "xy"}) == too_long);
  CHECK(h.run(cmd_setrange, {"setrange", "k", "9223372036854775807", "x"}) == too_long);
  CHECK_FALSE(h.store.contains("k"));
  CHECK(h.run(cmd_setrange, {"setrange", "k", "3", "ab"}) == ":5\r\n");
  CHECK(h.run(cmd_get, {"get", "k"}) == std::string("$5\r\n\0\0\0ab\r\n", 11));
  CHECK(h.encoding("k") == "raw");
  h.run(cmd_set, {"set", "s", "Hello World", "ex", "100"});
  CHECK(h.run(cmd_setrange, {"setrange", "s", "6", "Redis"}) == ":11\r\n");
  CHECK(h.run(cmd_get, {"get", "s"}) == "$11\r\nHello Redis\r\n");
  CHECK(h.expire_at("s") == kNow + 100'000);
  CHECK(h.encoding("s") == "raw");
  h.run(cmd_set, {"set", "e", "x"});
  CHECK(h.run(cmd_setrange, {"setrange", "e", "0", ""}) == ":1\r\n");
  CHECK(h.encoding("e") == "embstr");
  // Offset errors come before size errors, and an empty value never errs on size.
  CHECK(h.run(cmd_setrange, {"setrange", "e", "600000000", ""}) == ":1\r\n");
}

TEST_CASE("APPEND and SETRANGE obey the configured proto-max-bulk-len") {
  Harness h;
  FakeServer server;
  h.server = &server;
  const std::string too_long = error_reply(err::kStringTooLong);
  CHECK(h.run(cmd_setrange, {"setrange", "k", "1999999", "xy"}) == too_long);
  CHECK(server.config_reads == 1);
  CHECK(h.run(cmd_setrange, {"setrange", "k", "1999999", "x"}) == ":2000000\r\n");
  CHECK(h.run(cmd_append, {"append", "k", "y"}) == too_long);
  // Results within the smallest allowed limit never read the configuration.
  const int reads = server.config_reads;
  CHECK(h.run(cmd_setrange, {"setrange", "s", "10", "x"}) == ":11\r\n");
  CHECK(h.run(cmd_append, {"append", "s", "yz"}) == ":13\r\n");
  CHECK(server.config_reads == reads);
  server.bulk_len = "536870912";
  CHECK(h.run(cmd_append, {"append", "k", "y"}) == ":2000001\r\n");
}

TEST_CASE("String writes report the keys they changed, and no-ops report nothing") {
  using Keys = std::vector<std::string>;
  Harness h;
  CHECK(h.changed_by(cmd_set, {"SET", "k", "v"}) == Keys{"k"});
  CHECK(h.changed_by(cmd_set, {"SET", "k", "v", "NX"}).empty());
  CHECK(h.changed_by(cmd_set, {"SET", "missing", "v", "XX"}).empty());
  CHECK(h.changed_by(cmd_setnx, {"SETNX", "k", "v"}).empty());
  CHECK(h.changed_by(cmd_setnx, {"SETNX", "n", "v"}) == Keys{"n"});
  CHECK(h.changed_by(cmd_setex, {"SETEX", "e", "0", "v"}).empty());
  CHECK(h.changed_by(cmd_setex, {"PSETEX", "e", "100", "v"}) == Keys{"e"});
  CHECK(h.changed_by(cmd_getset, {"GETSET", "k", "w"}) == Keys{"k"});
  CHECK(h.changed_by(cmd_getdel, {"GETDEL", "missing"}).empty());
  CHECK(h.changed_by(cmd_getdel, {"GETDEL", "n"}) == Keys{"n"});
  CHECK(h.changed_by(cmd_getex, {"GETEX", "k"}).empty());
  CHECK(h.changed_by(cmd_getex, {"GETEX", "k", "PERSIST"}).empty());
  CHECK(h.changed_by(cmd_getex, {"GETEX", "missing", "EX", "10"}).empty());
  CHECK(h.changed_by(cmd_getex, {"GETEX", "k", "EX", "10"}) == Keys{"k"});
  CHECK(h.changed_by(cmd_getex, {"GETEX", "k", "PERSIST"}) == Keys{"k"});
  CHECK(h.changed_by(cmd_mset, {"MSET", "a", "1", "b", "2"}) == Keys{"a", "b"});
  CHECK(h.changed_by(cmd_msetnx, {"MSETNX", "a", "1", "c", "2"}).empty());
  CHECK(h.changed_by(cmd_msetnx, {"MSETNX", "c", "1", "d", "2"}) == Keys{"c", "d"});
  CHECK(h.changed_by(cmd_append, {"APPEND", "a", ""}) == Keys{"a"});
  CHECK(h.changed_by(cmd_incr, {"INCR", "a"}) == Keys{"a"});
  CHECK(h.changed_by(cmd_incr, {"INCR", "k"}).empty());  // not an integer
  CHECK(h.changed_by(cmd_decrby, {"DECRBY", "a", "5"}) == Keys{"a"});
  CHECK(h.changed_by(cmd_incrbyfloat, {"INCRBYFLOAT", "a", "1.5"}) == Keys{"a"});
  CHECK(h.changed_by(cmd_setrange, {"SETRANGE", "a", "0", ""}).empty());
  CHECK(h.changed_by(cmd_setrange, {"SETRANGE", "missing", "3", ""}).empty());
  CHECK(h.changed_by(cmd_setrange, {"SETRANGE", "a", "0", "x"}) == Keys{"a"});
}
