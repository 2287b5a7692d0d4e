// Unit tests of ListObject and the pure list operations: pushes and pops at both ends, indexing,
// insertion and removal across node boundaries (checked against a std::deque model under random
// operations), large elements, 100k-element lists, deep copies and exact memory accounting.
#include <doctest/doctest.h>
#include <malloc.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/types/list_type.h"
#include "protocol/errors.h"

namespace {

using namespace ringkv::engine;
using End = ListObject::End;

constexpr int64_t kNow = 1'700'000'000'000;

std::vector<std::string> contents(const ListObject& l) {
  std::vector<std::string> out;
  if (l.size() == 0) return out;
  l.walk(0, false, [&](std::string_view v) {
    out.emplace_back(v);
    return true;
  });
  return out;
}

std::vector<std::string> reversed(const ListObject& l) {
  std::vector<std::string> out;
  if (l.size() == 0) return out;
  l.walk(l.size() - 1, true, [&](std::string_view v) {
    out.emplace_back(v);
    return true;
  });
  return out;
}

// Every way of reading the list agrees with the model.
void check_same(const ListObject& l, const std::deque<std::string>& model) {
  REQUIRE(l.size() == model.size());
  std::vector<std::string> expect(model.begin(), model.end());
  CHECK(contents(l) == expect);
  std::vector<std::string> back(model.rbegin(), model.rend());
  CHECK(reversed(l) == back);
  for (size_t i = 0; i < model.size(); i += 1 + model.size() / 50) CHECK(l.at(i) == model[i]);
}

std::string element(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return "";
    case 1:
      return std::string(rng() % 300, 'x');  // two-byte lengths
    case 2:
      return std::to_string(rng() % 100000);
    default:
      return "e" + std::to_string(rng() % 20);
  }
}

}  // namespace

TEST_CASE("push and pop at both ends") {
  ListObject l;
  CHECK(l.size() == 0);
  CHECK(l.encoding_name() == "quicklist");
  l.push(End::kTail, "b");
  l.push(End::kHead, "a");
  l.push(End::kTail, "c");
  l.push(End::kTail, "");
  CHECK(contents(l) == std::vector<std::string>{"a", "b", "c", ""});
  CHECK(l.at(0) == "a");
  CHECK(l.at(3) == "");
  CHECK(l.pop(End::kTail) == "");
  CHECK(l.pop(End::kHead) == "a");
  CHECK(l.pop(End::kHead) == "b");
  CHECK(l.pop(End::kTail) == "c");
  CHECK(l.size() == 0);
  CHECK(l.node_count() == 0);
}

TEST_CASE("nodes fill to 8 KB and large elements get their own node") {
  ListObject l(-2, 0);
  const std::string v(100, 'v');
  for (int i = 0; i < 1000; ++i) l.push(End::kTail, v);
  // A listpack entry of 103 bytes; Redis adds one while 7 + 103 * n + 100 + 8 <= 8192: 79 per
  // node (redis-server 7.0.15 dumps 13 nodes of 8144 bytes).
  CHECK(l.node_count() == 13);
  CHECK(l.node_size(0) == 79);
  CHECK(l.node_size(12) == 1000 - 12 * 79);
  const std::string big(20000, 'B');
  l.push(End::kHead, big);
  l.insert(500, big);
  CHECK(l.at(0) == big);
  CHECK(l.at(500) == big);
  CHECK(l.at(501) == v);
  CHECK(l.size() == 1002);
  l.set(10, big);
  CHECK(l.at(10) == big);
  CHECK(l.at(11) == v);
  CHECK(l.pop(End::kHead) == big);
}

std::vector<size_t> node_sizes(const ListObject& l) {
  std::vector<size_t> out;
  for (size_t i = 0; i < l.node_count(); ++i) out.push_back(l.node_size(i));
  return out;
}

TEST_CASE("node boundaries follow Redis's quicklist rules") {
  SUBCASE("a positive size counts entries; head pushes fill the head node") {
    ListObject l(3, 0);
    for (int i = 0; i < 10; ++i) l.push(End::kTail, std::to_string(i));
    CHECK(node_sizes(l) == std::vector<size_t>{3, 3, 3, 1});
    for (int i = 0; i < 4; ++i) l.push(End::kHead, "h");
    CHECK(node_sizes(l) == std::vector<size_t>{1, 3, 3, 3, 3, 1});
  }
  SUBCASE("fill is clamped to -5 and 0 keeps one element per node") {
    CHECK(ListObject(-9, 0).fill() == -5);
    CHECK(ListObject(-2, -1).compress_depth() == 0);
    ListObject l(0, 0);
    for (int i = 0; i < 3; ++i) l.push(End::kTail, "x");
    CHECK(node_sizes(l) == std::vector<size_t>{1, 1, 1});
  }
  SUBCASE("LINSERT into a full node splits it; neighbours merge only when they fit") {
    // redis-server 7.0.15, list-max-listpack-size 4: RPUSH 1..8, LINSERT AFTER 2 x.
    ListObject l(4, 0);
    for (int i = 1; i <= 8; ++i) l.push(End::kTail, std::to_string(i));
    l.insert_at(1, true, "x");
    CHECK(node_sizes(l) == std::vector<size_t>{2, 3, 4});
    CHECK(contents(l) == std::vector<std::string>{"1", "2", "x", "3", "4", "5", "6", "7", "8"});
    // Into a node with room (before its head, after its last element): stays in it.
    l.insert_at(2, false, "y");
    CHECK(node_sizes(l) == std::vector<size_t>{2, 4, 4});
    l.pop(End::kTail);
    l.insert_at(8, true, "z");
    CHECK(node_sizes(l) == std::vector<size_t>{2, 4, 4});
    CHECK(l.at(9) == "z");
    // Before the head of a full node whose previous node has room: appended there.
    l.insert_at(2, false, "w");
    CHECK(node_sizes(l) == std::vector<size_t>{3, 4, 4});
    // Inside a full node: split, the value ends the first half, no neighbours fit together.
    l.insert_at(5, false, "v");
    CHECK(node_sizes(l) == std::vector<size_t>{3, 3, 2, 4});
    CHECK(contents(l) ==
          std::vector<std::string>{"1", "2", "w", "y", "x", "v", "3", "4", "5", "6", "7", "z"});
  }
  SUBCASE("deletions and LSET merge nothing") {
    ListObject l(4, 0);
    for (int i = 1; i <= 12; ++i) l.push(End::kTail, std::to_string(i));
    l.erase(1, 2);
    l.erase(3, 2);
    CHECK(node_sizes(l) == std::vector<size_t>{2, 2, 4});
    CHECK(l.remove_matches(0, "8", 0) == 1);
    CHECK(node_sizes(l) == std::vector<size_t>{2, 1, 4});
    l.set(0, std::string(9000, 's'));
    CHECK(node_sizes(l) == std::vector<size_t>{2, 1, 4});
  }
  SUBCASE("append_node keeps a loaded node whole; clone keeps the settings") {
    ListObject l(1, 2);
    const std::vector<std::string_view> elements{"a", "b", "c"};
    l.append_node(elements);
    l.append_node(elements);
    CHECK(node_sizes(l) == std::vector<size_t>{3, 3});
    auto copy = l.clone();
    const auto& c = static_cast<const ListObject&>(*copy);
    CHECK(c.fill() == 1);
    CHECK(c.compress_depth() == 2);
    CHECK(node_sizes(c) == std::vector<size_t>{3, 3});
  }
}

TEST_CASE("random operations agree with a deque model") {
  for (uint64_t seed : {1, 2, 3}) {
    std::mt19937_64 rng(seed);
    ListObject l;
    std::deque<std::string> model;
    for (int step = 0; step < 6000; ++step) {
      const size_t n = model.size();
      const uint64_t op = rng() % 100;
      if (op < 25 || n == 0) {
        std::string v = element(rng);
        if (rng() % 2) {
          l.push(End::kHead, v);
          model.push_front(v);
        } else {
          l.push(End::kTail, v);
          model.push_back(v);
        }
      } else if (op < 40) {
        if (rng() % 2) {
          CHECK(l.pop(End::kHead) == model.front());
          model.pop_front();
        } else {
          CHECK(l.pop(End::kTail) == model.back());
          model.pop_back();
        }
      } else if (op < 55) {
        const size_t i = rng() % (n + 1);
        std::string v = element(rng);
        l.insert(i, v);
        model.insert(model.begin() + static_cast<std::ptrdiff_t>(i), v);
      } else if (op < 65) {
        const size_t i = rng() % n;
        std::string v = element(rng);
        l.set(i, v);
        model[i] = v;
      } else if (op < 72) {
        const size_t i = rng() % n;
        const size_t k = rng() % (std::min<size_t>(n - i, 40) + 1);
        l.erase(i, k);
        model.erase(model.begin() + static_cast<std::ptrdiff_t>(i),
                    model.begin() + static_cast<std::ptrdiff_t>(i + k));
      } else if (op < 77) {
        const std::string v = "e" + std::to_string(rng() % 20);
        const size_t from = rng() % n;
        const size_t limit = rng() % 3;
        size_t removed = 0;
        for (size_t i = from; i < model.size();) {
          if (model[i] == v && (limit == 0 || removed < limit)) {
            model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
            ++removed;
          } else {
            ++i;
          }
        }
        CHECK(l.remove_matches(from, v, limit) == removed);
      } else {
        const size_t i = rng() % n;
        CHECK(l.at(i) == model[i]);
      }
      if (step % 500 == 0) check_same(l, model);
    }
    check_same(l, model);
  }
}

TEST_CASE("100k elements: indexing from both ends, trimming, removal") {
  ListObject l;
  for (int i = 0; i < 100000; ++i) l.push(End::kTail, std::to_string(i));
  CHECK(l.size() == 100000);
  CHECK(l.at(0) == "0");
  CHECK(l.at(99999) == "99999");
  CHECK(l.at(50000) == "50000");
  CHECK(l.at(12345) == "12345");
  CHECK(l.at(87654) == "87654");
  size_t seen = 0;
  l.walk(99990, false, [&](std::string_view) { return ++seen < 100; });
  CHECK(seen == 10);
  l.erase(90000, 10000);
  l.erase(0, 10000);
  CHECK(l.size() == 80000);
  CHECK(l.at(0) == "10000");
  CHECK(l.at(79999) == "89999");
  CHECK(l.remove_matches(0, "50000", 0) == 1);
  CHECK(l.at(40000) == "50001");
  l.erase(0, l.size());
  CHECK(l.node_count() == 0);
}

TEST_CASE("clone is deep and memory is counted exactly") {
  ListObject l;
  for (int i = 0; i < 3000; ++i) l.push(i % 2 ? End::kHead : End::kTail, std::to_string(i));
  auto copy = l.clone();
  auto& c = static_cast<ListObject&>(*copy);
  CHECK(contents(c) == contents(l));
  // The copy's blocks are exact fits, the original's have grown by halves.
  CHECK(c.memory() <= l.memory());
  CHECK(c.memory() > 3000 * 3);
  l.pop(End::kHead);
  CHECK(c.size() == 3000);
  CHECK(l.size() == 2999);
  // A list of small elements costs little more than its bytes: ~2 bytes per entry overhead.
  CHECK(l.memory() < 2999 * 6 + 2048);
  // Emptied, it counts only itself again.
  l.erase(0, l.size());
  CHECK(l.memory() == ListObject().memory());
}

TEST_CASE("store operations: push, pop, move and WRONGTYPE") {
  Store store;
  store.set_now(kNow);
  std::vector<std::string_view> vals{"a", "b", "c"};
  CHECK(*list_push(store, "l", End::kTail, vals, true) == 0);
  CHECK_FALSE(store.contains("l"));
  CHECK(*list_push(store, "l", End::kTail, vals, false) == 3);
  CHECK(*list_push(store, "l", End::kHead, vals, true) == 6);
  auto popped = list_pop(store, "l", End::kTail, 2);
  REQUIRE(popped.ok());
  CHECK(**popped == std::vector<std::string>{"c", "b"});
  CHECK_FALSE(list_pop(store, "missing", End::kHead, 1).value().has_value());
  auto moved = list_move(store, "l", "m", End::kHead, End::kTail);
  CHECK(**moved == "c");
  moved = list_move(store, "l", "l", End::kHead, End::kTail);
  CHECK(**moved == "b");
  CHECK(**list_pop(store, "l", End::kHead, 100) == std::vector<std::string>{"a", "a", "b"});
  CHECK_FALSE(store.contains("l"));
  store.set_string("s", "x", Expiry::none());
  CHECK(list_push(store, "s", End::kTail, vals, false).error() ==
        ringkv::protocol::err::kWrongType);
  CHECK(list_move(store, "m", "s", End::kHead, End::kHead).error() ==
        ringkv::protocol::err::kWrongType);
  CHECK(store.contains("m"));  // nothing moved
}
