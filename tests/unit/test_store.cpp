// Unit tests for the Store and its packed entries: CRUD, TTLs, lazy and active expiry, rename and
// copy, SCAN across resizes, incremental rehashing, random keys, clearing and memory accounting.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/keyspace/lazy_free.h"
#include "engine/keyspace/slot_arrays.h"
#include "engine/keyspace/store.h"
#include "engine/types/set_type.h"

using ringkv::engine::classify_string;
using ringkv::engine::encoding_name;
using ringkv::engine::Entry;
using ringkv::engine::Expiry;
using ringkv::engine::SetObject;
using ringkv::engine::Store;
using ringkv::engine::StringEncoding;
using ringkv::engine::type_name;
using ringkv::engine::ValueType;

namespace {

constexpr int64_t kNow = 1'700'000'000'000;

std::string key_of(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "key:%012d", i);
  return buf;
}

std::string value_of(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "value:%010d", i);
  return buf;
}

// Drains any resize in progress.
void finish_rehash(Store& s) {
  while (s.rehash_step(1000)) {
  }
}

std::set<std::string> all_keys(Store& s) {
  std::set<std::string> keys;
  s.for_each([&](const Entry& e) { keys.emplace(e.key()); });
  return keys;
}

}  // namespace

TEST_CASE("classify_string follows Redis's int/embstr/raw choice") {
  CHECK(classify_string("0") == StringEncoding::kInt);
  CHECK(classify_string("-12") == StringEncoding::kInt);
  CHECK(classify_string("9223372036854775807") == StringEncoding::kInt);
  CHECK(classify_string("-9223372036854775808") == StringEncoding::kInt);
  CHECK(classify_string("9223372036854775808") == StringEncoding::kEmbstr);
  CHECK(classify_string("-0") == StringEncoding::kEmbstr);
  CHECK(classify_string("007") == StringEncoding::kEmbstr);
  CHECK(classify_string("+1") == StringEncoding::kEmbstr);
  CHECK(classify_string(" 1") == StringEncoding::kEmbstr);
  CHECK(classify_string("") == StringEncoding::kEmbstr);
  CHECK(classify_string(std::string(44, 'a')) == StringEncoding::kEmbstr);
  CHECK(classify_string(std::string(45, 'a')) == StringEncoding::kRaw);
  CHECK(encoding_name(StringEncoding::kInt) == "int");
  CHECK(encoding_name(StringEncoding::kEmbstr) == "embstr");
  CHECK(encoding_name(StringEncoding::kRaw) == "raw");
  CHECK(type_name(ValueType::kString) == "string");
  CHECK(type_name(ValueType::kZSet) == "zset");
}

TEST_CASE("insert, find, overwrite and erase") {
  Store s;
  s.set_now(kNow);
  CHECK(s.lookup("a") == nullptr);
  const Entry* e = s.set_string("a", "hello", Expiry::none());
  REQUIRE(e != nullptr);
  CHECK(e->key() == "a");
  CHECK(e->string_value() == "hello");
  CHECK(e->type() == ValueType::kString);
  CHECK(e->encoding() == StringEncoding::kEmbstr);
  CHECK_FALSE(e->has_expire());
  CHECK(e->expire_at() == -1);
  CHECK(s.size() == 1);

  // Same size rewrites in place; longer values move to a new block.
  s.set_string("a", "world", Expiry::none());
  CHECK(s.lookup("a")->string_value() == "world");
  s.set_string("a", "12345", Expiry::none());
  CHECK(s.lookup("a")->encoding() == StringEncoding::kInt);
  const std::string big(300, 'x');
  s.set_string("a", big, Expiry::none());
  CHECK(s.lookup("a")->string_value() == big);
  CHECK(s.lookup("a")->encoding() == StringEncoding::kRaw);
  CHECK(s.size() == 1);
  // A small value replacing a big one gets a small block again.
  const size_t with_big = s.used_memory();
  s.set_string("a", "tiny", Expiry::none());
  CHECK(s.used_memory() + 200 < with_big);
  CHECK(s.lookup("a")->string_value() == "tiny");

  // Keys and values longer than one varint byte, empty ones, binary ones.
  const std::string long_key(200, 'k');
  s.set_string(long_key, "", Expiry::none());
  CHECK(s.lookup(long_key)->string_value().empty());
  s.set_string("", std::string("\0\r\n", 3), Expiry::none());
  CHECK(s.lookup("")->string_value() == std::string("\0\r\n", 3));
  CHECK(s.size() == 3);

  CHECK(s.erase("a"));
  CHECK_FALSE(s.erase("a"));
  CHECK(s.lookup("a") == nullptr);
  CHECK(s.size() == 2);
  CHECK(s.stats().keyspace_misses == 2);
  CHECK(s.stats().keyspace_hits == 7);
}

TEST_CASE("prefetch changes nothing: no access counted, no key touched, any number of keys") {
  Store s;
  s.set_now(kNow);
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    keys.push_back(key_of(i));
    s.set_string(keys.back(), "v", Expiry::none());
  }
  // Collections whose members it looks up: a set of members in a hashtable and a small one.
  auto big = std::make_unique<SetObject>();
  for (int i = 0; i < 300; ++i) big->add("m" + std::to_string(i));
  REQUIRE(big->encoding() == SetObject::Encoding::kHashtable);
  s.add_object("set", std::move(big));
  auto small = std::make_unique<SetObject>();
  small->add("1");
  s.add_object("ints", std::move(small));
  keys.emplace_back("absent");
  keys.emplace_back("");
  const auto before = s.stats();
  const size_t used = s.used_memory();
  std::vector<Store::Lookahead> ahead;
  for (const std::string& k : keys) ahead.push_back({k, {"v", "", ""}});
  for (std::string_view set : {"set", "ints"}) {
    ahead.push_back({set, {"m1", "absent", "m3"}});
    ahead.push_back({set, {"", "m2", ""}});
    ahead.push_back({set, {"x", "", ""}});
  }
  s.prefetch(ahead);                          // more than it looks at
  s.prefetch(std::span(ahead).subspan(995));  // present and absent, strings and sets
  s.prefetch({});
  Store empty;
  empty.prefetch(ahead);
  CHECK(s.stats().keyspace_hits == before.keyspace_hits);
  CHECK(s.stats().keyspace_misses == before.keyspace_misses);
  CHECK(s.used_memory() == used);
  CHECK(s.size() == 1002);
  CHECK(empty.size() == 0);
  CHECK(s.lookup(key_of(999))->string_value() == "v");
  CHECK(s.lookup("set")->object()->size() == 300);
}

TEST_CASE("a value may be rewritten from a view of itself") {
  Store s;
  s.set_string("k", "abcdef", Expiry::none());
  const Entry* e = s.lookup("k");
  s.set_string("k", e->string_value().substr(1), Expiry::none());
  CHECK(s.lookup("k")->string_value() == "bcdef");
  e = s.lookup("k");
  s.set_string("k", e->string_value().substr(0, 3), Expiry::none());
  CHECK(s.lookup("k")->string_value() == "bcd");
}

TEST_CASE("append_string grows values in place across length-prefix sizes") {
  Store s;
  s.set_now(kNow);
  const size_t baseline = s.used_memory();
  CHECK(s.append_string("missing", "x") == nullptr);
  s.set_string("k", "12", Expiry::at(kNow + 5000));
  std::string expected = "12";
  // Cross the 1- to 2- and 2- to 3-byte varint boundaries (128 and 16384 bytes).
  for (int i = 0; i < 3000; ++i) {
    const std::string piece(static_cast<size_t>(1 + i % 13), static_cast<char>('a' + i % 26));
    const Entry* e = s.append_string("k", piece);
    expected += piece;
    REQUIRE(e != nullptr);
    REQUIRE(e->string_value() == expected);
  }
  const Entry* e = s.peek("k");
  CHECK(e->key() == "k");
  CHECK(e->string_value() == expected);
  CHECK(e->encoding() == StringEncoding::kRaw);
  CHECK(e->expire_at() == kNow + 5000);
  CHECK(s.volatile_size() == 1);
  // A suffix that is a view of the value itself.
  e = s.append_string("k", e->string_value().substr(0, 5));
  expected += expected.substr(0, 5);
  CHECK(e->string_value() == expected);

  // Many appends to a large value stay fast (amortised growth).
  s.set_string("big", "", Expiry::none());
  const std::string kb(1024, 'z');
  for (int i = 0; i < 20'000; ++i) s.append_string("big", kb);
  CHECK(s.peek("big")->string_value().size() == 20'000u * 1024);
  CHECK(s.erase("big"));
  CHECK(s.erase("k"));
  CHECK(s.used_memory() == baseline);
}

TEST_CASE("TTL is set, kept and cleared") {
  Store s;
  s.set_now(kNow);
  s.set_string("k", "v", Expiry::at(kNow + 5000));
  CHECK(s.peek("k")->expire_at() == kNow + 5000);
  CHECK(s.volatile_size() == 1);

  s.set_string("k", "v2", Expiry::keep());
  CHECK(s.peek("k")->expire_at() == kNow + 5000);
  CHECK(s.peek("k")->string_value() == "v2");
  s.set_string("k", std::string(100, 'z'), Expiry::keep());
  CHECK(s.peek("k")->expire_at() == kNow + 5000);
  CHECK(s.volatile_size() == 1);

  s.set_string("k", "v3", Expiry::none());
  CHECK_FALSE(s.peek("k")->has_expire());
  CHECK(s.volatile_size() == 0);

  s.set_string("fresh", "v", Expiry::keep());
  CHECK_FALSE(s.peek("fresh")->has_expire());

  CHECK(s.set_expire("k", kNow + 100));
  CHECK(s.peek("k")->expire_at() == kNow + 100);
  CHECK(s.set_expire("k", kNow + 200));
  CHECK(s.peek("k")->expire_at() == kNow + 200);
  CHECK(s.volatile_size() == 1);
  CHECK(s.persist("k"));
  CHECK_FALSE(s.persist("k"));
  CHECK_FALSE(s.peek("k")->has_expire());
  CHECK(s.peek("k")->string_value() == "v3");
  CHECK(s.volatile_size() == 0);
  CHECK_FALSE(s.set_expire("missing", kNow + 100));
  CHECK_FALSE(s.persist("missing"));

  // A time that is not in the future deletes the key, as EXPIRE does.
  CHECK(s.set_expire("k", kNow));
  CHECK(s.peek("k") == nullptr);
  CHECK(s.stats().expired_keys == 0);
}

TEST_CASE("lazy expiry follows the caller's clock") {
  Store s;
  s.set_now(kNow);
  s.set_string("k", "v", Expiry::at(kNow + 1000));
  s.set_now(kNow + 1000);  // Redis expires only when now > at
  CHECK(s.lookup("k") != nullptr);
  s.set_now(kNow + 1001);
  CHECK(s.peek("k") == nullptr);
  CHECK(s.size() == 0);
  CHECK(s.volatile_size() == 0);
  CHECK(s.stats().expired_keys == 1);

  s.set_string("k", "v", Expiry::at(kNow + 2000));
  s.set_now(kNow + 3000);
  CHECK(s.lookup("k") == nullptr);
  CHECK(s.stats().expired_keys == 2);
  CHECK(s.stats().keyspace_misses == 1);
  CHECK(s.stats().keyspace_hits == 1);

  // Expired keys are invisible to erase, persist, set_expire, for_each and scan.
  s.set_string("a", "v", Expiry::at(kNow + 3500));
  s.set_string("b", "v", Expiry::at(kNow + 3500));
  s.set_string("c", "v", Expiry::at(kNow + 3500));
  s.set_now(kNow + 4000);
  CHECK(all_keys(s).empty());
  size_t seen = 0;
  s.scan(0, 100, [&](const Entry&) { ++seen; });
  CHECK(seen == 0);
  CHECK_FALSE(s.erase("a"));
  CHECK_FALSE(s.persist("b"));
  CHECK_FALSE(s.set_expire("c", kNow + 10000));
  CHECK(s.size() == 0);
  CHECK(s.stats().expired_keys == 5);
  s.reset_stats();
  CHECK(s.stats().expired_keys == 0);
}

TEST_CASE("LRU clock is 24-bit seconds and refreshed by lookup only") {
  Store s;
  s.set_now(kNow);
  CHECK(s.lru_clock() == ((kNow / 1000) & 0xFFFFFF));
  s.set_string("k", "v", Expiry::none());
  CHECK(s.peek("k")->lru() == s.lru_clock());
  s.set_now(kNow + 10'000);
  CHECK(s.peek("k")->lru() == ((kNow / 1000) & 0xFFFFFF));
  CHECK(s.lookup("k")->lru() == (((kNow + 10'000) / 1000) & 0xFFFFFF));
}

TEST_CASE("rename and copy carry value and TTL") {
  Store s;
  s.set_now(kNow);
  s.set_string("src", "value", Expiry::at(kNow + 9000));
  s.set_string("dst", "old", Expiry::none());
  CHECK(s.rename("src", "dst"));
  CHECK(s.peek("src") == nullptr);
  CHECK(s.peek("dst")->string_value() == "value");
  CHECK(s.peek("dst")->expire_at() == kNow + 9000);
  CHECK(s.size() == 1);
  CHECK(s.volatile_size() == 1);
  CHECK_FALSE(s.rename("missing", "x"));
  CHECK(s.rename("dst", "dst"));
  CHECK(s.peek("dst")->string_value() == "value");

  CHECK(s.copy("dst", "c1", false));
  CHECK(s.peek("c1")->string_value() == "value");
  CHECK(s.peek("c1")->expire_at() == kNow + 9000);
  CHECK(s.peek("c1")->encoding() == StringEncoding::kEmbstr);
  s.set_string("c2", "keep", Expiry::none());
  CHECK_FALSE(s.copy("dst", "c2", false));
  CHECK(s.peek("c2")->string_value() == "keep");
  CHECK(s.copy("dst", "c2", true));
  CHECK(s.peek("c2")->string_value() == "value");
  CHECK_FALSE(s.copy("missing", "c3", true));
  CHECK(s.size() == 3);
  CHECK(s.volatile_size() == 3);

  // A key given as a view into the entry being renamed.
  const Entry* e = s.set_string("self", "self-renamed", Expiry::none());
  CHECK(s.rename("self", e->string_value()));
  CHECK(s.peek("self-renamed")->string_value() == "self-renamed");

  // An expired source is gone.
  s.set_now(kNow + 10'000);
  CHECK_FALSE(s.rename("dst", "x"));
  CHECK_FALSE(s.copy("c1", "x", true));
}

TEST_CASE("growth and shrink keep every key reachable, interleaved with operations") {
  Store s;
  s.set_now(kNow);
  std::mt19937_64 rng(42);
  std::unordered_map<std::string, std::string> model;
  bool saw_rehash = false;
  size_t max_capacity = 0;
  // Phases: fill up (several doublings), then empty out (several shrinks), then refill.
  for (int phase = 0; phase < 3; ++phase) {
    for (int op = 0; op < 60'000; ++op) {
      const int k = static_cast<int>(rng() % 20'000);
      const std::string key = key_of(k);
      const bool insert = phase == 1 ? rng() % 50 == 0 : rng() % 10 != 0;
      if (insert) {
        const std::string value = value_of(static_cast<int>(rng() % 1000));
        s.set_string(key, value, Expiry::none());
        model[key] = value;
      } else {
        CHECK(s.erase(key) == (model.erase(key) == 1));
      }
      saw_rehash = saw_rehash || s.rehashing();
      if (op % 101 == 0) {
        const Entry* e = s.random_entry();
        CHECK((e == nullptr) == model.empty());
        if (e != nullptr) CHECK(model.count(std::string(e->key())) == 1);
      }
      max_capacity = std::max(max_capacity, s.capacity());
      if (op % 4999 == 0 || (s.rehashing() && op % 97 == 0)) {
        // Every key must be found, in particular while two tables are live.
        size_t wrong = 0;
        for (const auto& [mk, mv] : model) {
          const Entry* e = s.peek(mk);
          if (e == nullptr || e->string_value() != mv) ++wrong;
        }
        CHECK(wrong == 0);
        CHECK(s.size() == model.size());
      }
    }
    if (phase == 1) {
      finish_rehash(s);
      CHECK(s.capacity() < max_capacity);
    }
  }
  CHECK(saw_rehash);
  CHECK(s.size() == model.size());
  std::set<std::string> expected;
  for (const auto& [mk, mv] : model) expected.insert(mk);
  CHECK(all_keys(s) == expected);
}

TEST_CASE("expired keys are dropped while a resize drains the old table") {
  Store s;
  s.set_now(kNow);
  int n = 0;
  // Fill up to just below a growth, half of the keys with a short TTL.
  while (!s.rehashing()) {
    s.set_string(key_of(n), "v", n % 2 ? Expiry::none() : Expiry::at(kNow + 10));
    ++n;
  }
  const size_t volatile_before = s.volatile_size();
  s.set_now(kNow + 100);
  finish_rehash(s);
  CHECK(s.stats().expired_keys > 0);
  CHECK(s.volatile_size() + s.stats().expired_keys == volatile_before);
  CHECK(s.size() == static_cast<size_t>(n) - s.stats().expired_keys);
  for (int i = 1; i < n; i += 2) CHECK(s.peek(key_of(i)) != nullptr);
}

TEST_CASE("SCAN returns every key present throughout, across growth and shrink") {
  for (const bool grow : {true, false}) {
    CAPTURE(grow);
    Store s;
    s.set_now(kNow);
    const int stable = 3000;
    for (int i = 0; i < stable; ++i) s.set_string(key_of(i), "v", Expiry::none());
    if (!grow) {
      for (int i = stable; i < 60'000; ++i) s.set_string(key_of(i), "v", Expiry::none());
    }
    finish_rehash(s);
    std::unordered_set<std::string> seen;
    uint64_t cursor = 0;
    int calls = 0;
    int churn = grow ? stable : 60'000;
    do {
      cursor = s.scan(cursor, 10, [&](const Entry& e) { seen.emplace(e.key()); });
      CHECK(cursor < (uint64_t{1} << Store::kScanCursorBits));
      ++calls;
      // Churn between calls: grow to 20x the starting size, or delete down to a few keys.
      for (int j = 0; j < 200; ++j) {
        if (grow && churn < 20 * stable) {
          s.set_string(key_of(100'000 + churn++), "x", Expiry::none());
        } else if (churn > stable) {
          s.erase(key_of(--churn));
        }
      }
      if (calls % 7 == 0) s.rehash_step(50);
    } while (cursor != 0 && calls < 100'000);
    CHECK(cursor == 0);
    for (int i = 0; i < stable; ++i) {
      if (!seen.count(key_of(i))) FAIL("missing " << key_of(i));
    }
  }
}

TEST_CASE("SCAN visits each key once in a quiet table and honours count roughly") {
  Store s;
  for (int i = 0; i < 5000; ++i) s.set_string(key_of(i), "v", Expiry::none());
  finish_rehash(s);
  std::map<std::string, int> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    size_t got = 0;
    cursor = s.scan(cursor, 100, [&](const Entry& e) {
      ++seen[std::string(e.key())];
      ++got;
    });
    ++calls;
  } while (cursor != 0);
  CHECK(seen.size() == 5000);
  for (const auto& [k, n] : seen) CHECK(n == 1);
  CHECK(calls > 20);
  CHECK(calls < 120);
  // Cursors beyond the 48-bit space end the scan.
  size_t n = 0;
  CHECK(s.scan(uint64_t{1} << 50, 10, [&](const Entry&) { ++n; }) == 0);
  CHECK(n == 0);
}

TEST_CASE("random_entry returns live keys, roughly uniformly") {
  Store s;
  s.set_now(kNow);
  CHECK(s.random_entry() == nullptr);
  for (int i = 0; i < 50; ++i) s.set_string(key_of(i), "v", Expiry::none());
  std::map<std::string, int> hits;
  for (int i = 0; i < 20'000; ++i) ++hits[std::string(s.random_entry()->key())];
  CHECK(hits.size() == 50);
  for (const auto& [k, n] : hits) {
    CHECK(n > 150);  // expected 400 each
    CHECK(n < 800);
  }

  // Expired keys are never returned; a bounded number is deleted per call.
  for (int i = 0; i < 1000; ++i) s.set_string(key_of(1000 + i), "v", Expiry::at(kNow + 10));
  s.set_now(kNow + 100);
  for (int i = 0; i < 200; ++i) {
    const Entry* e = s.random_entry();
    REQUIRE(e != nullptr);
    CHECK(!e->has_expire());
  }
  CHECK(s.stats().expired_keys > 0);

  Store all_expired;
  all_expired.set_now(kNow);
  for (int i = 0; i < 500; ++i) all_expired.set_string(key_of(i), "v", Expiry::at(kNow + 1));
  all_expired.set_now(kNow + 2);
  CHECK(all_expired.random_entry() == nullptr);
  CHECK(all_expired.stats().expired_keys <= 100);
}

TEST_CASE("active expiry deletes expired keys within its budget") {
  Store s;
  s.set_now(kNow);
  for (int i = 0; i < 20'000; ++i) {
    const Expiry ex = i % 2 == 0 ? Expiry::at(kNow + 1000) : Expiry::at(kNow + 1'000'000);
    s.set_string(key_of(i), "v", ex);
  }
  for (int i = 20'000; i < 30'000; ++i) s.set_string(key_of(i), "v", Expiry::none());
  CHECK(s.volatile_size() == 20'000);
  s.active_expire_cycle(1000);
  CHECK(s.avg_ttl_ms() > 0);
  s.set_now(kNow + 2000);
  // A budget spent at once stops the cycle after its first sample (Redis's time cap).
  const Store::ExpireCycle capped = s.active_expire_cycle(0);
  CHECK(capped.time_cap);
  CHECK(capped.sampled > 0);
  size_t deleted = capped.expired;
  size_t sampled = capped.sampled;
  for (int round = 0; round < 10'000 && s.size() > 20'000; ++round) {
    const Store::ExpireCycle cycle = s.active_expire_cycle(2000);
    deleted += cycle.expired;
    sampled += cycle.sampled;
  }
  CHECK(sampled >= deleted);
  // The cycle stops once few sampled keys are expired, so a handful may wait for lazy expiry.
  CHECK(deleted > 9'900);
  CHECK(s.stats().expired_keys == deleted);
  CHECK(s.volatile_size() + deleted == 20'000);
  for (int i = 1; i < 20'000; i += 2) CHECK(s.peek(key_of(i)) != nullptr);
  for (int i = 20'000; i < 30'000; i += 101) CHECK(s.peek(key_of(i)) != nullptr);
  CHECK(s.stats().expire_cycle_cpu_us > 0);

  s.clear(false);
  s.active_expire_cycle(1000);
  CHECK(s.avg_ttl_ms() == 0);
  const Store::ExpireCycle empty = s.active_expire_cycle(1000);
  CHECK(empty.expired == 0);
  CHECK(empty.sampled == 0);
  CHECK(!empty.time_cap);
}

TEST_CASE("clear drops everything, synchronously or on another thread") {
  for (const bool async : {false, true}) {
    Store s;
    const size_t baseline = s.used_memory();
    for (int i = 0; i < 20'000; ++i) {
      s.set_string(key_of(i), "v", i % 3 ? Expiry::none() : Expiry::at(kNow + 1000));
    }
    s.clear(async);
    CHECK(s.size() == 0);
    CHECK(s.volatile_size() == 0);
    // Only the new empty table is accounted: its heap chunk's usable size may differ a little
    // from the first one's (malloc may reuse a chunk the other thread just freed).
    CHECK(s.used_memory() <= baseline + 64);
    CHECK(s.used_memory() + 64 >= baseline);
    CHECK(s.lookup(key_of(5)) == nullptr);
    s.set_string("after", "clear", Expiry::none());
    CHECK(s.lookup("after")->string_value() == "clear");
    CHECK(s.size() == 1);
  }
}

TEST_CASE("a lazy erase frees a value past 64 allocations on the reclaimer thread") {
  ringkv::engine::LazyFreeStats& stats = ringkv::engine::lazy_free_stats();
  Store s;
  const size_t baseline = s.used_memory();
  auto set_of = [](int members) {
    auto set = std::make_unique<SetObject>();
    for (int i = 0; i < members; ++i) set->add("m" + std::to_string(i));
    return set;
  };
  s.put_object("big", set_of(65));
  s.put_object("small", set_of(64));
  s.put_object("kept", set_of(1000));
  ringkv::engine::reclaimer().drain();
  const uint64_t freed = stats.freed;
  CHECK(s.erase("small", true));
  CHECK(s.erase("kept", false));
  ringkv::engine::reclaimer().drain();
  CHECK(stats.freed == freed);  // 64 allocations, and a deletion that is not lazy: at once
  CHECK(s.erase("big", true));
  CHECK(s.lookup("big") == nullptr);
  // Accounted at once, whenever the thread frees it.
  CHECK(s.used_memory() <= baseline + 64);
  CHECK(s.used_memory() + 64 >= baseline);
  ringkv::engine::reclaimer().drain();
  CHECK(stats.freed == freed + 1);
  CHECK(stats.pending == 0);
}

TEST_CASE("used_memory counts entries and tables and returns to baseline") {
  Store s;
  s.set_now(kNow);
  const size_t baseline = s.used_memory();
  CHECK(baseline > 0);
  s.set_string(key_of(1), value_of(1), Expiry::none());
  // A 16-byte key and value need 38 bytes: a 48-byte glibc chunk (40 usable bytes and its
  // 8-byte header); a TTL adds 8 (a 64-byte chunk). Sanitizer allocators report the exact
  // request instead. glibc may also hand out a free chunk up to 16 bytes bigger than asked
  // (it does not split off a remainder too small to be a chunk), depending on the heap's
  // history, and used_memory then rightly counts it.
  CHECK(s.used_memory() - baseline >= 38);
  CHECK(s.used_memory() - baseline <= 48 + 16);
  s.set_string(key_of(1), value_of(1), Expiry::at(kNow + 1000));
  CHECK(s.used_memory() - baseline >= 46);
  CHECK(s.used_memory() - baseline <= 64 + 16);
  for (int i = 0; i < 50'000; ++i) {
    s.set_string(key_of(i), value_of(i), i % 3 ? Expiry::none() : Expiry::at(kNow + 1000));
  }
  CHECK(s.used_memory() > baseline + 50'000 * 40);
  for (int i = 0; i < 50'000; ++i) CHECK(s.erase(key_of(i)));
  finish_rehash(s);
  CHECK(s.size() == 0);
  // Every entry's bytes are given back; the table shrunk back to its first size may sit in a
  // chunk up to 16 bytes bigger than the first one (as above, glibc does not split off a
  // remainder too small to be a chunk; seen on a fresh Debian 12: 160 bytes instead of 144).
  CHECK(s.used_memory() >= baseline);
  CHECK(s.used_memory() <= baseline + 16);
}

TEST_CASE("200k keys load, resolve and delete") {
  Store s;
  s.set_now(kNow);
  const int n = 200'000;
  for (int i = 0; i < n; ++i) {
    s.set_string(key_of(i), value_of(i), i % 3 ? Expiry::none() : Expiry::at(kNow + 100'000));
  }
  CHECK(s.size() == static_cast<size_t>(n));
  CHECK(s.volatile_size() == static_cast<size_t>((n + 2) / 3));
  for (int i = 0; i < n; i += 7) {
    const Entry* e = s.lookup(key_of(i));
    REQUIRE(e != nullptr);
    CHECK(e->string_value() == value_of(i));
  }
  const double per_key = static_cast<double>(s.used_memory()) / n;
  MESSAGE("store bytes per key: " << per_key);
  CHECK(per_key < 80);
  s.clear(true);
  CHECK(s.size() == 0);
}
