// What the server observes of commands: the latency histogram (Redis's HDR values), the slow
// log's entries, the latency monitor's samples and reports, and Redis's digests (checked
// against values redis-server 7.0.15 printed for the same data).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/command.h"
#include "engine/keyspace/digest.h"
#include "engine/keyspace/store.h"
#include "engine/stats/latency_histogram.h"
#include "engine/stats/latency_monitor.h"
#include "engine/stats/slowlog.h"

using namespace ringkv::engine;

namespace {

std::string run(Store& store, std::vector<std::string_view> argv) {
  std::string out;
  ringkv::protocol::ReplyWriter reply(out);
  CommandContext ctx{argv, reply, store, nullptr, nullptr, nullptr};
  dispatch(ctx);
  return out;
}

}  // namespace

TEST_CASE("latency histogram reports Redis's values") {
  LatencyHistogram h;
  CHECK(h.value_at_percentile(50) == 0);
  h.record(7000);
  // INFO latencystats printed 7.007 for one 7 µs call: the bucket's highest equivalent value.
  CHECK(h.value_at_percentile(50) == 7007);
  CHECK(h.value_at_percentile(99.9) == 7007);
  LatencyHistogram g;
  for (int i = 1; i <= 100; ++i) g.record(i * 1000);
  CHECK(g.value_at_percentile(50) == 50175);
  CHECK(g.value_at_percentile(99) == 99327);
  CHECK(g.value_at_percentile(100) == 100351);
  // Below 256 ns every value has its own bucket; out of range values are clamped.
  LatencyHistogram small;
  small.record(0);
  small.record(200);
  CHECK(small.value_at_percentile(0) == 1);
  CHECK(small.value_at_percentile(100) == 200);
  LatencyHistogram big;
  big.record(int64_t{5} * 1000 * 1000 * 1000);
  CHECK(big.total() == 1);
  CHECK(big.value_at_percentile(50) >= LatencyHistogram::kHighest);
}

TEST_CASE("latency histogram buckets are cumulative at powers of two from 1024 ns") {
  LatencyHistogram h;
  CHECK(h.cumulative_usec().empty());
  for (int i = 0; i < 3; ++i) h.record(1000);
  h.record(5000);
  const auto buckets = h.cumulative_usec();
  REQUIRE(buckets.size() == 2);
  CHECK(buckets[0] == std::pair<int64_t, int64_t>{1, 3});
  CHECK(buckets[1] == std::pair<int64_t, int64_t>{8, 4});
  h.reset();
  CHECK(h.total() == 0);
}

TEST_CASE("slow log entries keep 32 arguments of 128 bytes, newest first") {
  SlowLog log;
  std::vector<std::string> args;
  for (int i = 0; i < 40; ++i) args.push_back("a" + std::to_string(i));
  args[1] = std::string(200, 'x');
  std::vector<std::string_view> argv(args.begin(), args.end());
  log.push(argv, 12, 1700000000, "127.0.0.1:5000", "me", 128);
  log.push(std::vector<std::string_view>{"GET", "k"}, 3, 1700000001, "127.0.0.1:5001", "", 128);
  REQUIRE(log.size() == 2);
  const SlowLogEntry& old = log.entries()[1];
  CHECK(old.id == 0);
  CHECK(log.entries()[0].id == 1);
  REQUIRE(old.args.size() == 32);
  CHECK(old.args[1] == std::string(128, 'x') + "... (72 more bytes)");
  CHECK(old.args[31] == "... (9 more arguments)");
  std::string out;
  ringkv::protocol::ReplyWriter reply(out);
  log.write(reply, 1);
  CHECK(out ==
        "*1\r\n*6\r\n:1\r\n:1700000001\r\n:3\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
        "$14\r\n127.0.0.1:5001\r\n$0\r\n\r\n");
  log.push(argv, 1, 1700000002, "", "", 1);
  CHECK(log.size() == 1);
  log.reset();
  CHECK(log.size() == 0);
  log.push(argv, 1, 1700000002, "", "", 5);
  CHECK(log.entries()[0].id == 3);
}

TEST_CASE("latency monitor keeps the worst sample of each second and the all-time maximum") {
  LatencyMonitor m;
  m.add_if_needed("command", 5, 0, 100);   // monitoring off
  m.add_if_needed("command", 5, 10, 100);  // under the threshold
  CHECK(m.events().empty());
  m.add_if_needed("command", 20, 10, 100);
  m.add_if_needed("command", 50, 10, 100);
  m.add_if_needed("command", 30, 10, 100);
  m.add("command", 15, 101);
  const LatencySeries* s = m.find("command");
  REQUIRE(s != nullptr);
  const auto samples = s->in_order();
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].time == 100);
  CHECK(samples[0].latency == 50);
  CHECK(s->latest().latency == 15);
  CHECK(s->max == 50);
  LatencyDoctorSettings settings{.threshold_ms = 10, .slowlog_log_slower_than = 10000, .now = 110};
  const std::string doctor = m.doctor(settings);
  CHECK(doctor.find("1. command: 2 latency spikes (average 32ms, mean deviation 17ms, period "
                    "5.00 sec). Worst all time event 50ms.") != std::string::npos);
  CHECK(doctor.find("Check your Slow Log") != std::string::npos);
  const std::string graph = m.graph("command", 110);
  CHECK(graph.rfind(
            "command - high 50 ms, low 15 ms (all time high 50 ms)\n" + std::string(80, '-') + "\n",
            0) == 0);
  CHECK(m.reset("COMMAND") == 1);
  CHECK(m.reset(std::nullopt) == 0);
  CHECK(m.doctor(LatencyDoctorSettings{}).rfind("I'm sorry, Dave", 0) == 0);
}

TEST_CASE("digests equal redis-server's for the same data") {
  Store store;
  CHECK(digest_hex(dataset_digest(store)) == std::string(40, '0'));
  run(store, {"SET", "a", "1"});
  run(store, {"SET", "nope", "1"});
  run(store, {"HSET", "h", "f", "v"});
  // redis-server 7.0.15: DEBUG DIGEST-VALUE a h, then DEBUG DIGEST.
  CHECK(digest_hex(value_digest(*store.peek("a"))) == "b4fc66738120fba0b5aa500ab5c2bf89cea1c5da");
  CHECK(digest_hex(value_digest(*store.peek("h"))) == "90c76e9e9f4c62d642a34fc97c7dad503b51f906");
  CHECK(digest_hex(dataset_digest(store)) == "e21b27416fa10949d420464bdf458ee6279d7351");
}

TEST_CASE("the digests of stores holding parts of a dataset combine into the whole one's") {
  Store whole, left, right;
  for (int i = 0; i < 50; ++i) {
    const std::string key = "k" + std::to_string(i), value = "v" + std::to_string(i * 7);
    run(whole, {"SET", key, value});
    run(i % 3 == 0 ? left : right, {"SET", key, value});
  }
  run(whole, {"RPUSH", "list", "a", "b"});
  run(right, {"RPUSH", "list", "a", "b"});
  Store empty;
  const std::string l = digest_hex(dataset_digest(left));
  const std::string r = digest_hex(dataset_digest(right));
  const std::string e = digest_hex(dataset_digest(empty));
  CHECK(combine_digests({l, r}) == digest_hex(dataset_digest(whole)));
  CHECK(combine_digests({r, e, l}) == digest_hex(dataset_digest(whole)));
  CHECK(combine_digests({l}) == l);
  CHECK(combine_digests({e, e}) == e);
  CHECK(combine_digests({"xyz"}).empty());
}
