// Pub/Sub without sockets: the subscription registry (server/pubsub.h), the command handlers
// over it (reply bytes in RESP2 and RESP3, recorded from redis-server 7.0.15), and the
// cluster's best-effort merges of PUBLISH and PUBSUB replies (cluster/merge.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/merge.h"
#include "engine/command.h"
#include "engine/commands/pubsub.h"
#include "engine/keyspace/store.h"
#include "server/pubsub.h"
#include "server/shard_interests.h"

using namespace ringkv;
using protocol::ReplyWriter;
using protocol::RespVersion;

namespace {

// Records every delivery as (client, pattern or "-", channel, message).
class RecordingSink : public server::PubSubSink {
 public:
  void deliver(uint64_t client, const std::string* pattern, std::string_view channel,
               std::string_view message) override {
    got.emplace_back(client, pattern ? *pattern : "-", std::string(channel), std::string(message));
  }
  void deliver_shard(uint64_t client, std::string_view channel, std::string_view message) override {
    got.emplace_back(client, "(shard)", std::string(channel), std::string(message));
  }
  std::vector<std::tuple<uint64_t, std::string, std::string, std::string>> got;
};

class FakeClient : public engine::ClientSession {
 public:
  explicit FakeClient(uint64_t id) : id_(id) {}
  uint64_t id() const override { return id_; }
  std::string_view name() const override { return ""; }
  void set_name(std::string_view) override {}
  RespVersion resp() const override { return resp_; }
  void set_resp(RespVersion v) override { resp_ = v; }
  int db() const override { return 0; }
  void close_after_reply() override {}
  void reset_state() override {}
  std::string info_line() const override { return ""; }

  uint64_t id_;
  RespVersion resp_ = RespVersion::kResp2;
};

struct Harness {
  RecordingSink sink;
  server::PubSubRegistry registry{sink};
  engine::Store store;

  // Runs argv for `client` and returns the reply bytes.
  std::string run(FakeClient& client, std::vector<std::string_view> argv) {
    std::string out;
    ReplyWriter writer(out, client.resp());
    engine::CommandContext ctx{argv, writer, store, &client, nullptr, nullptr};
    ctx.pubsub = &registry;
    engine::dispatch(ctx);
    return out;
  }
};

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("registry: subscribe, unsubscribe and counts") {
  RecordingSink sink;
  server::PubSubRegistry r(sink);
  CHECK(r.subscribe(1, "a", false));
  CHECK_FALSE(r.subscribe(1, "a", false));
  CHECK(r.subscribe(1, "b", false));
  CHECK(r.subscribe(1, "a*", true));
  CHECK_FALSE(r.subscribe(1, "a*", true));
  CHECK(r.subscribe(2, "a", false));
  CHECK(r.subscription_count(1) == 3);
  CHECK(r.channel_count(1) == 2);
  CHECK(r.pattern_subscription_count(1) == 1);
  CHECK(r.subscribers("a") == 2);
  CHECK(r.subscribers("b") == 1);
  CHECK(r.subscribers("a*") == 0);
  CHECK(r.pattern_count() == 1);
  CHECK(r.channel_total() == 2);
  CHECK(sorted(r.subscriptions(1, false)) == std::vector<std::string>{"a", "b"});
  CHECK(r.subscriptions(1, true) == std::vector<std::string>{"a*"});

  CHECK(r.unsubscribe(1, "a", false));
  CHECK_FALSE(r.unsubscribe(1, "a", false));
  CHECK_FALSE(r.unsubscribe(3, "a", false));
  CHECK(r.subscribers("a") == 1);
  CHECK_FALSE(r.unsubscribe(1, "b*", true));
  CHECK(r.unsubscribe(1, "a*", true));
  CHECK(r.pattern_count() == 0);
  CHECK(r.subscription_count(1) == 1);
}

TEST_CASE("registry: shard channels are apart from channels and patterns") {
  RecordingSink sink;
  server::PubSubRegistry r(sink);
  std::vector<std::pair<std::string, int64_t>> changes;
  r.set_shard_listener([&](std::string_view c, int64_t n) { changes.emplace_back(c, n); });
  CHECK(r.shard_subscribe(1, "s"));
  CHECK_FALSE(r.shard_subscribe(1, "s"));
  CHECK(r.shard_subscribe(2, "s"));
  CHECK(r.subscribe(1, "s", false));
  CHECK(r.shard_subscription_count(1) == 1);
  CHECK(r.subscription_count(1) == 1);
  CHECK(r.total_subscriptions(1) == 2);
  CHECK(r.shard_subscribers("s") == 2);
  CHECK(r.subscribers("s") == 1);
  CHECK(r.active_shard_channels(std::nullopt) == std::vector<std::string>{"s"});
  CHECK(r.active_shard_channels("x*").empty());
  // PUBLISH does not reach shard subscribers, SPUBLISH only them.
  CHECK(r.publish("s", "p") == 1);
  CHECK(r.shard_publish("s", "q") == 2);
  REQUIRE(sink.got.size() == 3);
  CHECK(sink.got[1] ==
        std::make_tuple(uint64_t{1}, std::string("(shard)"), std::string("s"), std::string("q")));
  CHECK(r.shard_unsubscribe(1, "s"));
  CHECK_FALSE(r.shard_unsubscribe(1, "s"));
  r.remove_client(2);
  CHECK(r.shard_channel_total() == 0);
  CHECK(r.total_subscriptions(1) == 1);
  // The listener hears every change of a channel's local subscriber count.
  CHECK(changes ==
        std::vector<std::pair<std::string, int64_t>>{{"s", 1}, {"s", 2}, {"s", 1}, {"s", 0}});
  // Messages from other nodes reach local subscribers only.
  r.set_remote_publish([](std::string_view, std::string_view) -> int64_t { return 5; });
  r.shard_subscribe(3, "t");
  CHECK(r.shard_publish("t", "m") == 6);
  CHECK(r.shard_deliver_local("t", "m") == 1);
}

TEST_CASE("shard interests: counts by node, refreshed or expired, forwarded on publish") {
  server::ShardInterests interests;
  const std::string_view a[] = {"ch", "2", "other", "1"};
  interests.record("10.0.0.1:1", a, 1000);
  const std::string_view b[] = {"ch", "3"};
  interests.record("10.0.0.2:1", b, 1500);
  std::vector<std::string> sent;
  auto send = [&](const std::string& node) { sent.push_back(node); };
  CHECK(interests.forward("ch", 2000, send) == 5);
  CHECK(sent == std::vector<std::string>{"10.0.0.1:1", "10.0.0.2:1"});
  const std::string_view gone[] = {"ch", "0"};
  interests.record("10.0.0.2:1", gone, 2000);
  sent.clear();
  CHECK(interests.forward("ch", 2000, send) == 2);
  CHECK(sent == std::vector<std::string>{"10.0.0.1:1"});
  // Not refreshed within the lifetime: the node is taken for gone.
  interests.expire(1000 + server::ShardInterests::kLifetimeMs + 1);
  sent.clear();
  CHECK(interests.forward("ch", 9000, send) == 0);
  CHECK(interests.forward("other", 9000, send) == 0);
  CHECK(sent.empty());
  CHECK(interests.size() == 0);
  // Malformed counts are ignored.
  const std::string_view bad[] = {"ch", "x", "odd"};
  interests.record("10.0.0.3:1", bad, 9000);
  CHECK(interests.forward("ch", 9000, send) == 0);
}

TEST_CASE("registry: patterns keep their subscription order; empty names are names") {
  RecordingSink sink;
  server::PubSubRegistry r(sink);
  for (std::string_view p : {"z*", "a*", "m?", ""}) r.subscribe(7, p, true);
  CHECK(r.subscriptions(7, true) == std::vector<std::string>{"z*", "a*", "m?", ""});
  r.unsubscribe(7, "a*", true);
  CHECK(r.subscriptions(7, true) == std::vector<std::string>{"z*", "m?", ""});
  CHECK(r.publish("", "x") == 1);
  CHECK(sink.got.back() ==
        std::make_tuple(uint64_t{7}, std::string(""), std::string(""), std::string("x")));
}

TEST_CASE("registry: publish reaches channel subscribers, then pattern subscribers") {
  RecordingSink sink;
  server::PubSubRegistry r(sink);
  r.subscribe(1, "news", false);
  r.subscribe(2, "n*", true);
  r.subscribe(3, "news", false);
  r.subscribe(1, "*", true);
  r.subscribe(4, "sport", false);
  r.subscribe(5, "[nm]ews", true);
  CHECK(r.publish("news", "hi") == 5);
  REQUIRE(sink.got.size() == 5);
  // Channel subscribers first, in subscription order.
  CHECK(sink.got[0] ==
        std::make_tuple(uint64_t{1}, std::string("-"), std::string("news"), std::string("hi")));
  CHECK(std::get<0>(sink.got[1]) == 3);
  std::vector<std::pair<uint64_t, std::string>> patterns;
  for (size_t i = 2; i < sink.got.size(); ++i) {
    patterns.emplace_back(std::get<0>(sink.got[i]), std::get<1>(sink.got[i]));
  }
  std::sort(patterns.begin(), patterns.end());
  CHECK(patterns ==
        std::vector<std::pair<uint64_t, std::string>>{{1, "*"}, {2, "n*"}, {5, "[nm]ews"}});
  sink.got.clear();
  CHECK(r.publish("sport", "goal") == 2);  // 4 on the channel, 1 through "*"
  CHECK(r.publish("Sport", "x") == 1);     // patterns are case-sensitive: only "*"
  CHECK(r.publish("", "") == 1);
}

TEST_CASE("registry: removing a client drops everything it had") {
  RecordingSink sink;
  server::PubSubRegistry r(sink);
  r.subscribe(1, "a", false);
  r.subscribe(1, "b", false);
  r.subscribe(1, "p*", true);
  r.subscribe(2, "a", false);
  r.remove_client(1);
  r.remove_client(9);
  CHECK(r.subscription_count(1) == 0);
  CHECK(r.subscribers("a") == 1);
  CHECK(r.subscribers("b") == 0);
  CHECK(r.pattern_count() == 0);
  CHECK(r.active_channels(std::nullopt) == std::vector<std::string>{"a"});
  CHECK(r.publish("a", "m") == 1);
  CHECK(r.publish("pq", "m") == 0);
}

TEST_CASE("registry: active channels, with and without a pattern") {
  RecordingSink sink;
  server::PubSubRegistry r(sink);
  for (std::string_view c : {"news.1", "news.2", "sport", "n"}) r.subscribe(1, c, false);
  CHECK(sorted(r.active_channels(std::nullopt)) ==
        std::vector<std::string>{"n", "news.1", "news.2", "sport"});
  CHECK(sorted(r.active_channels("news.*")) == std::vector<std::string>{"news.1", "news.2"});
  CHECK(r.active_channels("x*").empty());
  r.unsubscribe(1, "sport", false);
  CHECK(sorted(r.active_channels("*")) == std::vector<std::string>{"n", "news.1", "news.2"});
}

TEST_CASE("handlers: subscribe confirmations in RESP2 and RESP3") {
  Harness h;
  FakeClient c(1);
  CHECK(h.run(c, {"UNSUBSCRIBE"}) == "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
  CHECK(h.run(c, {"PUNSUBSCRIBE"}) == "*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n");
  CHECK(h.run(c, {"UNSUBSCRIBE", "x"}) == "*3\r\n$11\r\nunsubscribe\r\n$1\r\nx\r\n:0\r\n");
  CHECK(h.run(c, {"SUBSCRIBE", "a", "b", "a"}) ==
        "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n"
        "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n");
  CHECK(
      h.run(c, {"PSUBSCRIBE", "h*", "x?"}) ==
      "*3\r\n$10\r\npsubscribe\r\n$2\r\nh*\r\n:3\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\nx?\r\n:4\r\n");
  // Unsubscribing from channels with patterns left: the count says so, even with nothing to drop.
  CHECK(h.run(c, {"PUNSUBSCRIBE"}) ==
        "*3\r\n$12\r\npunsubscribe\r\n$2\r\nh*\r\n:3\r\n*3\r\n$12\r\npunsubscribe\r\n$2\r\nx?\r\n"
        ":2\r\n");
  std::string all = h.run(c, {"UNSUBSCRIBE"});
  CHECK(all.find(":1\r\n") < all.find(":0\r\n"));
  CHECK(all.size() == 2 * std::string("*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n").size());
  CHECK(h.registry.subscription_count(1) == 0);

  h.registry.subscribe(1, "p", true);
  CHECK(h.run(c, {"UNSUBSCRIBE"}) == "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:1\r\n");

  FakeClient r3(2);
  r3.resp_ = RespVersion::kResp3;
  CHECK(h.run(r3, {"SUBSCRIBE", "a"}) == ">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
  CHECK(h.run(r3, {"PUNSUBSCRIBE", "zz"}) == ">3\r\n$12\r\npunsubscribe\r\n$2\r\nzz\r\n:1\r\n");
  CHECK(h.run(r3, {"UNSUBSCRIBE"}) == ">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n");
  CHECK(h.run(r3, {"PUNSUBSCRIBE"}) == ">3\r\n$12\r\npunsubscribe\r\n_\r\n:0\r\n");
}

TEST_CASE("handlers: PUBLISH and PUBSUB") {
  Harness h;
  FakeClient c(1), d(2), p(3);
  h.run(c, {"SUBSCRIBE", "a", "b"});
  h.run(d, {"PSUBSCRIBE", "a*", "*"});
  CHECK(h.run(p, {"PUBLISH", "a", "m"}) == ":3\r\n");
  CHECK(h.sink.got.size() == 3);
  CHECK(h.run(p, {"PUBLISH", "zz", "m"}) == ":1\r\n");
  CHECK(h.run(p, {"PUBLISH", "x"}) == "-ERR wrong number of arguments for 'publish' command\r\n");
  CHECK(h.run(p, {"PUBSUB", "NUMSUB", "a", "b", "zz"}) ==
        "*6\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:1\r\n$2\r\nzz\r\n:0\r\n");
  CHECK(h.run(p, {"PUBSUB", "NUMSUB"}) == "*0\r\n");
  CHECK(h.run(p, {"PUBSUB", "NUMPAT"}) == ":2\r\n");
  CHECK(h.run(p, {"PUBSUB", "CHANNELS", "a*"}) == "*1\r\n$1\r\na\r\n");
  CHECK(h.run(p, {"PUBSUB", "CHANNELS", "q"}) == "*0\r\n");
  std::string all = h.run(p, {"PUBSUB", "CHANNELS"});
  CHECK((all == "*2\r\n$1\r\na\r\n$1\r\nb\r\n" || all == "*2\r\n$1\r\nb\r\n$1\r\na\r\n"));
  CHECK(
      h.run(p, {"PUBSUB", "chAnnels", "a", "b"}) ==
      "-ERR unknown subcommand or wrong number of arguments for 'chAnnels'. Try PUBSUB HELP.\r\n");
  CHECK(h.run(p, {"PUBSUB", "NUMPAT", "x"}) ==
        "-ERR wrong number of arguments for 'pubsub|numpat' command\r\n");
  CHECK(h.run(p, {"PUBSUB", "FOO"}) == "-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n");
  std::string help = h.run(p, {"PUBSUB", "HELP"});
  CHECK(help.rfind("*14\r\n+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n",
                   0) == 0);
  CHECK(help.ends_with("+HELP\r\n+    Prints this help.\r\n"));
}

TEST_CASE("handlers: PING as a subscribed RESP2 client gets it") {
  Harness h;
  FakeClient c(1);
  std::string out;
  ReplyWriter writer(out);
  std::vector<std::string_view> argv{"PING"};
  engine::CommandContext ctx{argv, writer, h.store, &c, nullptr, nullptr};
  engine::cmd_ping_subscribed(ctx);
  CHECK(out == "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
  out.clear();
  argv = {"PING", "hi"};
  ctx.argv = argv;
  engine::cmd_ping_subscribed(ctx);
  CHECK(out == "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
  out.clear();
  argv = {"PING", "a", "b"};
  ctx.argv = argv;
  engine::cmd_ping_subscribed(ctx);
  CHECK(out == "-ERR wrong number of arguments for 'ping' command\r\n");
}

TEST_CASE("routing: PUBLISH and PUBSUB's counting subcommands are cluster-wide") {
  for (std::string_view n : {"publish"}) {
    CHECK((engine::find_command(n)->flags & engine::kClusterWide) != 0);
  }
  std::string error;
  for (std::string_view sub : {"channels", "numsub", "numpat"}) {
    std::vector<std::string_view> argv{"pubsub", sub};
    const engine::CommandSpec* spec = engine::resolve_command(argv, error);
    REQUIRE(spec != nullptr);
    CHECK((spec->flags & engine::kClusterWide) != 0);
  }
  for (std::string_view n : {"subscribe", "unsubscribe", "psubscribe", "punsubscribe"}) {
    CHECK((engine::find_command(n)->flags & engine::kClusterWide) == 0);
  }
  std::vector<std::string_view> help{"pubsub", "help"};
  CHECK((engine::resolve_command(help, error)->flags & engine::kClusterWide) == 0);
}

TEST_CASE("merge: PUBLISH and PUBSUB NUMPAT add up reachable nodes' counts") {
  using cluster::ReplyMerge;
  CHECK(ReplyMerge::kind_for("publish") == ReplyMerge::Kind::kSumReachable);
  CHECK(ReplyMerge::kind_for("pubsub|numpat") == ReplyMerge::Kind::kSumReachable);
  std::string got;
  ReplyMerge m(ReplyMerge::Kind::kSumReachable, false, RespVersion::kResp2, 3,
               [&](std::string_view r) { got = r; });
  m.part_done(0, true, ":2\r\n");
  m.part_done(1, false, "ERR peer 127.0.0.1:7002 unavailable: down");
  CHECK(got.empty());
  m.part_done(2, true, ":3\r\n");
  CHECK(got == ":5\r\n");

  ReplyMerge none(ReplyMerge::Kind::kSumReachable, false, RespVersion::kResp3, 2,
                  [&](std::string_view r) { got = r; });
  none.part_done(0, false, "ERR peer a unavailable: timeout");
  none.part_done(1, false, "ERR peer b unavailable: down");
  CHECK(got == ":0\r\n");
}

TEST_CASE("merge: PUBSUB CHANNELS unites names, NUMSUB adds per channel") {
  using cluster::ReplyMerge;
  CHECK(ReplyMerge::kind_for("pubsub|channels") == ReplyMerge::Kind::kUnion);
  CHECK(ReplyMerge::kind_for("pubsub|numsub") == ReplyMerge::Kind::kPairSums);
  std::string got;
  ReplyMerge channels(ReplyMerge::Kind::kUnion, false, RespVersion::kResp2, 3,
                      [&](std::string_view r) { got = r; });
  channels.part_done(0, true, "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  channels.part_done(1, true, "*0\r\n");
  channels.part_done(2, true, "*2\r\n$1\r\nc\r\n$1\r\na\r\n");
  CHECK(got == "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");

  ReplyMerge numsub(ReplyMerge::Kind::kPairSums, false, RespVersion::kResp3, 3,
                    [&](std::string_view r) { got = r; });
  numsub.part_done(2, true, "*4\r\n$1\r\na\r\n:1\r\n$1\r\nz\r\n:0\r\n");
  numsub.part_done(0, false, "ERR peer x unavailable: connection refused");
  numsub.part_done(1, true, "*4\r\n$1\r\na\r\n:2\r\n$1\r\nz\r\n:5\r\n");
  CHECK(got == "*4\r\n$1\r\na\r\n:3\r\n$1\r\nz\r\n:5\r\n");

  ReplyMerge empty(ReplyMerge::Kind::kPairSums, false, RespVersion::kResp2, 2,
                   [&](std::string_view r) { got = r; });
  empty.part_done(0, true, "*0\r\n");
  empty.part_done(1, true, "*0\r\n");
  CHECK(got == "*0\r\n");
}

TEST_CASE("merge: other kinds still fail on an unreachable node") {
  using cluster::ReplyMerge;
  std::string got;
  ReplyMerge m(ReplyMerge::Kind::kSum, false, RespVersion::kResp2, 2,
               [&](std::string_view r) { got = r; });
  m.part_done(0, true, ":1\r\n");
  m.part_done(1, false, "ERR peer b unavailable: down");
  CHECK(got == "-ERR peer b unavailable: down\r\n");
}
