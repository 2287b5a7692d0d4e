// TrackingTable: the readers of each key are told once per change, and BCAST prefixes collect the
// keys changed under them with the client that changed each.
#include <doctest/doctest.h>

#include <algorithm>

#include "server/tracking_table.h"

using ringkv::server::TrackingTable;

TEST_CASE("a key's readers are taken once") {
  TrackingTable t;
  t.remember(1, "k");
  t.remember(2, "k");
  t.remember(1, "k");
  t.remember(1, "other");
  CHECK(t.keys() == 2);
  std::vector<uint64_t> readers = t.take_readers("k");
  std::sort(readers.begin(), readers.end());
  CHECK(readers == std::vector<uint64_t>{1, 2});
  CHECK(t.take_readers("k").empty());
  CHECK(t.keys() == 1);
  t.forget_all_keys();
  CHECK(t.take_readers("other").empty());
}

TEST_CASE("broadcast prefixes collect the keys changed under them") {
  TrackingTable t;
  CHECK_FALSE(t.has_prefixes());
  t.note_broadcast("p:1", 7);
  CHECK_FALSE(t.broadcast_pending());
  t.set_prefix(1, "p:", true);
  t.set_prefix(2, "", true);
  t.note_broadcast("p:1", 7);
  t.note_broadcast("p:1", 8);
  t.note_broadcast("q", 0);
  CHECK(t.broadcast_pending());
  auto& prefixes = t.prefixes();
  REQUIRE(prefixes.size() == 2);
  CHECK(prefixes["p:"].keys.size() == 1);
  CHECK(prefixes["p:"].keys["p:1"] == 8);  // the last client that changed it
  CHECK(prefixes[""].keys.size() == 2);
  t.broadcast_done();
  CHECK_FALSE(t.broadcast_pending());
  t.set_prefix(1, "p:", false);
  CHECK(prefixes.count("p:") == 0);
  t.set_prefix(2, "", false);
  CHECK_FALSE(t.has_prefixes());
}

TEST_CASE("the keys whose owner may not tell of their change") {
  using ringkv::hashring::HashRing;
  HashRing three;
  three.set_members(std::vector<ringkv::hashring::Member>{{"a:1", 1}, {"b:1", 1}, {"c:1", 1}});
  HashRing two = three;
  two.remove_node("c:1");
  TrackingTable t;
  std::vector<std::string> of_c, of_others;
  for (int i = 0; i < 300; ++i) {
    const std::string key = "k" + std::to_string(i);
    t.remember(1, key);
    (three.owner_of(key) == "c:1" ? of_c : of_others).push_back(key);
  }
  REQUIRE_FALSE(of_c.empty());
  // The first call learns the ring; nothing changed, no peer lost.
  CHECK(t.orphans(three, 1, "a:1").empty());
  CHECK(t.orphans(three, 1, "a:1").empty());
  // A peer lost: the keys it owns, not this node's own (a:1), nor another peer's.
  t.peer_lost("c:1");
  t.peer_lost("a:1");
  std::vector<std::string> lost = t.orphans(three, 1, "a:1");
  std::sort(lost.begin(), lost.end());
  std::sort(of_c.begin(), of_c.end());
  CHECK(lost == of_c);
  CHECK(t.orphans(three, 1, "a:1").empty());  // told once
  // A ring change: the keys whose owner changed (c's, which a and b take), once.
  std::vector<std::string> moved = t.orphans(two, 2, "a:1");
  std::sort(moved.begin(), moved.end());
  CHECK(moved == of_c);
  CHECK(t.orphans(two, 2, "a:1").empty());
  for (const std::string& key : of_others) CHECK(two.owner_of(key) == three.owner_of(key));
}
