// Unit tests of the stream type: ID text forms as Redis 7.0.15 parses them, nodes filling and
// splitting at Redis's limits (100 entries, 4096 bytes) with exact listpack sizes, tombstones,
// exact and approximate trimming, ranges in both directions across nodes, the radix-tree node
// count XINFO reports, consumer groups (PEL ownership, acknowledgement, consumer deletion, read
// counters and lag), deep copies, and the RDB encoding round trip with malformed payloads
// refused. Figures marked "redis" were read from redis-server 7.0.15 for the same commands.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/rdb/rdb_format.h"
#include "engine/rdb/rdb_stream.h"
#include "engine/types/stream_group.h"
#include "engine/types/stream_id.h"
#include "engine/types/stream_type.h"

namespace {

using namespace ringkv::engine;

StreamID id(uint64_t ms, uint64_t seq) { return {ms, seq}; }

void add(StreamObject& s, StreamID at, std::vector<std::string_view> fv) { s.append(at, fv); }

std::vector<StreamID> ids(const StreamObject& s, StreamID start, StreamID end, bool reverse,
                          size_t limit = 0) {
  std::vector<StreamID> out;
  s.for_each(start, end, reverse, [&](const StreamItem& item) {
    out.push_back(item.id);
    return limit == 0 || out.size() < limit;
  });
  return out;
}

// Encodes and decodes `s`, as DUMP and RESTORE would.
std::unique_ptr<StreamObject> round_trip(const StreamObject& s) {
  std::string out;
  encode_stream(s, out);
  REQUIRE(static_cast<uint8_t>(out[0]) == rdb::kTypeStreamListpacks2);
  rdb::Reader r(std::string_view(out).substr(1));
  return decode_stream(rdb::kTypeStreamListpacks2, r);
}

}  // namespace

TEST_CASE("stream IDs parse as Redis's streamGenericParseIDOrReply") {
  auto parse = [](std::string_view s, StreamIDSyntax syntax = {}) {
    return parse_stream_id(s, syntax);
  };
  CHECK(parse("1-2")->id == id(1, 2));
  CHECK(parse("5")->id == id(5, 0));
  CHECK(parse("5", {.missing_seq = UINT64_MAX})->id == id(5, UINT64_MAX));
  CHECK(parse("-")->id == kMinStreamID);
  CHECK(parse("+")->id == kMaxStreamID);
  CHECK_FALSE(parse("-", {.strict = true}));
  CHECK_FALSE(parse("+", {.strict = true}));
  // string2ull: strtoull's leading spaces, '+' and leading zeros pass; signs and overflow fail.
  CHECK(parse(" 7-1")->id == id(7, 1));
  CHECK(parse("+7-1")->id == id(7, 1));
  CHECK(parse("007-01")->id == id(7, 1));
  CHECK(parse("18446744073709551615-18446744073709551615")->id == kMaxStreamID);
  CHECK_FALSE(parse("18446744073709551616"));
  CHECK_FALSE(parse("1--1"));
  CHECK_FALSE(parse("1-"));
  CHECK_FALSE(parse(""));
  CHECK_FALSE(parse("0x10"));
  CHECK_FALSE(parse("1.5"));
  CHECK_FALSE(parse(std::string(128, '1')));
  // An embedded NUL ends the C string Redis reads.
  CHECK(parse(std::string_view("3-4\0junk", 8))->id == id(3, 4));
  // "<ms>-*" only where XADD allows it.
  CHECK_FALSE(parse("3-*"));
  auto auto_seq = parse("3-*", {.strict = true, .allow_auto_seq = true});
  REQUIRE(auto_seq);
  CHECK(auto_seq->id == id(3, 0));
  CHECK_FALSE(auto_seq->seq_given);

  CHECK(format_stream_id(kMaxStreamID) == "18446744073709551615-18446744073709551615");
  StreamID x = id(1, UINT64_MAX);
  CHECK(increment_stream_id(x));
  CHECK(x == id(2, 0));
  x = kMaxStreamID;
  CHECK_FALSE(increment_stream_id(x));
  CHECK(x == kMinStreamID);
  x = id(2, 0);
  CHECK(decrement_stream_id(x));
  CHECK(x == id(1, UINT64_MAX));
  x = kMinStreamID;
  CHECK_FALSE(decrement_stream_id(x));
  CHECK(x == kMaxStreamID);
}

TEST_CASE("nodes fill at 100 entries and 4096 bytes, as Redis's listpacks") {
  StreamObject s;
  for (uint64_t i = 1; i <= 250; ++i) add(s, id(i, 1), {"f", "v"});
  CHECK(s.length() == 250);
  CHECK(s.nodes().size() == 3);
  CHECK(s.nodes().begin()->second.count() == 100);
  CHECK(s.rax_node_count() == 8);  // redis
  CHECK(s.first_id() == id(1, 1));
  CHECK(s.last_id() == id(250, 1));
  CHECK(s.entries_added() == 250);

  StreamObject wide;
  for (uint64_t i = 1; i <= 450; ++i) add(wide, id(i * 1000000, 1), {"f", "v"});
  CHECK(wide.nodes().size() == 5);
  CHECK(wide.rax_node_count() == 12);  // redis

  StreamObject big;
  add(big, id(1, 1), {"f", std::string(3000, 'a')});
  add(big, id(2, 1), {"f", std::string(1100, 'a')});
  add(big, id(3, 1), {"f", "x"});
  CHECK(big.nodes().size() == 2);  // redis

  StreamObject empty;
  CHECK(empty.rax_node_count() == 1);
  CHECK(empty.first_live_id() == kMaxStreamID);
  CHECK(empty.last_live_id() == kMinStreamID);
}

TEST_CASE("entries with the master entry's fields are marked, others carry theirs") {
  StreamObject s;
  add(s, id(1, 0), {"a", "1", "b", "2"});
  add(s, id(2, 0), {"a", "3", "b", "4"});
  add(s, id(3, 0), {"a", "5"});
  const StreamNode& node = s.nodes().begin()->second;
  CHECK(node.master_fields == std::vector<std::string>{"a", "b"});
  CHECK(node.count() == 3);
  CHECK(node.flags_at(0) == kStreamItemSameFields);
  CHECK(node.flags_at(node.next(0)) == kStreamItemSameFields);
  CHECK(node.flags_at(node.next(node.next(0))) == 0);
  CHECK(node.next(node.next(node.next(0))) == node.end());
  auto strings = [&](StreamID at) {
    StreamItem item;
    REQUIRE(s.find(at, &item));
    std::vector<std::string> out;
    item.for_each_string([&](std::string_view x) { out.emplace_back(x); });
    return out;
  };
  CHECK(strings(id(2, 0)) == std::vector<std::string>{"a", "3", "b", "4"});
  CHECK(strings(id(3, 0)) == std::vector<std::string>{"a", "5"});
}

TEST_CASE("values are given back exactly, whether kept as integers or as text") {
  // Integers in [-2^62, 2^62) in canonical form are packed as integers; everything else, text
  // that only looks like a number included, is kept as it came.
  const std::vector<std::string> values = {"0",
                                           "7",
                                           "-1",
                                           "123456",
                                           "-0",
                                           "007",
                                           "+5",
                                           " 5",
                                           "5 ",
                                           "-",
                                           "",
                                           "1e3",
                                           "4611686018427387903",
                                           "4611686018427387904",
                                           "-4611686018427387904",
                                           "-4611686018427387905",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "99999999999999999999",
                                           std::string(200, 'x'),
                                           std::string(20000, 'y')};
  StreamObject s;
  uint64_t ms = 1;
  for (const std::string& v : values) {
    add(s, id(ms, 0), {"f", v});
    add(s, id(ms, 1), {v, "g", v, v});
    ++ms;
  }
  std::vector<std::vector<std::string>> forward;
  s.for_each(kMinStreamID, kMaxStreamID, false, [&](const StreamItem& item) {
    std::vector<std::string> strings;
    item.for_each_string([&](std::string_view x) { strings.emplace_back(x); });
    forward.push_back(strings);
    return true;
  });
  REQUIRE(forward.size() == 2 * values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    CHECK(forward[2 * i] == std::vector<std::string>{"f", values[i]});
    CHECK(forward[2 * i + 1] == std::vector<std::string>{values[i], "g", values[i], values[i]});
  }
  // Walking down (entries of every size, so lengths of 1 to 3 bytes) meets the same entries.
  std::vector<StreamID> down = ids(s, kMinStreamID, kMaxStreamID, true);
  std::vector<StreamID> up = ids(s, kMinStreamID, kMaxStreamID, false);
  std::reverse(up.begin(), up.end());
  CHECK(down == up);
  CHECK(down.size() == 2 * values.size());
  StreamItem item;
  REQUIRE(s.find(id(4, 1), &item));
  CHECK(item.size() == 4);
  CHECK_FALSE(s.find(id(4, 2)));
}

TEST_CASE("entries of a few small fields take about ten bytes each") {
  // The bench's shape: the same three fields, small integer values, IDs from a fast writer
  // (sequences restarting at each millisecond, so often below the master entry's).
  StreamObject s;
  add(s, id(1000, 7), {"a", "0", "b", "2", "c", "3"});
  for (uint64_t n = 1; n < 100; ++n) {
    const std::string a = std::to_string(100000 + n);
    add(s, id(1001 + n / 10, n % 10), {"a", a, "b", "2", "c", "3"});
  }
  REQUIRE(s.nodes().size() == 1);
  const StreamNode& node = s.nodes().begin()->second;
  CHECK(node.count() == 100);
  // flags, two deltas, a 3-byte integer, two 1-byte ones and the back-length: 9 bytes.
  CHECK(node.end() == 9 * 99 + 7);
  StreamItem item;
  REQUIRE(s.find(id(1010, 0), &item));
  std::vector<std::string> strings;
  item.for_each_string([&](std::string_view x) { strings.emplace_back(x); });
  CHECK(strings == std::vector<std::string>{"a", "100090", "b", "2", "c", "3"});
  CHECK(ids(s, id(1009, 8), id(1010, 1), false) ==
        std::vector<StreamID>{id(1009, 8), id(1009, 9), id(1010, 0), id(1010, 1)});
  CHECK(ids(s, id(1000, 0), id(1001, 1), true) == std::vector<StreamID>{id(1001, 1), id(1000, 7)});
}

TEST_CASE("deletions leave tombstones until the node empties") {
  StreamObject s;
  for (uint64_t i = 1; i <= 5; ++i) add(s, id(i, 0), {"f", "v"});
  CHECK(s.remove(id(1, 0)));
  CHECK_FALSE(s.remove(id(1, 0)));
  CHECK_FALSE(s.remove(id(9, 0)));
  CHECK(s.first_id() == id(2, 0));
  CHECK(s.max_deleted_id() == id(1, 0));
  CHECK(s.nodes().begin()->second.deleted == 1);
  CHECK(s.remove(id(4, 0)));
  CHECK(s.first_id() == id(2, 0));
  CHECK(s.max_deleted_id() == id(4, 0));
  CHECK(ids(s, kMinStreamID, kMaxStreamID, false) ==
        std::vector<StreamID>{id(2, 0), id(3, 0), id(5, 0)});
  for (uint64_t i : {2, 3, 5}) CHECK(s.remove(id(i, 0)));
  CHECK(s.nodes().empty());
  CHECK(s.length() == 0);
  CHECK(s.first_id() == kMinStreamID);
  CHECK(s.last_id() == id(5, 0));
  // An empty stream stays a key.
  CHECK_FALSE(s.erase_when_empty());
}

TEST_CASE("trimming: exact marks entries, approximate removes whole nodes only") {
  auto filled = [] {
    auto s = std::make_unique<StreamObject>();
    for (uint64_t i = 1; i <= 250; ++i) add(*s, id(i, 1), {"f", "v"});
    return s;
  };
  using Strategy = StreamTrim::Strategy;
  auto s = filled();
  CHECK(s->trim({.strategy = Strategy::kMaxLen, .maxlen = 120, .approx = true}) == 100);
  CHECK(s->length() == 150);
  CHECK(s->trim({.strategy = Strategy::kMaxLen, .maxlen = 120, .approx = true}) == 0);
  CHECK(s->trim({.strategy = Strategy::kMaxLen, .maxlen = 40}) == 110);
  CHECK(s->length() == 40);
  CHECK(s->first_id() == id(211, 1));
  CHECK(s->max_deleted_id() == kMinStreamID);  // trimming is no deletion

  s = filled();
  CHECK(s->trim({.strategy = Strategy::kMaxLen, .maxlen = 0, .approx = true, .limit = 150}) == 100);
  CHECK(s->trim({.strategy = Strategy::kMinId, .minid = id(230, 1)}) == 129);
  CHECK(ids(*s, kMinStreamID, kMaxStreamID, false, 1) == std::vector<StreamID>{id(230, 1)});
  CHECK(s->trim({.strategy = Strategy::kMinId, .minid = id(240, 0), .approx = true}) == 0);
  CHECK(s->trim({.strategy = Strategy::kMaxLen, .maxlen = 0}) == 21);
  CHECK(s->length() == 0);
  CHECK(s->first_id() == kMinStreamID);
}

TEST_CASE("ranges run across nodes in both directions") {
  StreamObject s;
  for (uint64_t i = 1; i <= 300; ++i) add(s, id(i, i % 3), {"f", "v"});
  CHECK(ids(s, id(99, 0), id(102, UINT64_MAX), false) ==
        std::vector<StreamID>{id(99, 0), id(100, 1), id(101, 2), id(102, 0)});
  CHECK(ids(s, id(99, 0), id(102, UINT64_MAX), true) ==
        std::vector<StreamID>{id(102, 0), id(101, 2), id(100, 1), id(99, 0)});
  CHECK(ids(s, id(200, 5), id(200, 6), false).empty());
  CHECK(ids(s, kMinStreamID, kMaxStreamID, true, 2) ==
        std::vector<StreamID>{id(300, 0), id(299, 2)});
  CHECK(s.last_live_id() == id(300, 0));
}

TEST_CASE("a deleted entry above a later one is passed over, as Redis's iterator does") {
  // XADD 262-4, XADD <max>-1 then XDEL it, XSETID 266-7, XADD 324-0: the node now holds a
  // tombstone whose ID is above the live entry appended after it.
  StreamObject s;
  add(s, id(262, 4), {"h", ""});
  add(s, id(UINT64_MAX, 1), {"g", "-1"});
  CHECK(s.remove(id(UINT64_MAX, 1)));
  s.set_last_id(id(266, 7));
  add(s, id(324, 0), {"h", "-0"});
  CHECK(s.nodes().size() == 1);
  StreamItem item;
  CHECK(s.find(id(324, 0), &item));
  CHECK_FALSE(s.find(id(UINT64_MAX, 1), nullptr));
  CHECK(ids(s, kMinStreamID, kMaxStreamID, false) == std::vector<StreamID>{id(262, 4), id(324, 0)});
  CHECK(ids(s, kMinStreamID, kMaxStreamID, true) == std::vector<StreamID>{id(324, 0), id(262, 4)});
  CHECK(ids(s, id(300, 0), id(400, 0), false) == std::vector<StreamID>{id(324, 0)});
  CHECK(ids(s, id(300, 0), id(400, 0), true) == std::vector<StreamID>{id(324, 0)});
  CHECK(s.last_live_id() == id(324, 0));
  // Redis's DUMP of this stream restores (the tombstone is above the stream's last ID).
  auto copy = round_trip(s);
  REQUIRE(copy != nullptr);
  CHECK(ids(*copy, kMinStreamID, kMaxStreamID, false) == ids(s, kMinStreamID, kMaxStreamID, false));
  CHECK(s.remove(id(324, 0)));
  CHECK(ids(s, kMinStreamID, kMaxStreamID, false) == std::vector<StreamID>{id(262, 4)});
  CHECK(s.length() == 1);
}

TEST_CASE("consumer groups: pending entries move between owners and are acknowledged") {
  StreamObject s;
  for (uint64_t i = 1; i <= 4; ++i) add(s, id(i, 0), {"f", "v"});
  StreamGroup* g = s.create_group("g", kMinStreamID, 0);
  REQUIRE(g != nullptr);
  CHECK(s.create_group("g", kMinStreamID, 0) == nullptr);
  bool created = false;
  StreamConsumer* alice = g->get_or_create_consumer("alice", 100, &created);
  CHECK(created);
  CHECK(g->get_or_create_consumer("alice", 200, &created) == alice);
  CHECK_FALSE(created);
  StreamConsumer* bob = g->get_or_create_consumer("bob", 100, nullptr);
  g->set_pending(id(1, 0), alice, 10, 1);
  g->set_pending(id(2, 0), alice, 10, 1);
  g->set_pending(id(2, 0), bob, 20, 2);
  CHECK(alice->pending.size() == 1);
  CHECK(bob->pending.size() == 1);
  CHECK(g->nack(id(2, 0))->consumer == bob);
  CHECK(g->nack(id(2, 0))->delivery_count == 2);
  CHECK(g->acknowledge(id(1, 0)));
  CHECK_FALSE(g->acknowledge(id(1, 0)));
  CHECK(alice->pending.empty());
  CHECK(g->delete_consumer("bob") == 1);
  CHECK(g->delete_consumer("bob") == -1);
  CHECK(g->pel().empty());

  auto copy = s.clone();
  const auto& cs = static_cast<const StreamObject&>(*copy);
  CHECK(cs.group("g")->consumer("alice") != alice);
  CHECK(cs.group("g")->consumer("alice") != nullptr);
  CHECK(s.destroy_group("g"));
  CHECK_FALSE(s.destroy_group("g"));
  CHECK(cs.group("g") != nullptr);
}

TEST_CASE("read counters and lag as Redis 7.0 estimates them") {
  StreamObject s;
  CHECK(s.estimate_entries_read(id(5, 0)) == 0);  // nothing ever added
  for (uint64_t i = 1; i <= 5; ++i) add(s, id(i, 0), {"f", "v"});
  CHECK(s.estimate_entries_read(id(5, 0)) == 5);
  CHECK(s.estimate_entries_read(id(9, 0)) == kInvalidEntriesRead);
  CHECK(s.estimate_entries_read(id(1, 0)) == 1);
  CHECK(s.estimate_entries_read(kMinStreamID) == 0);
  StreamGroup* g = s.create_group("g", id(2, 0), 2);
  CHECK(s.group_lag(*g) == 3);
  CHECK(s.remove(id(4, 0)));
  CHECK(s.range_has_tombstones(id(2, 0), kMaxStreamID));
  CHECK_FALSE(s.range_has_tombstones(id(5, 0), kMaxStreamID));
  CHECK_FALSE(s.group_lag(*g).has_value());  // a tombstone ahead, an ID not at an edge
  g->last_id = id(5, 0);
  g->entries_read = kInvalidEntriesRead;
  CHECK(s.group_lag(*g) == 0);  // at the last ID, the counter is entries-added
}

TEST_CASE("the RDB encoding round-trips every node byte for byte") {
  StreamObject s;
  for (uint64_t i = 1; i <= 230; ++i) {
    add(s, id(1000 + i, i % 4), {"f", std::to_string(i), "g", i % 7 == 0 ? "-5000" : "x"});
  }
  add(s, id(5000, 0), {"other", std::string(700, 'z')});
  for (uint64_t i = 1; i <= 230; i += 9) s.remove(id(1000 + i, i % 4));
  StreamGroup* g = s.create_group("g", id(1100, 0), 50);
  StreamConsumer* c = g->get_or_create_consumer("c", 1234, nullptr);
  g->set_pending(id(1002, 2), c, 777, 3);
  g->get_or_create_consumer("idle", 99, nullptr);
  s.create_group("h", kMinStreamID, kInvalidEntriesRead);

  auto back = round_trip(s);
  REQUIRE(back != nullptr);
  CHECK(back->length() == s.length());
  CHECK(back->last_id() == s.last_id());
  CHECK(back->first_id() == s.first_id());
  CHECK(back->max_deleted_id() == s.max_deleted_id());
  CHECK(back->entries_added() == s.entries_added());
  REQUIRE(back->nodes().size() == s.nodes().size());
  for (auto a = s.nodes().begin(), b = back->nodes().begin(); a != s.nodes().end(); ++a, ++b) {
    CHECK(a->first == b->first);
    // The running size is the size of the listpack written (decoding takes the written size).
    CHECK(a->second.bytes == b->second.bytes);
    CHECK(a->second.live == b->second.live);
    CHECK(a->second.deleted == b->second.deleted);
  }
  CHECK(ids(*back, kMinStreamID, kMaxStreamID, false) == ids(s, kMinStreamID, kMaxStreamID, false));
  const StreamGroup* bg = back->group("g");
  REQUIRE(bg != nullptr);
  CHECK(bg->entries_read == 50);
  CHECK(bg->pel().at(id(1002, 2)).delivery_time == 777);
  CHECK(bg->pel().at(id(1002, 2)).delivery_count == 3);
  CHECK(bg->consumer("idle")->seen_time == 99);
  CHECK(back->group("h")->entries_read == kInvalidEntriesRead);

  // Cut short anywhere, the payload is refused.
  std::string out;
  encode_stream(s, out);
  for (size_t n = 1; n + 1 < out.size(); n += 97) {
    rdb::Reader r(std::string_view(out).substr(1, n));
    CHECK(decode_stream(rdb::kTypeStreamListpacks2, r) == nullptr);
  }
}
