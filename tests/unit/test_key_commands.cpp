// append_key_commands: every type in every encoding, big and small, with and without a TTL, turned
// into commands and replayed through the append-only file loader gives back the same store; no
// command carries more than kItemsPerCommand elements; redis-check-aof accepts the file.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/key_commands.h"
#include "engine/keyspace/databases.h"
#include "engine/keyspace/store.h"
#include "engine/types/hash_type.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "engine/types/set_type.h"
#include "engine/types/zset_type.h"
#include "persistence/aof_loader.h"
#include "protocol/resp_parser.h"
#include "store_dump.h"
#include "store_fixture.h"

namespace {

using namespace ringkv::engine;
using ringkv::test::fill;
using ringkv::test::unix_ms;

std::string serialize(Store& store) {
  std::string out;
  store.for_each([&](const Entry& e) { append_key_commands(e, out); });
  return out;
}

std::string encoding_of(Store& store, std::string_view key) {
  return std::string(value_encoding_name(*store.lookup(key)));
}

}  // namespace

TEST_CASE("the fixture covers every encoding") {
  Store store;
  store.set_now(unix_ms());
  fill(store);
  CHECK(encoding_of(store, "set:intset") == "intset");
  CHECK(encoding_of(store, "set:ht:small") == "hashtable");
  CHECK(encoding_of(store, "zset:listpack") == "listpack");
  CHECK(encoding_of(store, "zset:skiplist") == "skiplist");
  CHECK(encoding_of(store, "hash:listpack") == "listpack");
  CHECK(encoding_of(store, "hash:hashtable") == "hashtable");
  CHECK(encoding_of(store, "hash:long") == "hashtable");
}

TEST_CASE("keys serialized as commands load back identical") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  const std::string bytes = serialize(source);
  ringkv::test::ScratchDir dir;
  ringkv::engine::Databases loaded_dbs(16);
  ringkv::engine::Store& loaded = loaded_dbs[0];
  auto result = ringkv::persistence::load_aof(dir.write("rewrite.aof", bytes), loaded_dbs);
  REQUIRE(result.status == ringkv::persistence::LoadResult::Status::kOk);
  CHECK(result.valid_bytes == bytes.size());
  CHECK(ringkv::test::dump_store(loaded) == ringkv::test::dump_store(source));
  // The encodings come back too (they follow from the sizes and the values).
  for (std::string_view key : {"set:intset", "zset:listpack", "zset:skiplist", "hash:hashtable"}) {
    CAPTURE(key);
    CHECK(encoding_of(loaded, key) == encoding_of(source, key));
  }
}

TEST_CASE("no command carries more than kItemsPerCommand elements") {
  Store store;
  store.set_now(unix_ms());
  fill(store);
  const std::string bytes = serialize(store);
  ringkv::protocol::RespParser parser;
  std::vector<std::string_view> argv;
  size_t pos = 0;
  size_t commands = 0;
  while (pos < bytes.size()) {
    auto r = parser.parse(std::span<const char>(bytes.data() + pos, bytes.size() - pos), argv);
    REQUIRE(r.status == ringkv::protocol::ParseStatus::kComplete);
    pos += r.consumed;
    ++commands;
    const size_t per_item = (argv[0] == "ZADD" || argv[0] == "HSET") ? 2 : 1;
    CHECK(argv.size() >= 3);
    CHECK(argv.size() - 2 <= kItemsPerCommand * per_item);
  }
  // 3000 list elements need ceil(3000 / 64) = 47 RPUSHes.
  CHECK(commands > 47);
}

TEST_CASE("redis-check-aof accepts a file of serialized keys") {
  if (std::system("command -v redis-check-aof > /dev/null 2>&1") != 0) {
    MESSAGE("redis-check-aof is not installed: skipped");
    return;
  }
  Store store;
  store.set_now(unix_ms());
  fill(store);
  ringkv::test::ScratchDir dir;
  const std::string path = dir.write("check.aof", serialize(store));
  CHECK(std::system(("redis-check-aof " + path + " > /dev/null 2>&1").c_str()) == 0);
  // And it does reject a file cut in the middle of a record, so the check above can fail.
  const std::string cut = dir.write("cut.aof", serialize(store) + "*3\r\n$3\r\nSET\r\n$1\r\nk");
  CHECK(std::system(("redis-check-aof " + cut + " > /dev/null 2>&1").c_str()) != 0);
}

TEST_CASE("collections copied a slice at a time load back identical") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  // Every collection of the fixture, sliced 100 elements at a time behind a prefix that the
  // loader does not know: the prefix is checked and stripped per request.
  std::string bytes;
  size_t requests = 0;
  size_t slices = 0;
  const std::string_view prefix[] = {"RINGKV.MIGRATE", "7"};
  source.for_each([&](const Entry& e) {
    if (e.type() == ValueType::kString || e.type() == ValueType::kStream) {
      append_key_commands(e, bytes);
      return;
    }
    KeySliceCursor cursor;
    std::string sliced;
    while (!cursor.done) {
      requests += append_key_slice(e, cursor, 100, prefix, sliced);
      slices++;
    }
    // Strip the prefix: each request's header loses two arguments and the prefix's bulks go.
    ringkv::protocol::RespParser parser;
    std::vector<std::string_view> argv;
    size_t at = 0;
    size_t seen = 0;
    while (at < sliced.size()) {
      auto r = parser.parse(std::span<const char>(sliced.data() + at, sliced.size() - at), argv);
      REQUIRE(r.status == ringkv::protocol::ParseStatus::kComplete);
      REQUIRE(argv.size() > 2);
      CHECK(argv[0] == "RINGKV.MIGRATE");
      CHECK(argv[1] == "7");
      CHECK(argv.size() - 2 <= 2 + 2 * kItemsPerCommand);
      bytes += "*" + std::to_string(argv.size() - 2) + "\r\n";
      for (size_t i = 2; i < argv.size(); ++i) {
        bytes += "$" + std::to_string(argv[i].size()) + "\r\n" + std::string(argv[i]) + "\r\n";
      }
      at += r.consumed;
      seen++;
    }
    CHECK(seen > 0);
  });
  CHECK(slices > 20);  // the big ones took several slices
  ringkv::test::ScratchDir dir;
  ringkv::engine::Databases loaded_dbs(16);
  ringkv::engine::Store& loaded = loaded_dbs[0];
  auto result = ringkv::persistence::load_aof(dir.write("sliced.aof", bytes), loaded_dbs);
  REQUIRE(result.status == ringkv::persistence::LoadResult::Status::kOk);
  CHECK(ringkv::test::dump_store(loaded) == ringkv::test::dump_store(source));
}
