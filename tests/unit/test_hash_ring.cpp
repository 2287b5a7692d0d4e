// Unit tests for the consistent-hash ring: placement with a hash whose values are known, the
// crc32 scheme against points computed with zlib, Redis's hash-tag rule, membership handling,
// balance of both schemes and movement when a node joins or leaves.
#include <doctest/doctest.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "hashring/hash_ring.h"
#include "hashring/hash_scheme.h"
#include "hashring/hash_tag.h"
#include "hashring/ring_stats.h"

using ringkv::hashring::arc_shares;
using ringkv::hashring::balance_of;
using ringkv::hashring::balanced_scheme;
using ringkv::hashring::crc32_hash;
using ringkv::hashring::crc32_scheme;
using ringkv::hashring::effective_shares;
using ringkv::hashring::hash_tag;
using ringkv::hashring::HashRing;
using ringkv::hashring::HashScheme;
using ringkv::hashring::keys_per_node;
using ringkv::hashring::Member;
using ringkv::hashring::movement;
using ringkv::hashring::parse_member;
using ringkv::hashring::sample_keys;
using ringkv::hashring::scheme_named;

namespace {

// The hash of a decimal string is the number itself, so every point is known by hand.
uint32_t decimal_hash(std::string_view bytes) {
  uint32_t value = 0;
  std::from_chars(bytes.data(), bytes.data() + bytes.size(), value);
  return value;
}

HashScheme decimal_scheme() { return HashScheme{"decimal", &decimal_hash, &decimal_hash, 1}; }

// Every hash collides: all virtual nodes share one point.
uint32_t constant_hash(std::string_view) { return 7; }

std::vector<Member> members(std::initializer_list<const char*> addresses) {
  std::vector<Member> list;
  for (const char* a : addresses) list.push_back(Member{a, 1});
  return list;
}

std::vector<Member> port_range(const std::string& host, int first_port, int count) {
  std::vector<Member> list;
  for (int i = 0; i < count; ++i)
    list.push_back(Member{host + ":" + std::to_string(first_port + i)});
  return list;
}

std::vector<Member> host_range(const std::string& prefix, int count, const std::string& port) {
  std::vector<Member> list;
  for (int i = 1; i <= count; ++i) list.push_back(Member{prefix + std::to_string(i) + ":" + port});
  return list;
}

double busiest_by_share(const HashRing& ring) {
  const auto shares = effective_shares(ring);
  return balance_of(ring, shares).busiest_over_mean;
}

double busiest_by_keys(const HashRing& ring, const std::vector<std::string>& keys) {
  const auto counts = keys_per_node(ring, keys);
  const std::vector<double> values(counts.begin(), counts.end());
  return balance_of(ring, values).busiest_over_mean;
}

}  // namespace

TEST_CASE("classic three-node example with a known hash") {
  HashRing ring(decimal_scheme(), 3);
  const auto list = members({"6", "4", "2"});
  REQUIRE(ring.set_members(list));

  std::vector<uint32_t> points;
  for (const auto& v : ring.points()) points.push_back(v.point);
  CHECK(points == std::vector<uint32_t>{2, 4, 6, 12, 14, 16, 22, 24, 26});

  CHECK(ring.owner_of("2") == "2");
  CHECK(ring.owner_of("11") == "2");
  CHECK(ring.owner_of("23") == "4");
  CHECK(ring.owner_of("27") == "2");  // past the last point: wraps to the first

  std::vector<std::string> keys;
  for (int k = 0; k <= 40; ++k) keys.push_back(std::to_string(k));
  const HashRing before = ring;
  REQUIRE(ring.add_node("8"));
  CHECK(ring.owner_of("27") == "8");
  const auto moved = movement(before, ring, keys);
  // Only keys in (6,8], (16,18] and (26,28] go to "8"; nothing else changes owner.
  CHECK(moved.moved == 6);
  CHECK(moved.moved_not_involving("8") == 0);
  for (const auto& t : moved.transfers) CHECK(t.to == "8");
  for (const char* k : {"2", "11", "23"}) CHECK(ring.owner_of(k) == before.owner_of(k));
}

TEST_CASE("crc32 scheme places virtual nodes at zlib crc32 of index + address") {
  CHECK(crc32_hash("0127.0.0.1:7001") == 635734289u);
  CHECK(crc32_hash("foo") == 2356372769u);

  HashRing ring(crc32_scheme());
  REQUIRE(ring.set_members(port_range("127.0.0.1", 7001, 3)));
  REQUIRE(ring.points().size() == 300);
  auto has_point = [&](uint32_t point, std::string_view address) {
    const size_t node = ring.index_of(address);
    return std::any_of(ring.points().begin(), ring.points().end(),
                       [&](const auto& v) { return v.point == point && v.node == node; });
  };
  CHECK(has_point(635734289u, "127.0.0.1:7001"));   // crc32("0127.0.0.1:7001")
  CHECK(has_point(2619298553u, "127.0.0.1:7001"));  // crc32("1127.0.0.1:7001")
  CHECK(has_point(1151180273u, "127.0.0.1:7001"));  // crc32("99127.0.0.1:7001")
  CHECK(has_point(3169704107u, "127.0.0.1:7002"));  // crc32("0127.0.0.1:7002")
  CHECK(ring.points().front().point == 18368748u);
  CHECK(ring.points().back().point == 4263198528u);

  // Owners computed with Python's zlib.crc32 and a sorted list of the 300 points.
  CHECK(ring.owner_of("key:1") == "127.0.0.1:7003");
  CHECK(ring.owner_of("foo") == "127.0.0.1:7003");
  CHECK(ring.owner_of("user") == "127.0.0.1:7001");
  CHECK(ring.owner_of("bar") == "127.0.0.1:7001");
  CHECK(ring.owner_of("k4") == "127.0.0.1:7002");
  CHECK(ring.owner_of("k102") == "127.0.0.1:7002");  // crc32 4284172234: wraps to the first point
}

TEST_CASE("hash tags follow Redis's keyHashSlot rule") {
  CHECK(hash_tag("foo") == "foo");
  CHECK(hash_tag("{user1000}.following") == "user1000");
  CHECK(hash_tag("{}") == "{}");
  CHECK(hash_tag("}{") == "}{");
  CHECK(hash_tag("{a}{b}") == "a");
  CHECK(hash_tag("foo{}{bar}") == "foo{}{bar}");
  CHECK(hash_tag("{{a}}") == "{a");
  CHECK(hash_tag("{abc") == "{abc");
  CHECK(hash_tag("abc}") == "abc}");
  CHECK(hash_tag("x{y}z") == "y");
  CHECK(hash_tag("") == "");

  for (const auto& scheme : {crc32_scheme(), balanced_scheme()}) {
    HashRing ring(scheme);
    ring.set_members(port_range("127.0.0.1", 7001, 5));
    for (int i = 0; i < 50; ++i) {
      const std::string n = std::to_string(i);
      CHECK(ring.owner_of("{user" + n + "}:name") == ring.owner_of("user" + n));
      CHECK(ring.owner_of("prefix{user" + n + "}") == ring.owner_of("user" + n));
    }
  }
}

TEST_CASE("member list is de-duplicated and order-independent") {
  HashRing a(balanced_scheme());
  HashRing b(balanced_scheme());
  a.set_members(members({"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}));
  b.set_members(members(
      {"10.0.0.3:6379", "10.0.0.1:6379", "10.0.0.3:6379", "10.0.0.2:6379", "10.0.0.1:6379"}));
  CHECK(b.size() == 3);
  CHECK(a.fingerprint() == b.fingerprint());
  REQUIRE(a.points().size() == b.points().size());
  CHECK(std::equal(
      a.points().begin(), a.points().end(), b.points().begin(),
      [](const auto& x, const auto& y) { return x.point == y.point && x.node == y.node; }));
  for (const auto& key : sample_keys(1000)) CHECK(a.owner_of(key) == b.owner_of(key));

  // Adding one by one, in any order, gives the same ring as the whole list.
  HashRing c(balanced_scheme());
  for (const char* addr : {"10.0.0.2:6379", "10.0.0.3:6379", "10.0.0.1:6379"}) c.add_node(addr);
  CHECK(c.fingerprint() == a.fingerprint());
  CHECK_FALSE(c.add_node("10.0.0.1:6379"));

  // A duplicate with two weights keeps the larger, whatever the order.
  HashRing d(balanced_scheme());
  HashRing e(balanced_scheme());
  d.set_members(std::vector<Member>{{"n1:1", 2}, {"n1:1", 1}, {"n2:1", 1}});
  e.set_members(std::vector<Member>{{"n2:1", 1}, {"n1:1", 1}, {"n1:1", 2}});
  CHECK(d.fingerprint() == e.fingerprint());
  CHECK(d.nodes()[0].weight == 2);
}

TEST_CASE("equal points are broken by address, not by insertion order") {
  const HashScheme colliding{"constant", &constant_hash, &constant_hash, 1};
  HashRing a(colliding, 2);
  HashRing b(colliding, 2);
  a.set_members(members({"b:1", "a:1", "c:1"}));
  b.add_node("c:1");
  b.add_node("a:1");
  b.add_node("b:1");
  CHECK(a.owner_of("anything") == "a:1");
  CHECK(b.owner_of("anything") == "a:1");
  b.remove_node("a:1");
  CHECK(b.owner_of("anything") == "b:1");
  // All arcs but one are empty: the first virtual node at the point owns the whole ring.
  const auto shares = arc_shares(a);
  CHECK(shares[a.index_of("a:1")] == doctest::Approx(1.0));
}

TEST_CASE("version and fingerprint track changes") {
  HashRing ring(balanced_scheme());
  CHECK(ring.version() == 0);
  CHECK(ring.owner_of("k").empty());
  CHECK(ring.owner_index("k") == HashRing::kNoNode);
  const uint64_t empty_fp = ring.fingerprint();
  ring.add_node("a:1");
  const uint64_t one = ring.fingerprint();
  CHECK(ring.version() == 1);
  CHECK(one != empty_fp);
  CHECK(ring.owner_of("k") == "a:1");
  CHECK(ring.set_weight("a:1", 2));
  CHECK(ring.version() == 2);
  CHECK(ring.fingerprint() != one);
  CHECK_FALSE(ring.set_weight("a:1", 2));
  CHECK_FALSE(ring.remove_node("b:1"));
  CHECK(ring.version() == 2);
  CHECK(ring.remove_node("a:1"));
  CHECK(ring.fingerprint() == empty_fp);

  // The scheme and the replicas are part of the fingerprint.
  HashRing x(crc32_scheme(), 100);
  HashRing y(balanced_scheme(), 100);
  HashRing z(crc32_scheme(), 50);
  for (HashRing* r : {&x, &y, &z}) r->add_node("a:1");
  CHECK(x.fingerprint() != y.fingerprint());
  CHECK(x.fingerprint() != z.fingerprint());
}

TEST_CASE("members parse from host:port[=weight]") {
  CHECK(parse_member("127.0.0.1:7001") == Member{"127.0.0.1:7001", 1});
  CHECK(parse_member("127.0.0.1:7001=3") == Member{"127.0.0.1:7001", 3});
  CHECK_FALSE(parse_member("127.0.0.1:7001=0"));
  CHECK_FALSE(parse_member("127.0.0.1:7001=x"));
  CHECK_FALSE(parse_member("127.0.0.1:7001="));
  CHECK_FALSE(parse_member("=2"));
  CHECK_FALSE(parse_member(""));
  CHECK(scheme_named("crc32")->name == "crc32");
  CHECK(scheme_named("balanced")->probes == 5);
  CHECK_FALSE(scheme_named("md5"));
}

TEST_CASE("crc32 clusters at 10 x 100; balanced stays within 1.12x of the mean") {
  const auto keys = sample_keys(100000);
  HashRing crc(crc32_scheme());
  crc.set_members(port_range("127.0.0.1", 7001, 10));
  const double crc_arc = busiest_by_share(crc);
  CHECK(crc_arc > 1.2);
  CHECK(crc_arc < 1.5);
  CHECK(busiest_by_keys(crc, keys) > 1.2);

  const std::vector<std::vector<Member>> sets = {
      port_range("127.0.0.1", 7001, 10), port_range("127.0.0.1", 6379, 10),
      host_range("10.0.0.", 10, "6379"), host_range("192.168.1.", 10, "7000"),
      port_range("node.example.com", 7000, 10)};
  for (const auto& set : sets) {
    HashRing ring(balanced_scheme());
    ring.set_members(set);
    CAPTURE(set.front().address);
    CHECK(busiest_by_share(ring) <= 1.12);
    CHECK(busiest_by_keys(ring, keys) <= 1.12);
  }
}

TEST_CASE("balanced stays within 1.12x over many random member sets") {
  using ringkv::hashring::mix64;
  for (uint64_t set = 0; set < 100; ++set) {
    std::vector<Member> list;
    for (uint64_t k = 0; k < 10; ++k) {
      const uint64_t x = mix64(set * 16 + k + 1);
      list.push_back(Member{std::to_string(10 + x % 200) + "." + std::to_string((x >> 8) % 256) +
                            "." + std::to_string((x >> 16) % 256) + "." +
                            std::to_string((x >> 24) % 254 + 1) + ":" +
                            std::to_string(1024 + (x >> 32) % 60000)});
    }
    HashRing ring(balanced_scheme());
    ring.set_members(list);
    CAPTURE(list.front().address);
    CHECK(busiest_by_share(ring) <= 1.12);
  }
}

TEST_CASE("effective shares sum to one and match key counts") {
  const auto keys = sample_keys(200000);
  for (const auto& scheme : {crc32_scheme(), balanced_scheme()}) {
    HashRing ring(scheme);
    ring.set_members(port_range("127.0.0.1", 7001, 4));
    const auto shares = effective_shares(ring);
    double sum = 0;
    for (double s : shares) sum += s;
    CHECK(sum == doctest::Approx(1.0));
    double arc_sum = 0;
    for (double s : arc_shares(ring)) arc_sum += s;
    CHECK(arc_sum == doctest::Approx(1.0));
    if (scheme.name == "balanced") {
      // Keys are hashed uniformly, so their spread follows the computed shares closely.
      const auto counts = keys_per_node(ring, keys);
      for (size_t n = 0; n < ring.size(); ++n) {
        CHECK(static_cast<double>(counts[n]) / keys.size() ==
              doctest::Approx(shares[n]).epsilon(0.03));
      }
    }
  }
}

TEST_CASE("only keys to or from the changed node move") {
  const auto keys = sample_keys(50000);
  for (const auto& scheme : {crc32_scheme(), balanced_scheme()}) {
    HashRing before(scheme);
    before.set_members(port_range("127.0.0.1", 7001, 8));
    HashRing grown = before;
    grown.add_node("127.0.0.1:7009");
    const auto added = movement(before, grown, keys);
    CHECK(added.moved > 0);
    CHECK(added.moved_not_involving("127.0.0.1:7009") == 0);
    for (const auto& t : added.transfers) CHECK(t.to == "127.0.0.1:7009");
    // Roughly the new node's fair part (1/9) moves.
    CHECK(static_cast<double>(added.moved) / keys.size() == doctest::Approx(1.0 / 9).epsilon(0.5));

    HashRing shrunk = before;
    shrunk.remove_node("127.0.0.1:7003");
    const auto removed = movement(before, shrunk, keys);
    CHECK(removed.moved_not_involving("127.0.0.1:7003") == 0);
    for (const auto& t : removed.transfers) CHECK(t.from == "127.0.0.1:7003");
    CHECK(removed.moved == keys_per_node(before, keys)[before.index_of("127.0.0.1:7003")]);
  }
}

TEST_CASE("a node of weight 2 gets about twice the share") {
  const auto keys = sample_keys(100000);
  HashRing ring(balanced_scheme());
  ring.set_members(std::vector<Member>{
      {"127.0.0.1:7001", 2}, {"127.0.0.1:7002", 1}, {"127.0.0.1:7003", 1}, {"127.0.0.1:7004", 1}});
  CHECK(ring.points().size() == 500);
  const auto shares = effective_shares(ring);
  const size_t heavy = ring.index_of("127.0.0.1:7001");
  CHECK(shares[heavy] == doctest::Approx(0.4).epsilon(0.1));
  const auto counts = keys_per_node(ring, keys);
  for (size_t n = 0; n < ring.size(); ++n) {
    if (n == heavy) continue;
    const double ratio = static_cast<double>(counts[heavy]) / counts[n];
    CHECK(ratio > 1.6);
    CHECK(ratio < 2.5);
  }
  // Weight-aware balance: the heavy node is compared with its fair 2/5, not with the mean.
  const std::vector<double> values(counts.begin(), counts.end());
  CHECK(balance_of(ring, values).busiest_over_mean < 1.15);
}

TEST_CASE("preference lists: the owner, then the owners without the nodes before") {
  HashRing ring(decimal_scheme(), 3);
  REQUIRE(ring.set_members(members({"6", "4", "2"})));
  // Points 2 4 6 12 14 16 22 24 26; nodes by address: "2"=0, "4"=1, "6"=2.
  std::vector<size_t> p;
  ring.preference("3", 2, p);
  CHECK(p == std::vector<size_t>{1, 2});  // owner "4", then "6"
  ring.preference("25", 3, p);
  CHECK(p == std::vector<size_t>{2, 0, 1});  // "6" at 26, wraps to "2" at 2, then "4"
  ring.preference("25", 9, p);
  CHECK(p.size() == 3);  // never more than the ring's nodes
  ring.preference("1", 1, p);
  CHECK(p == std::vector<size_t>{0});

  // With real hashing: the owner first, every node distinct, and removing the owner makes its
  // first replica the owner and shifts the rest up (failover keeps the copies where they are).
  HashRing big(balanced_scheme());
  big.set_members(port_range("127.0.0.1", 7001, 5));
  for (const std::string& key : sample_keys(2000)) {
    big.preference(key, 3, p);
    REQUIRE(p.size() == 3);
    CHECK(p[0] == big.owner_index(key));
    CHECK(p[0] != p[1]);
    CHECK(p[1] != p[2]);
    CHECK(p[0] != p[2]);
    HashRing without = big;
    without.remove_node(big.nodes()[p[0]].address);
    std::vector<size_t> q;
    without.preference(key, 2, q);
    CHECK(without.nodes()[q[0]].address == big.nodes()[p[1]].address);
    CHECK(without.nodes()[q[1]].address == big.nodes()[p[2]].address);
  }
  HashRing empty;
  empty.preference("k", 2, p);
  CHECK(p.empty());
}

TEST_CASE("every entry of a preference list is the owner once the entries before it are gone") {
  // The whole list, on rings of several sizes and weights (the probes move past taken nodes
  // incrementally; removing the nodes and looking the owner up again is the definition).
  for (int size : {2, 3, 4, 7}) {
    std::vector<Member> ms = port_range("127.0.0.1", 7001, size);
    for (size_t i = 0; i < ms.size(); ++i) ms[i].weight = static_cast<uint32_t>(1 + i % 3);
    HashRing ring(balanced_scheme());
    ring.set_members(ms);
    std::vector<size_t> p;
    for (const std::string& key : sample_keys(150)) {
      const auto n = static_cast<size_t>(size);
      ring.preference(key, n, p);
      REQUIRE(p.size() == n);
      HashRing rest = ring;
      for (size_t k = 0; k < n; ++k) {
        CHECK(rest.owner_of(key) == ring.nodes()[p[k]].address);
        if (k + 1 < n) rest.remove_node(ring.nodes()[p[k]].address);
      }
    }
  }
}

TEST_CASE("preference lists skip a node's run of consecutive points, across the wrap") {
  // Node "1" with weight 2 and 3 points each: 1 11 21 31 41 51; node "5": 5 15 25. Sorted:
  // 1 5 11 15 21 25 31 41 51, so 31 41 51 and (wrapping) 1 are one run of node "1".
  HashRing ring(decimal_scheme(), 3);
  const std::vector<Member> weighted{Member{"1", 2}, Member{"5", 1}};
  REQUIRE(ring.set_members(weighted));
  const size_t one = ring.index_of("1");
  const size_t five = ring.index_of("5");
  std::vector<size_t> p;
  ring.preference("26", 2, p);  // owner: 31 ("1"), then past 41 51 1 to 5 ("5")
  CHECK(p == std::vector<size_t>{one, five});
  ring.preference("52", 2, p);  // wraps to 1 ("1"), then 5
  CHECK(p == std::vector<size_t>{one, five});
  ring.preference("22", 2, p);  // 25 ("5"), then 31
  CHECK(p == std::vector<size_t>{five, one});
  HashRing single(decimal_scheme(), 3);
  REQUIRE(single.set_members(members({"7"})));
  single.preference("3", 2, p);
  CHECK(p == std::vector<size_t>{0});
}
