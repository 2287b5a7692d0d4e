// Unit tests of HashObject and the pure hash operations: both encodings and the conversion
// between them (Redis 7.0.15's limits), large hashes, HSCAN completeness while the hash grows and
// shrinks, random fields, deep copies and exact memory accounting in the store.
#include <doctest/doctest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/hash_type.h"
#include "protocol/errors.h"

namespace {

using namespace ringkv::engine;
using Encoding = HashObject::Encoding;

constexpr int64_t kNow = 1'700'000'000'000;

std::vector<std::pair<std::string, std::string>> contents(const HashObject& h) {
  std::vector<std::pair<std::string, std::string>> out;
  h.for_each([&](std::string_view f, std::string_view v) { out.emplace_back(f, v); });
  return out;
}

std::function<uint64_t()> seeded_rng(uint64_t seed) {
  auto engine = std::make_shared<std::mt19937_64>(seed);
  return [engine] { return (*engine)(); };
}

}  // namespace

TEST_CASE("listpack keeps insertion order; overwrite keeps the place; erase closes the gap") {
  HashObject h;
  CHECK(h.encoding_name() == "listpack");
  CHECK(h.set("a", "1"));
  CHECK(h.set("b", "2"));
  CHECK(h.set("c", ""));
  CHECK_FALSE(h.set("a", "a much longer value than before"));
  CHECK(h.size() == 3);
  CHECK(*h.get("a") == "a much longer value than before");
  CHECK(*h.get("c") == "");
  CHECK_FALSE(h.get("zz"));
  using P = std::vector<std::pair<std::string, std::string>>;
  CHECK(contents(h) == P{{"a", "a much longer value than before"}, {"b", "2"}, {"c", ""}});
  CHECK_FALSE(h.set("a", "x"));
  CHECK(h.erase("b"));
  CHECK_FALSE(h.erase("b"));
  CHECK(contents(h) == P{{"a", "x"}, {"c", ""}});
  CHECK(h.erase("a"));
  CHECK(h.erase("c"));
  CHECK(h.size() == 0);
  CHECK(contents(h).empty());
  // Binary-safe fields and values, including NUL and 0x80+ bytes (varint edge).
  const std::string bin("\x00\xff\x80", 3);
  CHECK(h.set(bin, bin));
  CHECK(*h.get(bin) == bin);
  CHECK(h.encoding() == Encoding::kListpack);
}

TEST_CASE("conversion to hashtable at Redis 7.0.15's limits, never back") {
  SUBCASE("entries") {
    HashObject h;
    for (size_t i = 0; i < encoding_limits().hash_max_listpack_entries; ++i)
      h.set("f" + std::to_string(i), "v");
    CHECK(h.encoding() == Encoding::kListpack);
    h.set("f0", "overwrite keeps the count");
    CHECK(h.encoding() == Encoding::kListpack);
    h.set("one more", "v");
    CHECK(h.encoding_name() == "hashtable");
    CHECK(h.size() == encoding_limits().hash_max_listpack_entries + 1);
    CHECK(*h.get("f0") == "overwrite keeps the count");
    for (size_t i = 0; i < encoding_limits().hash_max_listpack_entries; ++i)
      h.erase("f" + std::to_string(i));
    CHECK(h.encoding() == Encoding::kHashtable);
    CHECK(contents(h).size() == 1);
  }
  SUBCASE("field length") {
    HashObject h;
    h.set(std::string(encoding_limits().hash_max_listpack_value, 'f'), "v");
    CHECK(h.encoding() == Encoding::kListpack);
    h.set(std::string(encoding_limits().hash_max_listpack_value + 1, 'f'), "v");
    CHECK(h.encoding() == Encoding::kHashtable);
    CHECK(h.size() == 2);
  }
  SUBCASE("value length, also when overwriting") {
    HashObject h;
    h.set("a", std::string(encoding_limits().hash_max_listpack_value, 'v'));
    CHECK(h.encoding() == Encoding::kListpack);
    h.set("a", std::string(encoding_limits().hash_max_listpack_value + 1, 'v'));
    CHECK(h.encoding() == Encoding::kHashtable);
    CHECK(h.get("a")->size() == encoding_limits().hash_max_listpack_value + 1);
  }
}

TEST_CASE("100k fields: set, get, overwrite, erase, memory") {
  HashObject h;
  constexpr int kFields = 100000;
  for (int i = 0; i < kFields; ++i) CHECK_FALSE(!h.set("field:" + std::to_string(i), "v"));
  CHECK(h.size() == kFields);
  CHECK(h.encoding() == Encoding::kHashtable);
  const size_t full = h.memory();
  CHECK(full > kFields * 16);
  CHECK(full < kFields * 80);
  bool all = true;
  for (int i = 0; i < kFields; ++i) {
    auto v = h.get("field:" + std::to_string(i));
    all = all && v && *v == "v";
  }
  CHECK(all);
  for (int i = 0; i < kFields; i += 2) h.set("field:" + std::to_string(i), "value changed");
  CHECK(*h.get("field:10") == "value changed");
  for (int i = 0; i < kFields - 10; ++i) CHECK_FALSE(!h.erase("field:" + std::to_string(i)));
  CHECK(h.size() == 10);
  // The table shrank with the fields.
  CHECK(h.memory() < 2000);
}

TEST_CASE("HSCAN of a hashtable returns every field present throughout, as the hash grows") {
  HashObject h;
  for (int i = 0; i < 1000; ++i) h.set("base" + std::to_string(i), "v");
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  int added = 0;
  do {
    cursor = h.scan(cursor, 10, [&](std::string_view f, std::string_view) { seen.emplace(f); });
    // Grow the table between calls (several doublings during the scan).
    for (int j = 0; j < 40; ++j) h.set("new" + std::to_string(added++), "v");
    ++calls;
  } while (cursor != 0 && calls < 100000);
  CHECK(cursor == 0);
  for (int i = 0; i < 1000; ++i) CHECK(seen.count("base" + std::to_string(i)) == 1);

  SUBCASE("and as it shrinks") {
    std::set<std::string> kept;
    for (int i = 0; i < added; ++i) kept.insert("new" + std::to_string(i));
    std::set<std::string> seen2;
    cursor = 0;
    int removed = 0;
    do {
      cursor = h.scan(cursor, 10, [&](std::string_view f, std::string_view) { seen2.emplace(f); });
      for (int j = 0; j < 40 && removed < 1000; ++j) h.erase("base" + std::to_string(removed++));
    } while (cursor != 0);
    for (const std::string& f : kept) CHECK(seen2.count(f) == 1);
  }
}

TEST_CASE("HSCAN of a listpack returns everything with cursor 0") {
  HashObject h;
  h.set("a", "1");
  h.set("b", "2");
  std::vector<std::string> out;
  CHECK(h.scan(12345, 1, [&](std::string_view f, std::string_view v) {
    out.emplace_back(f);
    out.emplace_back(v);
  }) == 0);
  CHECK(out == std::vector<std::string>{"a", "1", "b", "2"});
}

TEST_CASE("random fields: with repetition, distinct, whole hash") {
  for (int fields : {5, 1000}) {
    HashObject h;
    for (int i = 0; i < fields; ++i) h.set("f" + std::to_string(i), "v" + std::to_string(i));
    auto rng = seeded_rng(7);
    std::map<std::string, int> hits;
    hash_random_fields(h, -3000, rng, [&](std::string_view f, std::string_view v) {
      CHECK(v == "v" + std::string(f.substr(1)));
      ++hits[std::string(f)];
    });
    int total = 0;
    for (auto& [f, n] : hits) total += n;
    CHECK(total == 3000);
    if (fields == 5) CHECK(hits.size() == 5);

    std::set<std::string> distinct;
    int visited = 0;
    hash_random_fields(h, 3, rng, [&](std::string_view f, std::string_view) {
      distinct.emplace(f);
      ++visited;
    });
    CHECK(visited == 3);
    CHECK(distinct.size() == 3);

    std::vector<std::pair<std::string, std::string>> all;
    hash_random_fields(h, fields + 10, rng,
                       [&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
    CHECK(all == contents(h));
    auto [f, v] = h.random_entry(rng);
    CHECK(h.get(f) == v);
  }
}

TEST_CASE("distinct random fields of a listpack come in listpack order") {
  HashObject h;
  for (int i = 0; i < 100; ++i) h.set("f" + std::to_string(i), "v");
  auto rng = seeded_rng(1);
  std::vector<int> order;
  hash_random_fields(h, 20, rng, [&](std::string_view f, std::string_view) {
    order.push_back(std::stoi(std::string(f.substr(1))));
  });
  CHECK(order.size() == 20);
  CHECK(std::is_sorted(order.begin(), order.end()));
}

TEST_CASE("clone is deep for both encodings") {
  for (int fields : {3, 600}) {
    HashObject h;
    for (int i = 0; i < fields; ++i) h.set("f" + std::to_string(i), "v");
    auto copy = h.clone();
    auto* c = static_cast<HashObject*>(copy.get());
    CHECK(c->encoding() == h.encoding());
    CHECK(contents(*c) == contents(h));
    c->set("f0", "changed");
    CHECK(*h.get("f0") == "v");
    CHECK(c->memory() > 0);
  }
}

TEST_CASE("store operations: WRONGTYPE, creation, deletion of empty hashes, increments") {
  Store store;
  store.set_now(kNow);
  const size_t empty = store.used_memory();
  const std::string_view pairs[] = {"a", "1", "b", "2", "a", "3"};
  CHECK(*hash_set(store, "h", pairs) == 2);
  CHECK(*lookup_hash(store, "h").value()->get("a") == "3");
  CHECK(*hash_set_nx(store, "h", "a", "x") == false);
  CHECK(*hash_set_nx(store, "h", "c", "x") == true);
  CHECK(*hash_incr_by(store, "h", "a", 5) == 8);
  CHECK(*hash_incr_by(store, "h", "new", -5) == -5);
  CHECK(hash_incr_by(store, "h", "c", 1).error() == kHashValueNotInteger);
  CHECK(*hash_set(store, "h", std::vector<std::string_view>{"max", "9223372036854775807"}) == 1);
  CHECK(hash_incr_by(store, "h", "max", 1).error() == ringkv::protocol::err::kOverflow);
  CHECK(*hash_incr_by_float(store, "h", "a", 0.5L) == "8.5");
  CHECK(hash_incr_by_float(store, "h", "c", 1).error() == kHashValueNotFloat);
  CHECK(*hash_incr_by_float(store, "h", "f", 1e3L) == "1000");

  store.set_string("s", "v", Expiry::none());
  const auto wrong = ringkv::protocol::err::kWrongType;
  CHECK(hash_set(store, "s", pairs).error() == wrong);
  CHECK(hash_del(store, "s", std::vector<std::string_view>{"a"}).error() == wrong);
  CHECK(hash_incr_by(store, "s", "a", 1).error() == wrong);
  CHECK(lookup_hash(store, "s").error() == wrong);
  CHECK(lookup_hash(store, "nokey").value() == nullptr);
  CHECK(*hash_del(store, "nokey", std::vector<std::string_view>{"a"}) == 0);
  CHECK_FALSE(store.contains("nokey"));

  const std::vector<std::string_view> all = {"a", "b", "c", "new", "max", "f", "zz"};
  CHECK(*hash_del(store, "h", all) == 6);
  CHECK_FALSE(store.contains("h"));
  CHECK(store.erase("s"));
  CHECK(store.used_memory() == empty);
}

TEST_CASE("used_memory follows a growing and shrinking hash in the store") {
  Store store;
  store.set_now(kNow);
  const size_t empty = store.used_memory();
  std::vector<std::string> args;
  for (int i = 0; i < 5000; ++i) {
    args.push_back("field" + std::to_string(i));
    args.push_back("value" + std::to_string(i));
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  CHECK(*hash_set(store, "h", views) == 5000);
  const size_t full = store.used_memory();
  CHECK(full - empty ==
        lookup_hash(store, "h").value()->memory() + heap_footprint(store.peek("h")));
  std::vector<std::string_view> fields;
  for (int i = 0; i < 5000; i += 2) fields.push_back(args[i * 2]);
  CHECK(*hash_del(store, "h", fields) == 2500);
  CHECK(store.used_memory() < full);
  CHECK(store.used_memory() - empty ==
        lookup_hash(store, "h").value()->memory() + heap_footprint(store.peek("h")));
  store.clear(false);
  CHECK(store.used_memory() == empty);
}
