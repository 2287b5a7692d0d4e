// DUMP and RESTORE handlers: replies and error texts as Redis 7.0.15, option parsing, TTLs, the
// effective form logged for a relative TTL, WATCH/blocked-client reports and access bits.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/commands/dump.h"
#include "engine/rdb/rdb_value.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "tests/unit/command_harness.h"

using namespace ringkv::engine;
using ringkv::test::CommandHarness;
using ringkv::test::kNow;

namespace {

// The payload DUMP replies with, unwrapped from its bulk reply.
std::string dump_of(CommandHarness& h, std::string_view key) {
  const std::string reply = h.run(cmd_dump, {"DUMP", key});
  REQUIRE(reply[0] == '$');
  const size_t crlf = reply.find("\r\n");
  const size_t len = std::stoul(reply.substr(1, crlf - 1));
  return reply.substr(crlf + 2, len);
}

std::string err(std::string_view text) { return "-" + std::string(text) + "\r\n"; }

}  // namespace

TEST_CASE("DUMP replies with the payload, or null for a missing key") {
  CommandHarness h;
  CHECK(h.run(cmd_dump, {"DUMP", "nokey"}) == "$-1\r\n");
  h.store.set_string("k", "1", Expiry::none());
  const std::string payload = dump_of(h, "k");
  CHECK(payload.size() == 13);
  CHECK(verify_dump_payload(payload));
}

TEST_CASE("RESTORE creates the key, with relative or absolute TTL") {
  CommandHarness h;
  h.store.set_string("src", "hello world", Expiry::none());
  const std::string payload = dump_of(h, "src");
  CHECK(h.changed_by(cmd_restore, {"RESTORE", "a", "0", payload}) == std::vector<std::string>{"a"});
  CHECK(h.store.peek("a")->string_value() == "hello world");
  CHECK(h.store.peek("a")->expire_at() == -1);
  CHECK(h.run(cmd_restore, {"RESTORE", "b", "5000", payload}) == "+OK\r\n");
  CHECK(h.store.peek("b")->expire_at() == kNow + 5000);
  const std::string at = std::to_string(kNow + 9000);
  CHECK(h.run(cmd_restore, {"RESTORE", "c", at, payload, "ABSTTL"}) == "+OK\r\n");
  CHECK(h.store.peek("c")->expire_at() == kNow + 9000);
  // A time already passed: +OK and no key.
  CHECK(h.run(cmd_restore, {"RESTORE", "d", "1", payload, "ABSTTL"}) == "+OK\r\n");
  CHECK(h.store.peek("d") == nullptr);
}

TEST_CASE("RESTORE errors, in Redis's order and words") {
  CommandHarness h;
  h.store.set_string("k", "v", Expiry::none());
  const std::string payload = dump_of(h, "k");
  CHECK(h.run(cmd_restore, {"RESTORE", "k", "0", payload}) ==
        err("BUSYKEY Target key name already exists."));
  // Options are parsed before the key is checked.
  CHECK(h.run(cmd_restore, {"RESTORE", "k", "0", payload, "BOGUS"}) == err("ERR syntax error"));
  CHECK(h.run(cmd_restore, {"RESTORE", "k", "-1", payload}) ==
        err("BUSYKEY Target key name already exists."));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "-1", payload}) ==
        err("ERR Invalid TTL value, must be >= 0"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "x", payload}) ==
        err("ERR value is not an integer or out of range"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "0", "garbage"}) ==
        err("ERR DUMP payload version or checksum are wrong"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "0", payload, "IDLETIME", "-1"}) ==
        err("ERR Invalid IDLETIME value, must be >= 0"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "0", payload, "IDLETIME", "z"}) ==
        err("ERR value is not an integer or out of range"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "0", payload, "FREQ", "256"}) ==
        err("ERR Invalid FREQ value, must be >= 0 and <= 255"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "0", payload, "FREQ", "1", "IDLETIME", "1"}) ==
        err("ERR syntax error"));
  CHECK(h.run(cmd_restore, {"RESTORE", "n", "0", payload, "IDLETIME"}) == err("ERR syntax error"));
  // A well-formed footer around a bad value.
  std::string bad = payload;
  bad[0] = 7;  // unknown type
  DecodedValue unused;
  CHECK_FALSE(decode_value(bad, unused));
  CHECK(h.store.peek("n") == nullptr);
}

TEST_CASE("RESTORE REPLACE replaces any type; an expired TTL deletes and logs DEL") {
  CommandHarness h;
  h.store.set_string("s", "str", Expiry::none());
  const std::string payload = dump_of(h, "s");
  list_push(h.store, "l", ListObject::End::kTail, std::vector<std::string_view>{"a"}, false);
  CHECK(h.run(cmd_restore, {"RESTORE", "l", "0", payload, "REPLACE"}) == "+OK\r\n");
  CHECK(h.store.peek("l")->string_value() == "str");

  Propagation prop;
  std::vector<std::string_view> argv = {"RESTORE", "l", "1", payload, "REPLACE", "ABSTTL"};
  CommandContext ctx{argv, h.writer, h.store, nullptr, nullptr, nullptr, nullptr, &h.ready};
  ctx.propagation = &prop;
  h.out.clear();
  cmd_restore(ctx);
  CHECK(h.out == "+OK\r\n");
  CHECK(h.store.peek("l") == nullptr);
  REQUIRE(prop.commands().size() == 1);
  CHECK(prop.commands()[0] == std::vector<std::string>{"DEL", "l"});
}

TEST_CASE("RESTORE with a relative TTL is logged with the absolute time") {
  CommandHarness h;
  h.store.set_string("s", "str", Expiry::none());
  const std::string payload = dump_of(h, "s");
  Propagation prop;
  std::vector<std::string_view> argv = {"RESTORE", "k", "1500", payload, "REPLACE"};
  CommandContext ctx{argv, h.writer, h.store, nullptr, nullptr, nullptr, nullptr, &h.ready};
  ctx.propagation = &prop;
  cmd_restore(ctx);
  REQUIRE(prop.commands().size() == 1);
  CHECK(prop.commands()[0] == std::vector<std::string>{"RESTORE", "k", std::to_string(kNow + 1500),
                                                       payload, "REPLACE", "ABSTTL"});
  // Without a TTL the command is logged as it arrived.
  prop.clear();
  argv = {"RESTORE", "k2", "0", payload};
  CommandContext plain{argv, h.writer, h.store, nullptr, nullptr, nullptr, nullptr, &h.ready};
  plain.propagation = &prop;
  cmd_restore(plain);
  CHECK_FALSE(prop.replaced());
}

TEST_CASE("RESTORE of a list wakes blocked clients; IDLETIME sets the access time") {
  CommandHarness h;
  list_push(h.store, "l", ListObject::End::kTail, std::vector<std::string_view>{"a", "b"}, false);
  const std::string payload = dump_of(h, "l");
  h.ready.keys.clear();
  CHECK(h.run(cmd_restore, {"RESTORE", "l2", "0", payload, "IDLETIME", "100"}) == "+OK\r\n");
  CHECK(h.ready.keys == std::vector<std::string>{"l2"});
  const Entry* e = h.store.peek("l2");
  CHECK(lru_idle_seconds(h.store.lru_clock(), e->lru()) == 100);
  CHECK(static_cast<const ListObject&>(*e->object()).at(1) == "b");
}
