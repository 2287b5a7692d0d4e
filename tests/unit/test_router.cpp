// Unit tests for the cluster router: where each kind of command goes, on a ring whose placement
// is known by hand (hash of a decimal string = the number itself).
#include <doctest/doctest.h>

#include <charconv>
#include <string>
#include <vector>

#include "cluster/router.h"
#include "engine/command.h"
#include "hashring/hash_ring.h"

using ringkv::cluster::fragment_command;
using ringkv::cluster::fragment_positions;
using ringkv::cluster::Route;
using ringkv::cluster::RouteKind;
using ringkv::cluster::Router;
using ringkv::hashring::HashRing;
using ringkv::hashring::HashScheme;

namespace {

uint32_t decimal_hash(std::string_view bytes) {
  uint32_t v = 0;
  std::from_chars(bytes.data(), bytes.data() + bytes.size(), v);
  return v;
}

// Nodes "2", "4", "6" with 3 virtual nodes each: points 2,4,6,12,14,16,22,24,26.
// Keys 1-2 → "2", 3-4 → "4", 5-6 → "6", 7-12 → "2", 13-14 → "4", 27+ wraps to "2".
HashRing classic_ring() {
  HashRing ring(HashScheme{"decimal", &decimal_hash, &decimal_hash, 1}, 3);
  ring.add_node("2");
  ring.add_node("4");
  ring.add_node("6");
  return ring;
}

Route route(const Router& r, std::vector<std::string_view> argv) {
  std::string error;
  const ringkv::engine::CommandSpec* spec = ringkv::engine::resolve_command(argv, error);
  REQUIRE(spec != nullptr);
  return r.route(*spec, argv);
}

}  // namespace

TEST_CASE("single-key commands run where their key lives") {
  HashRing ring = classic_ring();
  Router r(ring, ring.index_of("2"));
  CHECK(route(r, {"GET", "11"}).kind == RouteKind::kLocal);
  Route remote = route(r, {"SET", "23", "v"});
  CHECK(remote.kind == RouteKind::kRemote);
  CHECK(ring.nodes()[remote.node].address == "4");
  CHECK(route(r, {"object", "encoding", "5"}).kind == RouteKind::kRemote);
  CHECK(route(r, {"EXPIRE", "27", "10"}).kind == RouteKind::kLocal);
}

TEST_CASE("keyless commands run here; keyspace-wide ones fan out") {
  HashRing ring = classic_ring();
  Router r(ring, 0);
  CHECK(route(r, {"PING"}).kind == RouteKind::kLocal);
  CHECK(route(r, {"CLUSTER", "OWNER", "23"}).kind == RouteKind::kLocal);
  for (std::string_view cmd : {"DBSIZE", "RANDOMKEY", "FLUSHALL"}) {
    CHECK(route(r, {cmd}).kind == RouteKind::kFanOut);
  }
  CHECK(route(r, {"KEYS", "*"}).kind == RouteKind::kFanOut);
  CHECK(route(r, {"SCAN", "0"}).kind == RouteKind::kFanOut);
}

TEST_CASE("multi-key commands on one node are not split") {
  HashRing ring = classic_ring();
  Router r(ring, ring.index_of("2"));
  CHECK(route(r, {"MGET", "1", "2", "11"}).kind == RouteKind::kLocal);
  Route rr = route(r, {"RENAME", "3", "13"});
  CHECK(rr.kind == RouteKind::kRemote);
  CHECK(ring.nodes()[rr.node].address == "4");
}

TEST_CASE("splittable commands split per owner, keeping key groups in order") {
  HashRing ring = classic_ring();
  Router r(ring, ring.index_of("2"));
  Route m = route(r, {"MGET", "1", "3", "5", "11", "13"});
  REQUIRE(m.kind == RouteKind::kSplit);
  REQUIRE(m.fragments.size() == 3);
  CHECK(ring.nodes()[m.fragments[0].node].address == "2");
  CHECK(m.fragments[0].groups == std::vector<size_t>{1, 4});
  CHECK(ring.nodes()[m.fragments[1].node].address == "4");
  CHECK(m.fragments[1].groups == std::vector<size_t>{2, 5});
  CHECK(m.fragments[2].groups == std::vector<size_t>{3});

  Route ms = route(r, {"MSET", "1", "a", "3", "b"});
  REQUIRE(ms.kind == RouteKind::kSplit);
  CHECK(ms.key_step == 2);
  CHECK(ms.fragments[0].groups == std::vector<size_t>{1});
  CHECK(ms.fragments[1].groups == std::vector<size_t>{3});
  for (std::string_view cmd : {"DEL", "UNLINK", "EXISTS", "TOUCH"}) {
    CHECK(route(r, {cmd, "1", "3"}).kind == RouteKind::kSplit);
  }
}

TEST_CASE("a split fragment's command and the positions of its keys among the command's") {
  HashRing ring = classic_ring();
  Router r(ring, ring.index_of("2"));
  std::string error;
  const std::vector<std::string_view> mget{"MGET", "1", "3", "5", "11", "13"};
  const Route m = route(r, mget);
  const auto* mget_spec = ringkv::engine::resolve_command(mget, error);
  REQUIRE(mget_spec != nullptr);
  CHECK(fragment_command(mget, m, m.fragments[0]) == std::vector<std::string>{"MGET", "1", "11"});
  CHECK(fragment_positions(*mget_spec, m, m.fragments[0]) == std::vector<size_t>{0, 3});
  CHECK(fragment_positions(*mget_spec, m, m.fragments[1]) == std::vector<size_t>{1, 4});
  const std::vector<std::string_view> mset{"MSET", "1", "a", "3", "b", "11", "c"};
  const Route ms = route(r, mset);
  const auto* mset_spec = ringkv::engine::resolve_command(mset, error);
  REQUIRE(mset_spec != nullptr);
  CHECK(fragment_command(mset, ms, ms.fragments[0]) ==
        std::vector<std::string>{"MSET", "1", "a", "11", "c"});
  CHECK(fragment_positions(*mset_spec, ms, ms.fragments[0]) == std::vector<size_t>{0, 2});
  CHECK(fragment_command(mset, ms, ms.fragments[1]) == std::vector<std::string>{"MSET", "3", "b"});
  CHECK(fragment_positions(*mset_spec, ms, ms.fragments[1]) == std::vector<size_t>{1});
}

TEST_CASE("atomic multi-key commands across owners are CROSSSLOT") {
  HashRing ring = classic_ring();
  Router r(ring, 0);
  CHECK(route(r, {"RENAME", "1", "3"}).kind == RouteKind::kCrossSlot);
  CHECK(route(r, {"RENAMENX", "1", "3"}).kind == RouteKind::kCrossSlot);
  CHECK(route(r, {"MSETNX", "1", "a", "3", "b"}).kind == RouteKind::kCrossSlot);
  CHECK(route(r, {"COPY", "1", "3"}).kind == RouteKind::kCrossSlot);
}

TEST_CASE("hash tags keep keys together") {
  HashRing ring = classic_ring();
  Router r(ring, ring.index_of("2"));
  // Both keys hash as "3" → node "4".
  Route rr = route(r, {"RENAME", "x{3}", "y{3}"});
  CHECK(rr.kind == RouteKind::kRemote);
  CHECK(ring.nodes()[rr.node].address == "4");
}

TEST_CASE("a malformed key layout runs locally so the command reports its own error") {
  HashRing ring = classic_ring();
  Router r(ring, 0);
  CHECK(route(r, {"MSET", "1", "a", "3"}).kind == RouteKind::kLocal);
}

TEST_CASE("shard channels: SPUBLISH goes to the owner, SSUBSCRIBE stays here unless CROSSSLOT") {
  HashRing ring = classic_ring();
  Router r(ring, ring.index_of("2"));
  Route publish = route(r, {"SPUBLISH", "23", "m"});
  CHECK(publish.kind == RouteKind::kRemote);
  CHECK(ring.nodes()[publish.node].address == "4");
  Route subscribe = route(r, {"SSUBSCRIBE", "23", "13"});
  CHECK(subscribe.kind == RouteKind::kLocal);
  CHECK(ring.nodes()[subscribe.node].address == "4");
  CHECK(route(r, {"SSUBSCRIBE", "23", "5"}).kind == RouteKind::kCrossSlot);
  CHECK(route(r, {"SUNSUBSCRIBE", "1", "3"}).kind == RouteKind::kCrossSlot);
  CHECK(route(r, {"SUNSUBSCRIBE"}).kind == RouteKind::kLocal);
  // GEORADIUS's STORE key and ZRANGESTORE's destination route with the source.
  CHECK(route(r, {"GEORADIUS", "1", "0", "0", "1", "km", "STORE", "3"}).kind ==
        RouteKind::kCrossSlot);
  CHECK(route(r, {"GEORADIUS", "1", "0", "0", "1", "km", "STORE", "11"}).kind == RouteKind::kLocal);
  CHECK(route(r, {"ZRANGESTORE", "1", "3", "0", "-1"}).kind == RouteKind::kCrossSlot);
  CHECK(
      route(r, {"GEOSEARCHSTORE", "5", "6", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"}).kind ==
      RouteKind::kRemote);
}
