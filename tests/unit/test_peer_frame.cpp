// Unit tests for the relay link's frames: what append_peer_frame writes parse_peer_frame reads
// back (through the real RESP parser), every frame kind is recognised with its arguments, and a
// malformed frame is an error, never a crash or a command run with the prefix's words.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cluster/peer_frame.h"
#include "protocol/errors.h"
#include "protocol/request_writer.h"
#include "protocol/resp_parser.h"

using ringkv::cluster::append_peer_frame;
using ringkv::cluster::parse_peer_frame;
using ringkv::cluster::peer_prefix_args;
using ringkv::cluster::PeerFrame;
using ringkv::cluster::PeerFrameKind;
using ringkv::cluster::PeerPrefix;
using ringkv::cluster::prefixed_frame;

namespace {

constexpr int kDatabases = 16;

// The arguments of one encoded request, as a node reads them off its link.
std::vector<std::string> decode(const std::string& bytes) {
  ringkv::protocol::RespParser parser;
  std::vector<std::string_view> argv;
  const auto r = parser.parse(std::span<const char>(bytes.data(), bytes.size()), argv);
  REQUIRE(r.status == ringkv::protocol::ParseStatus::kComplete);
  REQUIRE(r.consumed == bytes.size());
  return {argv.begin(), argv.end()};
}

std::vector<std::string> strings(std::span<const std::string_view> args) {
  return {args.begin(), args.end()};
}

// parse_peer_frame over owned arguments (the views point into `words`).
struct Parsed {
  std::vector<std::string> words;
  std::vector<std::string_view> views;
  ringkv::engine::Result<PeerFrame> frame;

  explicit Parsed(std::vector<std::string> w)
      : words(std::move(w)), views(words.begin(), words.end()), frame(parse(views)) {}
  static ringkv::engine::Result<PeerFrame> parse(const std::vector<std::string_view>& v) {
    return parse_peer_frame(v, kDatabases);
  }
};

}  // namespace

TEST_CASE("a written frame reads back with its prefixes and command") {
  const std::vector<std::string_view> command{"SET", "k", "v"};
  struct Case {
    PeerPrefix prefix;
    std::vector<std::string> wire;
  };
  const Case cases[] = {
      {{}, {"SET", "k", "v"}},
      {{.db = 3}, {"RINGKV.DB", "3", "SET", "k", "v"}},
      {{.resp3 = true}, {"RINGKV.RESP3", "SET", "k", "v"}},
      {{.user = "alice"}, {"RINGKV.AS", "alice", "SET", "k", "v"}},
      {{.db = 15, .resp3 = true, .user = "bob"},
       {"RINGKV.DB", "15", "RINGKV.RESP3", "RINGKV.AS", "bob", "SET", "k", "v"}},
  };
  for (const Case& c : cases) {
    std::string out;
    append_peer_frame(out, c.prefix, command);
    const std::vector<std::string> wire = decode(out);
    CHECK(wire == c.wire);
    CHECK(wire.size() == c.prefix.size() + command.size());
    // The same frame built from an encoded command, and as a list of arguments.
    std::string plain;
    ringkv::protocol::append_request(plain, command);
    CHECK(prefixed_frame(c.prefix, plain) == out);
    std::string digits;
    std::vector<std::string_view> args = peer_prefix_args(c.prefix, digits);
    args.insert(args.end(), command.begin(), command.end());
    CHECK(strings(args) == c.wire);

    Parsed p(wire);
    REQUIRE(p.frame.ok());
    const PeerFrame& f = *p.frame;
    CHECK(f.kind == PeerFrameKind::kCommand);
    CHECK(f.db.value_or(0) == c.prefix.db);
    CHECK(f.db.has_value() == (c.prefix.db != 0));
    CHECK(f.resp3 == c.prefix.resp3);
    CHECK(f.user == c.prefix.user);
    CHECK(strings(f.args) == std::vector<std::string>{"SET", "k", "v"});
  }
}

TEST_CASE("every member frame is recognised, with the arguments after its name") {
  struct Case {
    std::vector<std::string> wire;
    PeerFrameKind kind;
    std::vector<std::string> args;
  };
  const Case cases[] = {
      {{"RINGKV.RING", "STATE"}, PeerFrameKind::kRingControl, {"STATE"}},
      {{"ringkv.repl", "HELLO", "a"}, PeerFrameKind::kReplication, {"HELLO", "a"}},
      {{"RINGKV.WAIT", "TICKET", "k"}, PeerFrameKind::kReplicaWait, {"TICKET", "k"}},
      {{"RINGKV.TXN", "RELEASE", "1"}, PeerFrameKind::kTransaction, {"RELEASE", "1"}},
      {{"RINGKV.SHARDSUB", "n:1"}, PeerFrameKind::kShardSubscribers, {"n:1"}},
      {{"RINGKV.SHARDSUB", "n:1", "ch", "2"}, PeerFrameKind::kShardSubscribers, {"n:1", "ch", "2"}},
      {{"RINGKV.SHARDMSG", "ch", "m"}, PeerFrameKind::kShardMessage, {"ch", "m"}},
      {{"RINGKV.KEYSPACEMSG", "c", "m"}, PeerFrameKind::kKeyspaceMessage, {"c", "m"}},
      {{"RINGKV.TRACK", "n:1", "k1", "k2"}, PeerFrameKind::kTrack, {"n:1", "k1", "k2"}},
      {{"RINGKV.INVALIDATE", "k"}, PeerFrameKind::kInvalidate, {"k"}},
      {{"RINGKV.IMPORT", "STOP", ""}, PeerFrameKind::kImport, {"STOP", ""}},
      {{"RINGKV.VIEW", "00ff00ff00ff00ff"}, PeerFrameKind::kView, {"00ff00ff00ff00ff"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.wire[0]);
    Parsed p(c.wire);
    REQUIRE(p.frame.ok());
    CHECK(p.frame->kind == c.kind);
    CHECK_FALSE(p.frame->db.has_value());
    CHECK(strings(p.frame->args) == c.args);
    // Behind a database.
    std::vector<std::string> in_db{"RINGKV.DB", "2"};
    in_db.insert(in_db.end(), c.wire.begin(), c.wire.end());
    Parsed q(in_db);
    REQUIRE(q.frame.ok());
    CHECK(q.frame->kind == c.kind);
    CHECK(q.frame->db == 2);
    CHECK(strings(q.frame->args) == c.args);
  }
}

TEST_CASE("a plain command, or a name that only looks like a member frame's, is a command") {
  for (const std::vector<std::string>& wire : {std::vector<std::string>{"SET", "k", "v"},
                                               {"ringkv.", "x"},
                                               {"RINGKV", "x"},
                                               {"ringkv.unknown", "x"},
                                               {"r", "x"}}) {
    CAPTURE(wire[0]);
    Parsed p(wire);
    REQUIRE(p.frame.ok());
    CHECK(p.frame->kind == PeerFrameKind::kCommand);
    CHECK_FALSE(p.frame->db.has_value());
    CHECK(strings(p.frame->args) == wire);
  }
}

TEST_CASE("a ring change's copy carries its version and its command") {
  Parsed p({"RINGKV.DB", "1", "RINGKV.MIGRATE", "7", "RESTORE", "k", "0", "payload"});
  REQUIRE(p.frame.ok());
  CHECK(p.frame->kind == PeerFrameKind::kMigrate);
  CHECK(p.frame->db == 1);
  CHECK(p.frame->version == 7);
  CHECK(strings(p.frame->args) == std::vector<std::string>{"RESTORE", "k", "0", "payload"});
}

TEST_CASE("what follows RESP3 or AS is a command, whatever its name") {
  Parsed p({"RINGKV.RESP3", "RINGKV.SHARDMSG", "ch", "m"});
  REQUIRE(p.frame.ok());
  CHECK(p.frame->kind == PeerFrameKind::kCommand);
  CHECK(p.frame->resp3);
  CHECK(strings(p.frame->args) == std::vector<std::string>{"RINGKV.SHARDMSG", "ch", "m"});
}

TEST_CASE("malformed frames are errors") {
  const std::vector<std::vector<std::string>> malformed{
      {"RINGKV.DB", "1"},                      // a prefix without its command
      {"RINGKV.DB", "x", "GET", "k"},          // not a database
      {"RINGKV.DB", "16", "GET", "k"},         // outside the databases
      {"RINGKV.DB", "-1", "GET", "k"},         // outside the databases
      {"RINGKV.RESP3"},                        // nothing to run
      {"RINGKV.DB", "1", "RINGKV.RESP3"},      // nothing to run
      {"RINGKV.AS", "alice"},                  // nothing to run
      {"RINGKV.RESP3", "RINGKV.AS", "alice"},  // nothing to run
      {"RINGKV.MIGRATE", "7"},                 // no command
      {"RINGKV.MIGRATE", "0", "DEL", "k"},     // no version
      {"RINGKV.MIGRATE", "v", "DEL", "k"},     // no version
      {"RINGKV.SHARDSUB"},
      {"RINGKV.SHARDMSG", "ch"},
      {"RINGKV.SHARDMSG", "ch", "m", "extra"},
      {"RINGKV.VIEW"},
      {"RINGKV.VIEW", "00ff00ff00ff00ff", "extra"},
      {"RINGKV.TRACK", "n:1"},
      {"RINGKV.INVALIDATE"},
      {"RINGKV.INVALIDATE", "a", "b"},
      {},
  };
  for (const auto& wire : malformed) {
    CAPTURE(wire.size());
    Parsed p(wire);
    CHECK_FALSE(p.frame.ok());
    if (!p.frame.ok()) CHECK(p.frame.error().starts_with("ERR "));
  }
  Parsed bad_db({"RINGKV.DB", "99", "GET", "k"});
  REQUIRE_FALSE(bad_db.frame.ok());
  CHECK(bad_db.frame.error() == ringkv::protocol::err::kDbIndexOutOfRange);
}
