// Unit tests for the keyspace command handlers: each runs a handler on a fresh Store and compares
// the reply bytes with what redis-server 7.0.15 sends for the same commands.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "engine/commands/keys.h"
#include "engine/commands/keyspace.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_writer.h"
#include "tests/unit/command_harness.h"

namespace {

using namespace ringkv::engine;

using ringkv::test::kNow;

// The handler harness with shortcuts for writing strings.
struct Keyspace : ringkv::test::CommandHarness {
  void set(std::string_view key, std::string_view value) {
    store.set_string(key, value, Expiry::none());
  }
  void set_with_ttl(std::string_view key, std::string_view value, int64_t ttl_ms) {
    store.set_string(key, value, Expiry::at(kNow + ttl_ms));
  }
};

std::string err(std::string_view text) { return "-" + std::string(text) + "\r\n"; }
std::string bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

// The bulk strings of a flat RESP array of bulks, in order.
std::vector<std::string> bulks_of(std::string_view reply) {
  std::vector<std::string> items;
  size_t pos = reply.find("\r\n") + 2;  // skip the array header
  while (pos < reply.size()) {
    const size_t len_end = reply.find("\r\n", pos);
    const size_t len = std::stoul(std::string(reply.substr(pos + 1, len_end - pos - 1)));
    items.emplace_back(reply.substr(len_end + 2, len));
    pos = len_end + 2 + len + 2;
  }
  return items;
}

const std::string kIntErr = err("ERR value is not an integer or out of range");
const std::string kSyntaxErr = err("ERR syntax error");

}  // namespace

TEST_CASE("DEL and UNLINK count the keys they removed") {
  Keyspace ks;
  ks.set("a", "1");
  ks.set("b", "2");
  CHECK(ks.run(cmd_del, {"DEL", "a", "a", "nokey"}) == ":1\r\n");
  CHECK(ks.run(cmd_del, {"UNLINK", "b", "a"}) == ":1\r\n");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":0\r\n");
}

TEST_CASE("DEL does not count an expired key") {
  Keyspace ks;
  ks.set_with_ttl("a", "1", 1000);
  // As in Redis, a key expires once the clock is past its time, not at it.
  ks.store.set_now(kNow + 1000);
  CHECK(ks.run(cmd_ttl, {"PTTL", "a"}) == ":0\r\n");
  ks.store.set_now(kNow + 1001);
  CHECK(ks.run(cmd_del, {"DEL", "a"}) == ":0\r\n");
}

TEST_CASE("EXISTS counts repeated keys, TOUCH counts existing keys") {
  Keyspace ks;
  ks.set("k", "v");
  CHECK(ks.run(cmd_exists, {"EXISTS", "k", "k", "nokey"}) == ":2\r\n");
  CHECK(ks.run(cmd_touch, {"TOUCH", "k", "nokey", "k"}) == ":2\r\n");
  CHECK(ks.run(cmd_touch, {"TOUCH", "a", "b"}) == ":0\r\n");
}

TEST_CASE("TYPE") {
  Keyspace ks;
  ks.set("k", "v");
  CHECK(ks.run(cmd_type, {"TYPE", "k"}) == "+string\r\n");
  CHECK(ks.run(cmd_type, {"TYPE", "nokey"}) == "+none\r\n");
}

TEST_CASE("EXPIRE family option errors, in Redis's order") {
  Keyspace ks;
  ks.set("k", "v");
  const std::string nx_err =
      err("ERR NX and XX, GT or LT options at the same time are not compatible");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "10", "NX", "XX"}) == nx_err);
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "10", "nx", "Gt"}) == nx_err);
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "10", "NX", "LT"}) == nx_err);
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "10", "GT", "LT"}) ==
        err("ERR GT and LT options at the same time are not compatible"));
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "10", "foo"}) == err("ERR Unsupported option foo"));
  // Options are checked before the time, and before the key's existence.
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "abc", "foo"}) == err("ERR Unsupported option foo"));
  CHECK(ks.run(cmd_expire, {"EXPIRE", "nokey", "10", "NX", "XX"}) == nx_err);
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "abc"}) == kIntErr);
  CHECK(ks.run(cmd_expire, {"EXPIRE", "nokey", "abc"}) == kIntErr);
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "+5"}) == kIntErr);
  // Repeating one option is fine.
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "100", "xx", "xx"}) == ":0\r\n");
}

TEST_CASE("EXPIRE family overflow names the command in lowercase") {
  Keyspace ks;
  ks.set("k", "v");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "9223372036854775"}) ==
        err("ERR invalid expire time in 'expire' command"));
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "-9223372036854776"}) ==
        err("ERR invalid expire time in 'expire' command"));
  CHECK(ks.run(cmd_expire, {"PExpire", "k", "9223372036854775807"}) ==
        err("ERR invalid expire time in 'pexpire' command"));
  CHECK(ks.run(cmd_expire, {"EXPIREAT", "k", "9223372036854776"}) ==
        err("ERR invalid expire time in 'expireat' command"));
  // Absolute times have no base to add, so the largest value is accepted.
  CHECK(ks.run(cmd_expire, {"PEXPIREAT", "k", "9223372036854775807"}) == ":1\r\n");
  CHECK(ks.run(cmd_expiretime, {"PEXPIRETIME", "k"}) == ":9223372036854775807\r\n");
}

TEST_CASE("EXPIRE sets relative and absolute TTLs") {
  Keyspace ks;
  ks.set("k", "v");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "nokey", "10"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "100"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"TTL", "k"}) == ":100\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "k"}) == ":100000\r\n");
  CHECK(ks.run(cmd_expire, {"PEXPIRE", "k", "1500"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "k"}) == ":1500\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIREAT", "k", "1700000050"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"TTL", "k"}) == ":50\r\n");
  CHECK(ks.run(cmd_expiretime, {"EXPIRETIME", "k"}) == ":1700000050\r\n");
  CHECK(ks.run(cmd_expire, {"pexpireat", "k", "1700000060123"}) == ":1\r\n");
  CHECK(ks.run(cmd_expiretime, {"PEXPIRETIME", "k"}) == ":1700000060123\r\n");
}

TEST_CASE("EXPIRE with a time not in the future deletes the key and replies 1") {
  Keyspace ks;
  ks.set("a", "1");
  ks.set("b", "1");
  ks.set("c", "1");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "a", "0"}) == ":1\r\n");
  CHECK(ks.run(cmd_expire, {"PEXPIRE", "b", "-5"}) == ":1\r\n");
  CHECK(ks.run(cmd_expire, {"PEXPIREAT", "c", std::to_string(kNow)}) == ":1\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "a", "b", "c"}) == ":0\r\n");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":0\r\n");
}

TEST_CASE("EXPIRE NX XX GT LT") {
  Keyspace ks;
  ks.set("k", "v");
  // No TTL counts as infinite: GT fails, LT passes, XX fails, NX passes.
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "100", "GT"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "100", "XX"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "100", "LT"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"TTL", "k"}) == ":100\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "50", "LT"}) == ":1\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "50", "LT"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "50", "GT"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "60", "GT"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"TTL", "k"}) == ":60\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "70", "NX"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "70", "XX"}) == ":1\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "80", "XX", "GT"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"TTL", "k"}) == ":80\r\n");
  // A failed condition leaves a past time harmless; a passing one deletes.
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "-5", "GT"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "-5", "NX"}) == ":0\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "k", "-5", "LT"}) == ":1\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "k"}) == ":0\r\n");
  ks.set("p", "v");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "p", "-5", "NX"}) == ":1\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "p"}) == ":0\r\n");
}

TEST_CASE("TTL and PTTL: missing, persistent, rounding, expiry") {
  Keyspace ks;
  CHECK(ks.run(cmd_ttl, {"TTL", "nokey"}) == ":-2\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "nokey"}) == ":-2\r\n");
  ks.set("k", "v");
  CHECK(ks.run(cmd_ttl, {"TTL", "k"}) == ":-1\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "k"}) == ":-1\r\n");
  // Seconds round to nearest: 1499 ms is 1 s, 1500 ms is 2 s.
  ks.set_with_ttl("r", "v", 1499);
  CHECK(ks.run(cmd_ttl, {"TTL", "r"}) == ":1\r\n");
  ks.set_with_ttl("r", "v", 1500);
  CHECK(ks.run(cmd_ttl, {"TTL", "r"}) == ":2\r\n");
  ks.set_with_ttl("r", "v", 499);
  CHECK(ks.run(cmd_ttl, {"TTL", "r"}) == ":0\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "r"}) == ":499\r\n");
  ks.store.set_now(kNow + 499);
  CHECK(ks.run(cmd_ttl, {"TTL", "r"}) == ":0\r\n");
  ks.store.set_now(kNow + 500);
  CHECK(ks.run(cmd_ttl, {"TTL", "r"}) == ":-2\r\n");
}

TEST_CASE("EXPIRETIME and PEXPIRETIME") {
  Keyspace ks;
  CHECK(ks.run(cmd_expiretime, {"EXPIRETIME", "nokey"}) == ":-2\r\n");
  CHECK(ks.run(cmd_expiretime, {"PEXPIRETIME", "nokey"}) == ":-2\r\n");
  ks.set("k", "v");
  CHECK(ks.run(cmd_expiretime, {"EXPIRETIME", "k"}) == ":-1\r\n");
  ks.set_with_ttl("t", "v", 10'499);
  CHECK(ks.run(cmd_expiretime, {"PEXPIRETIME", "t"}) == ":1700000010499\r\n");
  CHECK(ks.run(cmd_expiretime, {"EXPIRETIME", "t"}) == ":1700000010\r\n");
  ks.set_with_ttl("t", "v", 10'500);
  CHECK(ks.run(cmd_expiretime, {"EXPIRETIME", "t"}) == ":1700000011\r\n");
}

TEST_CASE("PERSIST") {
  Keyspace ks;
  CHECK(ks.run(cmd_persist, {"PERSIST", "nokey"}) == ":0\r\n");
  ks.set("k", "v");
  CHECK(ks.run(cmd_persist, {"PERSIST", "k"}) == ":0\r\n");
  ks.set_with_ttl("t", "v", 5000);
  CHECK(ks.run(cmd_persist, {"PERSIST", "t"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"TTL", "t"}) == ":-1\r\n");
}

TEST_CASE("RENAME and RENAMENX") {
  Keyspace ks;
  const std::string no_such_key = err("ERR no such key");
  CHECK(ks.run(cmd_rename, {"RENAME", "nokey", "x"}) == no_such_key);
  CHECK(ks.run(cmd_rename, {"RENAME", "nokey", "nokey"}) == no_such_key);
  CHECK(ks.run(cmd_renamenx, {"RENAMENX", "nokey", "x"}) == no_such_key);
  ks.set_with_ttl("k", "v", 60'000);
  CHECK(ks.run(cmd_rename, {"RENAME", "k", "k"}) == "+OK\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "k"}) == ":60000\r\n");
  CHECK(ks.run(cmd_renamenx, {"RENAMENX", "k", "k"}) == ":0\r\n");
  ks.set("other", "o");
  CHECK(ks.run(cmd_renamenx, {"RENAMENX", "k", "other"}) == ":0\r\n");
  CHECK(ks.run(cmd_renamenx, {"RENAMENX", "k", "k2"}) == ":1\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "k"}) == ":0\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "k2"}) == ":60000\r\n");
  // RENAME replaces the destination and carries the TTL.
  CHECK(ks.run(cmd_rename, {"RENAME", "k2", "other"}) == "+OK\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "other"}) == ":60000\r\n");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":1\r\n");
}

TEST_CASE("COPY: options, errors and the single database") {
  Keyspace ks;
  ks.set_with_ttl("k", "v", 60'000);
  const std::string out_of_range = err("ERR DB index is out of range");
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k"}) ==
        err("ERR source and destination objects are the same"));
  CHECK(ks.run(cmd_copy, {"COPY", "nokey", "nokey"}) ==
        err("ERR source and destination objects are the same"));
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k", "DB", "1"}) == out_of_range);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB", "16"}) == out_of_range);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB", "-1"}) == out_of_range);
  CHECK(ks.run(cmd_copy, {"COPY", "nokey", "k3", "DB", "99"}) == out_of_range);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB", "x"}) == kIntErr);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB", "00"}) == kIntErr);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB", "4294967296"}) ==
        err("ERR value is out of range, value must between -2147483648 and 2147483647"));
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB"}) == kSyntaxErr);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "foo"}) == kSyntaxErr);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "DB", "9", "foo"}) == out_of_range);
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "foo", "DB", "9"}) == kSyntaxErr);
  CHECK(ks.run(cmd_copy, {"COPY", "nokey", "k3"}) == ":0\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "k3"}) == ":0\r\n");

  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "REPLACE", "DB", "0"}) == ":1\r\n");
  CHECK(ks.run(cmd_ttl, {"PTTL", "k3"}) == ":60000\r\n");
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3"}) == ":0\r\n");
  CHECK(ks.run(cmd_copy, {"COPY", "k", "k3", "replace"}) == ":1\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "k", "k3"}) == ":2\r\n");
}

TEST_CASE("KEYS matches globs") {
  Keyspace ks;
  CHECK(ks.run(cmd_keys, {"KEYS", "*"}) == "*0\r\n");
  for (std::string_view k : {"foo_a", "foo_b", "foo_c", "key_x", "key_y", "key_z"}) ks.set(k, "1");
  ks.set("", "empty");
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(bulks_of(ks.run(cmd_keys, {"KEYS", "foo*"}))) ==
        std::vector<std::string>{"foo_a", "foo_b", "foo_c"});
  CHECK(sorted(bulks_of(ks.run(cmd_keys, {"KEYS", "key_[xy]"}))) ==
        std::vector<std::string>{"key_x", "key_y"});
  // A lone "*" returns every key, the empty one included.
  CHECK(bulks_of(ks.run(cmd_keys, {"KEYS", "*"})).size() == 7);
  CHECK(bulks_of(ks.run(cmd_keys, {"KEYS", "**"})).size() == 6);
  CHECK(ks.run(cmd_keys, {"KEYS", "nomatch*"}) == "*0\r\n");
}

TEST_CASE("KEYS skips expired keys") {
  Keyspace ks;
  ks.set("live", "1");
  ks.set_with_ttl("dying", "1", 10);
  ks.store.set_now(kNow + 11);
  CHECK(ks.run(cmd_keys, {"KEYS", "*"}) == "*1\r\n" + bulk("live"));
}

TEST_CASE("SCAN argument errors") {
  Keyspace ks;
  ks.set("k", "v");
  const std::string bad_cursor = err("ERR invalid cursor");
  CHECK(ks.run(cmd_scan, {"SCAN", " 0"}) == bad_cursor);
  CHECK(ks.run(cmd_scan, {"SCAN", "0 "}) == bad_cursor);
  CHECK(ks.run(cmd_scan, {"SCAN", "abc"}) == bad_cursor);
  CHECK(ks.run(cmd_scan, {"SCAN", "0x10"}) == bad_cursor);
  CHECK(ks.run(cmd_scan, {"SCAN", "18446744073709551616"}) == bad_cursor);
  CHECK(ks.run(cmd_scan, {"SCAN", "x", "COUNT", "0"}) == bad_cursor);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "COUNT", "0"}) == kSyntaxErr);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "COUNT", "-1", "COUNT", "x"}) == kSyntaxErr);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "COUNT", "x"}) == kIntErr);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "COUNT"}) == kSyntaxErr);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "MATCH"}) == kSyntaxErr);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "TYPE"}) == kSyntaxErr);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "FOO", "bar"}) == kSyntaxErr);
}

TEST_CASE("SCAN cursors parse as strtoul does") {
  Keyspace ks;
  ks.set("k", "v");
  const std::string whole = "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n";
  CHECK(ks.run(cmd_scan, {"SCAN", "0"}) == whole);
  CHECK(ks.run(cmd_scan, {"SCAN", ""}) == whole);
  CHECK(ks.run(cmd_scan, {"SCAN", "+0"}) == whole);
  CHECK(ks.run(cmd_scan, {"SCAN", "-0"}) == whole);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "MATCH", "*", "COUNT", "1000"}) == whole);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "TYPE", "STRING"}) == whole);
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "TYPE", "foo"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
  CHECK(ks.run(cmd_scan, {"SCAN", "0", "MATCH", "x*"}) == "*2\r\n$1\r\n0\r\n*0\r\n");
}

TEST_CASE("SCAN walks every key exactly as far as the cursor says") {
  Keyspace ks;
  std::set<std::string> expected;
  for (int i = 0; i < 500; ++i) {
    const std::string key = "key:" + std::to_string(i);
    ks.set(key, "v");
    if (i % 10 == 3) expected.insert(key);
  }
  std::set<std::string> all;
  std::set<std::string> matched;
  std::string cursor = "0";
  int calls = 0;
  do {
    const std::string reply = ks.run(cmd_scan, {"SCAN", cursor, "COUNT", "20"});
    // "*2\r\n$<n>\r\n<cursor>\r\n*<m>\r\n..."
    const size_t cursor_start = reply.find("\r\n", 4) + 2;
    const size_t cursor_end = reply.find("\r\n", cursor_start);
    cursor = reply.substr(cursor_start, cursor_end - cursor_start);
    for (std::string& key : bulks_of(reply.substr(cursor_end + 2))) all.insert(std::move(key));
    ++calls;
  } while (cursor != "0" && calls < 1000);
  CHECK(cursor == "0");
  CHECK(all.size() == 500);
  CHECK(calls > 5);  // COUNT 20 over 500 keys takes many calls

  cursor = "0";
  calls = 0;
  do {
    const std::string reply = ks.run(cmd_scan, {"SCAN", cursor, "MATCH", "key:*3", "COUNT", "50"});
    const size_t cursor_start = reply.find("\r\n", 4) + 2;
    const size_t cursor_end = reply.find("\r\n", cursor_start);
    cursor = reply.substr(cursor_start, cursor_end - cursor_start);
    for (std::string& key : bulks_of(reply.substr(cursor_end + 2))) matched.insert(std::move(key));
    ++calls;
  } while (cursor != "0" && calls < 1000);
  CHECK(matched == expected);
}

TEST_CASE("RANDOMKEY, DBSIZE") {
  Keyspace ks;
  CHECK(ks.run(cmd_randomkey, {"RANDOMKEY"}) == "$-1\r\n");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":0\r\n");
  ks.set("only", "1");
  CHECK(ks.run(cmd_randomkey, {"RANDOMKEY"}) == bulk("only"));
  ks.set("second", "2");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":2\r\n");
  const std::string r = ks.run(cmd_randomkey, {"RANDOMKEY"});
  CHECK((r == bulk("only") || r == bulk("second")));
}

TEST_CASE("FLUSHALL and FLUSHDB") {
  Keyspace ks;
  ks.set("a", "1");
  CHECK(ks.run(cmd_flushall, {"FLUSHALL", "x"}) == kSyntaxErr);
  CHECK(ks.run(cmd_flushall, {"FLUSHALL", "sync", "x"}) == kSyntaxErr);
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":1\r\n");
  CHECK(ks.run(cmd_flushall, {"FLUSHALL"}) == "+OK\r\n");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":0\r\n");
  ks.set("a", "1");
  CHECK(ks.run(cmd_flushall, {"FLUSHDB", "ASYNC"}) == "+OK\r\n");
  CHECK(ks.run(cmd_dbsize, {"DBSIZE"}) == ":0\r\n");
  ks.set("a", "1");
  CHECK(ks.run(cmd_flushall, {"flushall", "Sync"}) == "+OK\r\n");
  CHECK(ks.run(cmd_exists, {"EXISTS", "a"}) == ":0\r\n");
}

TEST_CASE("OBJECT ENCODING, REFCOUNT, FREQ on strings and missing keys") {
  Keyspace ks;
  ks.set("n", "100");
  ks.set("big", "10000");
  ks.set("neg", "-1");
  ks.set("s", "hello");
  ks.set("r", std::string(45, 'x'));
  ks.set("m", "-0");
  CHECK(ks.run(cmd_object_encoding, {"OBJECT", "ENCODING", "n"}) == bulk("int"));
  CHECK(ks.run(cmd_object_encoding, {"OBJECT", "ENCODING", "s"}) == bulk("embstr"));
  CHECK(ks.run(cmd_object_encoding, {"OBJECT", "ENCODING", "r"}) == bulk("raw"));
  CHECK(ks.run(cmd_object_encoding, {"OBJECT", "ENCODING", "m"}) == bulk("embstr"));
  CHECK(ks.run(cmd_object_encoding, {"OBJECT", "ENCODING", "nokey"}) == "$-1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "n"}) == ":2147483647\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "big"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "neg"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "s"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "nokey"}) == "$-1\r\n");
  CHECK(ks.run(cmd_object_freq, {"OBJECT", "FREQ", "s"}) ==
        err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
            "note that when switching between policies at runtime LRU and LFU data will take "
            "some time to adjust."));
  CHECK(ks.run(cmd_object_freq, {"OBJECT", "FREQ", "nokey"}) == "$-1\r\n");
  CHECK(ks.run(cmd_object_idletime, {"OBJECT", "IDLETIME", "nokey"}) == "$-1\r\n");
}

TEST_CASE("OBJECT REFCOUNT: a COPY, or a write under an LRU/LFU maxmemory policy, is not shared") {
  Keyspace ks;
  ks.set("n", "5");
  CHECK(ks.run(cmd_copy, {"COPY", "n", "c"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "n"}) == ":2147483647\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "c"}) == ":1\r\n");
  // A rename or a TTL keeps the object; a new write makes a new (shared) one.
  CHECK(ks.run(cmd_rename, {"RENAME", "c", "r"}) == "+OK\r\n");
  CHECK(ks.run(cmd_expire, {"EXPIRE", "r", "100"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "r"}) == ":1\r\n");
  ks.set("r", "6");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "r"}) == ":2147483647\r\n");
  // Decided when the value is written: a policy change later leaves it as it is.
  ks.store.set_access_policy(AccessPolicy{.shared_integers = false});
  ks.set("u", "7");
  ks.store.set_access_policy(AccessPolicy{});
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "u"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_refcount, {"OBJECT", "REFCOUNT", "r"}) == ":2147483647\r\n");
}

TEST_CASE("OBJECT IDLETIME follows the LRU clock, and only TOUCH-like lookups reset it") {
  Keyspace ks;
  ks.set("k", "v");
  CHECK(ks.run(cmd_object_idletime, {"OBJECT", "IDLETIME", "k"}) == ":0\r\n");
  ks.store.set_now(kNow + 5'000);
  const std::string idle = ks.run(cmd_object_idletime, {"OBJECT", "IDLETIME", "k"});
  // The LRU clock ticks in whole seconds, so 5 s may read as 4 or 5 depending on the phase.
  CHECK((idle == ":5\r\n" || idle == ":4\r\n"));
  // TTL, TYPE, EXISTS and OBJECT leave the access time alone, as in Redis.
  ks.run(cmd_ttl, {"TTL", "k"});
  ks.run(cmd_type, {"TYPE", "k"});
  ks.run(cmd_exists, {"EXISTS", "k"});
  CHECK(ks.run(cmd_object_idletime, {"OBJECT", "IDLETIME", "k"}) == idle);
  // TOUCH resets it.
  CHECK(ks.run(cmd_touch, {"TOUCH", "k"}) == ":1\r\n");
  CHECK(ks.run(cmd_object_idletime, {"OBJECT", "IDLETIME", "k"}) == ":0\r\n");
}

TEST_CASE("OBJECT HELP prints Redis's lines as simple strings") {
  Keyspace ks;
  const std::string reply = ks.run(cmd_object_help, {"OBJECT", "HELP"});
  CHECK(reply.rfind("*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
                    "+ENCODING <key>\r\n",
                    0) == 0);
  CHECK(reply.size() > 600);
  CHECK(std::string_view(reply).ends_with("+HELP\r\n+    Prints this help.\r\n"));
}

TEST_CASE("Keyspace writes report the keys they changed, and no-ops report nothing") {
  using Keys = std::vector<std::string>;
  Keyspace ks;
  ks.set("a", "1");
  ks.set("b", "2");
  CHECK(ks.changed_by(cmd_del, {"DEL", "a", "missing", "b"}) == Keys{"a", "b"});
  CHECK(ks.changed_by(cmd_del, {"UNLINK", "a"}).empty());
  ks.set("k", "v");
  CHECK(ks.changed_by(cmd_expire, {"EXPIRE", "missing", "10"}).empty());
  CHECK(ks.changed_by(cmd_expire, {"EXPIRE", "k", "10", "XX"}).empty());
  CHECK(ks.changed_by(cmd_expire, {"EXPIRE", "k", "10"}) == Keys{"k"});
  CHECK(ks.changed_by(cmd_expire, {"PEXPIRE", "k", "5000", "GT"}).empty());
  CHECK(ks.changed_by(cmd_persist, {"PERSIST", "k"}) == Keys{"k"});
  CHECK(ks.changed_by(cmd_persist, {"PERSIST", "k"}).empty());
  // A time in the past deletes the key: a change too.
  CHECK(ks.changed_by(cmd_expire, {"PEXPIREAT", "k", "1"}) == Keys{"k"});
  ks.set("src", "v");
  CHECK(ks.changed_by(cmd_rename, {"RENAME", "src", "src"}).empty());
  CHECK(ks.changed_by(cmd_rename, {"RENAME", "src", "dst"}) == Keys{"src", "dst"});
  ks.set("other", "v");
  CHECK(ks.changed_by(cmd_renamenx, {"RENAMENX", "dst", "other"}).empty());
  CHECK(ks.changed_by(cmd_renamenx, {"RENAMENX", "dst", "fresh"}) == Keys{"dst", "fresh"});
  CHECK(ks.changed_by(cmd_copy, {"COPY", "fresh", "other"}).empty());
  CHECK(ks.changed_by(cmd_copy, {"COPY", "fresh", "other", "REPLACE"}) == Keys{"other"});
  CHECK(ks.changed_by(cmd_copy, {"COPY", "missing", "x"}).empty());
}

TEST_CASE("FLUSHALL announces the flush while the keys still exist") {
  Keyspace ks;
  ks.set("a", "1");
  ks.set("b", "1");
  CHECK(ks.run(cmd_flushall, {"FLUSHALL", "bad"}) == kSyntaxErr);
  CHECK(ks.ready.flushes.empty());
  CHECK(ks.run(cmd_flushall, {"FLUSHALL"}) == "+OK\r\n");
  CHECK(ks.ready.flushes == std::vector<size_t>{2});
  CHECK(ks.run(cmd_flushall, {"FLUSHDB", "ASYNC"}) == "+OK\r\n");
  CHECK(ks.ready.flushes == std::vector<size_t>{2, 0});
}
