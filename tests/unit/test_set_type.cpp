// Unit tests of SetObject (both encodings, the switch between them, SSCAN, random members, copies,
// memory accounting) and the pure set operations on the Store, Redis 7.0.15 being the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/set_type.h"

namespace {

using namespace ringkv::engine;

std::vector<std::string> members(const SetObject& s) {
  std::vector<std::string> out;
  s.for_each([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

uint64_t counter_rng() {
  static uint64_t x = 88172645463325252ull;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

const SetObject* get(Store& store, std::string_view key) {
  return read_object<SetObject>(store, key).value();
}

}  // namespace

TEST_CASE("intset: sorted, widening 2 -> 4 -> 8 bytes, string2ll rules for integers") {
  SetObject s;
  CHECK(s.encoding_name() == "intset");
  CHECK(s.add("3"));
  CHECK(s.add("-1"));
  CHECK_FALSE(s.add("3"));
  CHECK(s.add("100000"));                // needs 4 bytes
  CHECK(s.add("-9223372036854775808"));  // needs 8 bytes
  CHECK(s.add("9223372036854775807"));
  CHECK(s.encoding() == SetObject::Encoding::kIntset);
  CHECK(members(s) == std::vector<std::string>{"-9223372036854775808", "-1", "3", "100000",
                                               "9223372036854775807"});
  CHECK(s.contains("100000"));
  CHECK_FALSE(s.contains("0100000"));
  CHECK_FALSE(s.contains("x"));
  CHECK(s.remove("-1"));
  CHECK_FALSE(s.remove("-1"));
  CHECK_FALSE(s.remove("abc"));
  CHECK(s.size() == 4);
  // Leading zeros, '+', "-0" and spaces are not integers to Redis: they make a hashtable.
  for (std::string_view m : {"01", "+1", "-0", " 1", "1.0"}) {
    SetObject t;
    t.add("1");
    CHECK(t.add(m));
    CHECK(t.encoding_name() == "hashtable");
    CHECK(t.size() == 2);
    CHECK(t.contains("1"));
    CHECK(t.contains(m));
  }
}

TEST_CASE("intset becomes a hashtable past 512 members or on a non-integer, never back") {
  SetObject s;
  for (int i = 0; i < 512; ++i) s.add(std::to_string(i * 7));
  CHECK(s.encoding_name() == "intset");
  s.add("5000000");
  CHECK(s.encoding_name() == "hashtable");
  CHECK(s.size() == 513);
  for (int i = 0; i < 512; ++i) CHECK(s.contains(std::to_string(i * 7)));
  s.remove("5000000");
  CHECK(s.encoding_name() == "hashtable");
  SetObject t;
  t.add("1");
  t.add("a");
  t.remove("a");
  CHECK(t.encoding_name() == "hashtable");
  CHECK(members(t) == std::vector<std::string>{"1"});
}

TEST_CASE("hashtable: 100k members, removals shrink the table, memory follows") {
  SetObject s;
  s.add("x");
  const size_t empty_ish = s.memory();
  for (int i = 0; i < 100000; ++i) s.add("member:" + std::to_string(i));
  CHECK(s.size() == 100001);
  const size_t full = s.memory();
  CHECK(full > empty_ish + 100000 * 16);
  std::set<std::string> seen;
  s.for_each([&](std::string_view m) { seen.emplace(m); });
  CHECK(seen.size() == 100001);
  for (int i = 0; i < 100000; ++i) CHECK(s.remove("member:" + std::to_string(i)));
  CHECK(s.size() == 1);
  CHECK(s.memory() < full / 100);
  CHECK(members(s) == std::vector<std::string>{"x"});
}

TEST_CASE("SSCAN cursor visits every member once on a stable hashtable; intset in one call") {
  SetObject s;
  for (int i = 0; i < 1000; ++i) s.add("m" + std::to_string(i));
  std::multiset<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = s.scan(cursor, 10, [&](std::string_view m) { seen.emplace(m); });
    ++calls;
  } while (cursor != 0);
  CHECK(seen.size() == 1000);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 1000);
  CHECK(calls > 10);
  SetObject ints;
  for (int i = 0; i < 100; ++i) ints.add(std::to_string(100 - i));
  std::vector<std::string> got;
  CHECK(ints.scan(0, 1, [&](std::string_view m) { got.emplace_back(m); }) == 0);
  CHECK(got.size() == 100);
  CHECK(got.front() == "1");
  CHECK(got.back() == "100");
}

TEST_CASE("clone is deep and iterates in the same order; swap exchanges contents") {
  SetObject s;
  for (int i = 0; i < 50; ++i) s.add("v" + std::to_string(i));
  auto copy = s.clone();
  auto& c = static_cast<SetObject&>(*copy);
  CHECK(members(c) == members(s));
  CHECK(c.memory() == s.memory());
  c.add("extra");
  CHECK_FALSE(s.contains("extra"));
  SetObject ints;
  ints.add("7");
  ints.swap(c);
  CHECK(ints.size() == 51);
  CHECK(c.encoding_name() == "intset");
  CHECK(members(c) == std::vector<std::string>{"7"});
}

TEST_CASE("random members: negative counts repeat, positive counts are distinct") {
  SetObject s;
  for (int i = 0; i < 20; ++i) s.add(std::to_string(i));
  std::vector<std::string> got;
  auto collect = [&](std::string_view m) { got.emplace_back(m); };
  set_random_members(s, -50, counter_rng, collect);
  CHECK(got.size() == 50);
  for (const auto& m : got) CHECK(s.contains(m));
  for (int64_t count : {1, 5, 7, 15, 19}) {
    got.clear();
    set_random_members(s, count, counter_rng, collect);
    CHECK(got.size() == static_cast<size_t>(count));
    CHECK(std::set<std::string>(got.begin(), got.end()).size() == got.size());
    for (const auto& m : got) CHECK(s.contains(m));
  }
  got.clear();
  set_random_members(s, 100, counter_rng, collect);
  CHECK(got == members(s));  // the whole set, in order
  s.add("a");
  for (int i = 0; i < 100; ++i) CHECK(s.contains(s.random_member(counter_rng)));
}

TEST_CASE("set_add, set_remove, set_move, WRONGTYPE and empty keys deleted") {
  Store store;
  std::vector<std::string_view> m{"1", "2", "2", "3"};
  CHECK(set_add(store, "s", m).value() == 3);
  store.set_string("str", "x", Expiry::none());
  CHECK_FALSE(set_add(store, "str", m).ok());
  CHECK_FALSE(set_remove(store, "str", m).ok());
  std::vector<std::string_view> rm{"1", "9"};
  CHECK(set_remove(store, "s", rm).value() == 1);
  CHECK(set_remove(store, "nokey", rm).value() == 0);
  // SMOVE: missing source answers 0 before any type check; then both types are checked.
  CHECK(set_move(store, "nokey", "str", "1").value() == false);
  CHECK_FALSE(set_move(store, "s", "str", "2").ok());
  CHECK_FALSE(set_move(store, "str", "s", "2").ok());
  CHECK(set_move(store, "s", "s", "2").value() == true);
  CHECK(set_move(store, "s", "s", "9").value() == false);
  CHECK(set_move(store, "s", "d", "2").value() == true);
  CHECK(set_move(store, "s", "d", "2").value() == false);
  CHECK(set_move(store, "s", "d", "3").value() == true);
  CHECK_FALSE(store.contains("s"));
  CHECK(members(*get(store, "d")) == std::vector<std::string>{"2", "3"});
  std::vector<std::string_view> all{"2", "3", "4"};
  CHECK(set_remove(store, "d", all).value() == 2);
  CHECK_FALSE(store.contains("d"));
}

TEST_CASE("set_pop: whole set in order, few pops, and the rebuild that may return to intset") {
  Store store;
  std::vector<std::string_view> m{"5", "1", "3"};
  set_add(store, "s", m);
  std::vector<std::string> got;
  auto collect = [&](std::string_view x) { got.emplace_back(x); };
  CHECK(set_pop(store, "s", 0, counter_rng, collect).value() == 0);
  CHECK(set_pop(store, "s", 10, counter_rng, collect).value() == 3);
  CHECK(got == std::vector<std::string>{"1", "3", "5"});
  CHECK_FALSE(store.contains("s"));
  CHECK(set_pop(store, "s", 1, counter_rng, collect).value() == 0);
  // Hashtable of integers: popping 9 of 10 keeps one member in a fresh set, an intset.
  std::vector<std::string_view> h{"a", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};
  set_add(store, "h", h);
  std::vector<std::string_view> a{"a"};
  set_remove(store, "h", a);
  got.clear();
  CHECK(set_pop(store, "h", 9, counter_rng, collect).value() == 9);
  CHECK(std::set<std::string>(got.begin(), got.end()).size() == 9);
  CHECK(get(store, "h")->size() == 1);
  CHECK(get(store, "h")->encoding_name() == "intset");
  // Few pops from a big set: one at a time.
  std::vector<std::string> big;
  for (int i = 0; i < 100; ++i) big.push_back("m" + std::to_string(i));
  std::vector<std::string_view> views(big.begin(), big.end());
  set_add(store, "b", views);
  got.clear();
  CHECK(set_pop(store, "b", 10, counter_rng, collect).value() == 10);
  CHECK(get(store, "b")->size() == 90);
  for (const auto& x : got) CHECK_FALSE(get(store, "b")->contains(x));
  store.set_string("str", "x", Expiry::none());
  CHECK_FALSE(set_pop(store, "str", 1, counter_rng, collect).ok());
}

TEST_CASE("set_inter, set_combine and the STORE variants") {
  Store store;
  std::vector<std::string_view> a{"1", "2", "3", "4"};
  std::vector<std::string_view> b{"4", "3", "x"};
  std::vector<std::string_view> c{"3", "4", "9"};
  set_add(store, "a", a);
  set_add(store, "b", b);
  set_add(store, "c", c);
  std::vector<std::string_view> keys{"a", "c"};
  CHECK(set_inter(store, keys).value() == std::vector<std::string>{"3", "4"});
  CHECK(set_inter(store, keys, 1).value().size() == 1);
  std::vector<std::string_view> with_missing{"a", "nokey"};
  CHECK(set_inter(store, with_missing).value().empty());
  store.set_string("str", "x", Expiry::none());
  // Every key is type-checked, even after a missing one.
  std::vector<std::string_view> with_str{"nokey", "str"};
  CHECK_FALSE(set_inter(store, with_str).ok());
  CHECK_FALSE(set_combine(store, SetOp::kUnion, with_str).ok());
  CHECK_FALSE(set_combine(store, SetOp::kDiff, with_str).ok());
  std::vector<std::string_view> ab{"a", "b"};
  auto u = set_combine(store, SetOp::kUnion, ab);
  CHECK(u.value()->size() == 5);
  CHECK(u.value()->encoding_name() == "hashtable");
  auto d = set_combine(store, SetOp::kDiff, ab);
  CHECK(members(*d.value()) == std::vector<std::string>{"1", "2"});
  CHECK(d.value()->encoding_name() == "intset");
  std::vector<std::string_view> same{"a", "a"};
  CHECK(set_combine(store, SetOp::kDiff, same).value() == nullptr);
  std::vector<std::string_view> missing_first{"nokey", "a"};
  CHECK(set_combine(store, SetOp::kDiff, missing_first).value() == nullptr);
  // Stores overwrite any type and delete the destination on an empty result.
  CHECK(set_combine_store(store, SetOp::kInter, "str", keys).value() == 2);
  CHECK(members(*get(store, "str")) == std::vector<std::string>{"3", "4"});
  CHECK(set_combine_store(store, SetOp::kInter, "str", with_missing).value() == 0);
  CHECK_FALSE(store.contains("str"));
  CHECK(set_combine_store(store, SetOp::kUnion, "a", ab).value() == 5);
  CHECK(get(store, "a")->size() == 5);
}

TEST_CASE("SDIFF follows Redis's algorithm choice, which decides the result's encoding") {
  Store store;
  // First set small against a big second set: algorithm 1 adds only survivors (an intset).
  std::vector<std::string_view> small{"1", "2", "x"};
  set_add(store, "small", small);
  std::vector<std::string> big;
  for (int i = 0; i < 10; ++i) big.push_back("b" + std::to_string(i));
  big.push_back("x");
  std::vector<std::string_view> big_views(big.begin(), big.end());
  set_add(store, "big", big_views);
  std::vector<std::string_view> k1{"small", "big"};
  CHECK(set_combine(store, SetOp::kDiff, k1).value()->encoding_name() == "intset");
  // First set big against small others: algorithm 2 copies the first set (a hashtable
  // because of "x") and removes, so the integers left stay in a hashtable.
  std::vector<std::string> first{"x"};
  for (int i = 0; i < 20; ++i) first.push_back(std::to_string(i));
  std::vector<std::string_view> first_views(first.begin(), first.end());
  set_add(store, "first", first_views);
  std::vector<std::string_view> sub{"x"};
  set_add(store, "sub", sub);
  std::vector<std::string_view> k2{"first", "sub", "sub"};
  auto d = set_combine(store, SetOp::kDiff, k2);
  CHECK(d.value()->size() == 20);
  CHECK(d.value()->encoding_name() == "hashtable");
}
