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
