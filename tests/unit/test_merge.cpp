// Unit tests for merging the replies of a command's parts and for the cluster SCAN cursor.
#include <doctest/doctest.h>

#include <string>

#include "cluster/merge.h"

using ringkv::cluster::cluster_scan_reply;
using ringkv::cluster::ReplyMerge;
using ringkv::cluster::scan_step;
using ringkv::cluster::scan_tag;
using ringkv::protocol::RespVersion;

namespace {

struct Result {
  std::string reply;
  int calls = 0;
};

ReplyMerge make(Result& r, ReplyMerge::Kind kind, size_t parts, bool write = false,
                RespVersion resp = RespVersion::kResp2) {
  return ReplyMerge(kind, write, resp, parts, [&r](std::string_view reply) {
    r.reply.assign(reply);
    r.calls++;
  });
}

}  // namespace

TEST_CASE("kind_for picks each command's merge") {
  CHECK(ReplyMerge::kind_for("mget") == ReplyMerge::Kind::kValues);
  CHECK(ReplyMerge::kind_for("mset") == ReplyMerge::Kind::kAllOk);
  CHECK(ReplyMerge::kind_for("flushall") == ReplyMerge::Kind::kAllOk);
  CHECK(ReplyMerge::kind_for("keys") == ReplyMerge::Kind::kConcat);
  CHECK(ReplyMerge::kind_for("randomkey") == ReplyMerge::Kind::kRandom);
  for (const char* c : {"del", "unlink", "exists", "touch", "dbsize"}) {
    CHECK(ReplyMerge::kind_for(c) == ReplyMerge::Kind::kSum);
  }
}

TEST_CASE("MGET parts go back in key order, in either protocol") {
  for (RespVersion v : {RespVersion::kResp2, RespVersion::kResp3}) {
    Result r;
    ReplyMerge m = make(r, ReplyMerge::Kind::kValues, 2, false, v);
    m.set_positions(0, {0, 2});
    m.set_positions(1, {1});
    const bool resp3 = v == RespVersion::kResp3;
    m.part_done(1, true, resp3 ? "*1\r\n_\r\n" : "*1\r\n$-1\r\n");
    CHECK(r.calls == 0);
    m.part_done(0, true, "*2\r\n$1\r\na\r\n$1\r\nc\r\n");
    CHECK(r.calls == 1);
    CHECK(r.reply ==
          (resp3 ? "*3\r\n$1\r\na\r\n_\r\n$1\r\nc\r\n" : "*3\r\n$1\r\na\r\n$-1\r\n$1\r\nc\r\n"));
  }
}

TEST_CASE("counts add up; MSET is OK when every part is") {
  Result r;
  ReplyMerge sum = make(r, ReplyMerge::Kind::kSum, 3);
  sum.part_done(0, true, ":2\r\n");
  sum.part_done(2, true, ":0\r\n");
  sum.part_done(1, true, ":5\r\n");
  CHECK(r.reply == ":7\r\n");
  Result ok;
  ReplyMerge mset = make(ok, ReplyMerge::Kind::kAllOk, 2, true);
  mset.part_done(0, true, "+OK\r\n");
  mset.part_done(1, true, "+OK\r\n");
  CHECK(ok.reply == "+OK\r\n");
}

TEST_CASE("KEYS concatenates; RANDOMKEY picks a non-null part") {
  Result r;
  ReplyMerge keys = make(r, ReplyMerge::Kind::kConcat, 2);
  keys.part_done(0, true, "*1\r\n$1\r\nx\r\n");
  keys.part_done(1, true, "*2\r\n$1\r\ny\r\n$1\r\nz\r\n");
  CHECK(r.reply == "*3\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n");
  Result k;
  ReplyMerge rnd = make(k, ReplyMerge::Kind::kRandom, 3);
  rnd.part_done(0, true, "$-1\r\n");
  rnd.part_done(1, true, "$3\r\nkey\r\n");
  rnd.part_done(2, true, "$-1\r\n");
  CHECK(k.reply == "$3\r\nkey\r\n");
  Result none;
  ReplyMerge empty = make(none, ReplyMerge::Kind::kRandom, 2);
  empty.part_done(0, true, "$-1\r\n");
  empty.part_done(1, true, "$-1\r\n");
  CHECK(none.reply == "$-1\r\n");
}

TEST_CASE("a failed part fails the whole command; writes say the rest was applied") {
  Result r;
  ReplyMerge mget = make(r, ReplyMerge::Kind::kValues, 2);
  mget.set_positions(0, {0});
  mget.set_positions(1, {1});
  mget.part_done(0, true, "*1\r\n$1\r\na\r\n");
  mget.part_done(1, false, "ERR peer 127.0.0.1:7003 unavailable: down");
  CHECK(r.reply == "-ERR peer 127.0.0.1:7003 unavailable: down\r\n");
  Result w;
  ReplyMerge del = make(w, ReplyMerge::Kind::kSum, 2, true);
  del.part_done(0, false, "ERR peer 127.0.0.1:7003 unavailable: timeout");
  del.part_done(1, true, ":1\r\n");
  CHECK(w.reply ==
        "-ERR peer 127.0.0.1:7003 unavailable: timeout (the other nodes' parts were applied)\r\n");
  Result e;
  ReplyMerge typed = make(e, ReplyMerge::Kind::kSum, 2);
  typed.part_done(0, true, ":1\r\n");
  typed.part_done(1, true,
                  "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  CHECK(e.reply == "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
}

TEST_CASE("the cluster SCAN cursor walks node after node under one ring") {
  const uint16_t tag = scan_tag(0x1234567890abcdefULL);
  CHECK(scan_tag(0x1234567890abcdefULL ^ 0x10000) != tag);
  // A cursor: the position (node index + nodes × the node's own cursor) above the ring's tag.
  auto cursor = [tag](uint64_t position) { return position << 16 | tag; };
  auto page = [](uint64_t cursor) {
    const std::string text = std::to_string(cursor);
    return "*2\r\n$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
  };
  CHECK(scan_step(0, 3, tag).node == 0);
  CHECK(scan_step(0, 3, tag).node_cursor == 0);
  CHECK(scan_step(cursor(2), 3, tag).node == 2);
  CHECK(scan_step(cursor(3 * 17 + 1), 3, tag).node_cursor == 17);
  CHECK(scan_step(cursor(3 * 17 + 1), 3, tag).node == 1);
  // Made under another ring: the walk starts over.
  CHECK(scan_step(cursor(3 * 17 + 1), 3, tag ^ 1).node == 0);
  CHECK(scan_step(cursor(3 * 17 + 1), 3, tag ^ 1).node_cursor == 0);
  CHECK(scan_step(3 * 17 + 1, 3, tag).node_cursor == 0);
  // A node with more to scan: its cursor is folded in with the node index.
  CHECK(cluster_scan_reply("*2\r\n$2\r\n17\r\n*1\r\n$1\r\nk\r\n", 1, 3, tag, RespVersion::kResp2) ==
        page(cursor(52)) + "*1\r\n$1\r\nk\r\n");
  // A node's walk ended: the next node starts at its cursor 0; after the last node, 0.
  CHECK(cluster_scan_reply("*2\r\n$1\r\n0\r\n*0\r\n", 1, 3, tag, RespVersion::kResp2) ==
        page(cursor(2)) + "*0\r\n");
  CHECK(cluster_scan_reply("*2\r\n$1\r\n0\r\n*0\r\n", 2, 3, tag, RespVersion::kResp2) ==
        "*2\r\n$1\r\n0\r\n*0\r\n");
  CHECK(cluster_scan_reply("-ERR invalid cursor\r\n", 0, 3, tag, RespVersion::kResp2) ==
        "-ERR invalid cursor\r\n");
}
