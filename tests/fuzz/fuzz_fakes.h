// What the fuzz targets that run commands share: a minimal client and server (with a real Config,
// real ACL users and a real Lua script engine whose redis.call runs commands on the same store),
// a pub/sub sink that drops messages, and the checks they make on replies.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/glob.h"
#include "conf/config.h"
#include "engine/acl/acl_users.h"
#include "engine/command.h"
#include "engine/keyspace/store.h"
#include "engine/scripting/script_engine.h"
#include "protocol/reply_reader.h"
#include "protocol/reply_writer.h"
#include "server/pubsub.h"

namespace ringkv::fuzz {

// The scripts' clock starts here (unix ms) and advances per command, so TTLs do expire.
inline constexpr int64_t kStartMs = 1'700'000'000'000;
inline constexpr int64_t kTickMs = 250;

inline void check(bool ok) {
  if (!ok) std::abort();
}

// Aborts with the command and its reply on stderr, so a crash report says which invariant broke.
inline void require(bool ok, const char* what, std::span<const std::string_view> argv,
                    std::string_view reply) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: %s after:", what);
  for (std::string_view a : argv) std::fprintf(stderr, " [%.*s]", int(a.size()), a.data());
  std::fprintf(stderr, "\nreply (%zu bytes): %.*s\n", reply.size(),
               int(std::min<size_t>(reply.size(), 2000)), reply.data());
  std::abort();
}

class FakeClient final : public engine::ClientSession {
 public:
  uint64_t id() const override { return 7; }
  std::string_view name() const override { return name_; }
  void set_name(std::string_view name) override { name_ = name; }
  protocol::RespVersion resp() const override { return resp_; }
  void set_resp(protocol::RespVersion v) override { resp_ = v; }
  int db() const override { return 0; }
  void close_after_reply() override {}
  void reset_state() override {
    name_.clear();
    resp_ = protocol::RespVersion::kResp2;
  }
  std::string info_line() const override { return "id=7 name=" + name_; }

 private:
  std::string name_;
  protocol::RespVersion resp_ = protocol::RespVersion::kResp2;
};

class NullSink final : public server::PubSubSink {
 public:
  void deliver(uint64_t, const std::string*, std::string_view, std::string_view) override {}
  void deliver_shard(uint64_t, std::string_view, std::string_view) override {}
};

// Answers the transaction commands with Redis's replies outside a transaction's queueing, runs
// CONFIG GET/SET against a real Config (so the parameter parsers are fuzzed too), and runs
// scripts: the commands a script calls run on the same store, as the server's pipeline would
// run them locally. A script still running after 50 ms is killed (the fuzzer's time is short).
class FakeServer final : public engine::ServerControl, public engine::ScriptHost {
 public:
  FakeServer(engine::Store& store, FakeClient& client, server::PubSubRegistry& pubsub)
      : store_(store), client_(client), pubsub_(pubsub), scripts_(this) {
    scripts_.set_busy_threshold_ms(50);
  }

  std::string info(std::span<const std::string_view>) override { return "# Server\r\n"; }
  std::string client_list(std::span<const uint64_t>, std::optional<engine::ClientKind>) override {
    return "id=7 name=\n";
  }
  size_t kill_clients(const engine::ClientKillFilter&) override { return 0; }
  void config_get(std::string_view pattern,
                  std::vector<std::pair<std::string, std::string>>& out) override {
    for (const conf::Parameter& p : conf::parameters()) {
      if (common::glob_match(pattern, p.name, true)) out.emplace_back(p.name, p.get(config_));
    }
  }
  std::string config_set(
      std::span<const std::pair<std::string_view, std::string_view>> pairs) override {
    return conf::set_parameters(config_, pairs);
  }
  void config_resetstat() override {}
  void multi(engine::CommandContext& ctx) override { ctx.reply.ok(); }
  void exec(engine::CommandContext& ctx) override { ctx.reply.error("ERR EXEC without MULTI"); }
  void discard(engine::CommandContext& ctx) override {
    ctx.reply.error("ERR DISCARD without MULTI");
  }
  void watch(engine::CommandContext& ctx) override { ctx.reply.ok(); }
  void unwatch(engine::CommandContext& ctx) override { ctx.reply.ok(); }
  void shutdown() override {}
  int64_t last_save_unix() const override { return kStartMs / 1000; }
  // Real ACL users, so AUTH, HELLO ... AUTH and the ACL commands run their rule parsers.
  engine::acl::Users* acl_users() override { return &users_; }
  engine::ScriptEngine* script_engine() override { return &scripts_; }

  void script_begin(engine::ClientSession*) override {}
  void script_call(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                   protocol::ReplyWriter& reply) override {
    engine::CommandContext ctx{argv, reply, store_, &client_, this, &spec};
    ctx.pubsub = &pubsub_;
    ctx.from_script = true;
    spec.handler(ctx);
  }
  void script_busy(bool) override { scripts_.kill(true); }
  void script_end(bool) override {}

 private:
  engine::Store& store_;
  FakeClient& client_;
  server::PubSubRegistry& pubsub_;
  conf::Config config_;
  engine::acl::Users users_;
  engine::ScriptEngine scripts_;
};

// How many RESP values a command that ran may write: one, except the (un)subscribe family, the
// sharded one too (one per channel), and SHUTDOWN (none: the server closes instead of replying).
inline bool plausible_value_count(const engine::CommandSpec& spec, size_t values) {
  const std::string_view name = spec.name;
  if (name == "subscribe" || name == "unsubscribe" || name == "psubscribe" ||
      name == "punsubscribe" || name == "ssubscribe" || name == "sunsubscribe") {
    return values >= 1;
  }
  if (name == "shutdown") return values <= 1;
  return values == 1;
}

inline constexpr size_t kInvalid = SIZE_MAX;

// Counts the RESP values in `reply`, checking each is complete and decodable; kInvalid when the
// bytes are not a sequence of whole values.
inline size_t count_values(std::string_view reply) {
  size_t values = 0;
  while (!reply.empty()) {
    protocol::ReplyScanner scanner;
    const auto r = scanner.scan(reply);
    if (r.status != protocol::ReplyScanner::Status::kComplete) return kInvalid;
    check(r.length > 0 && r.length <= reply.size());
    protocol::ReplyValue value;
    if (!protocol::decode_reply(reply.substr(0, r.length), value)) return kInvalid;
    reply.remove_prefix(r.length);
    ++values;
  }
  return values;
}

inline size_t live_keys(engine::Store& store) {
  size_t n = 0;
  store.for_each([&n](const engine::Entry&) { ++n; });
  return n;
}

// One fresh store with its client, server and pub/sub registry. run() dispatches one command,
// the clock a tick later, and checks that its reply (in `out`) is whole RESP with as many values
// as the command writes, and that the store's key count agrees with its live keys.
class Session {
 public:
  const engine::CommandSpec* run(std::span<const std::string_view> argv) {
    store.set_now(now_ += kTickMs);
    out.clear();
    protocol::ReplyWriter writer(out, client.resp());
    engine::CommandContext ctx{argv, writer, store, &client, &server, nullptr};
    ctx.pubsub = &pubsub;
    const engine::CommandSpec* spec = engine::dispatch(ctx);
    const size_t values = count_values(out);
    require(values != kInvalid, "reply is not valid RESP", argv, out);
    require(spec == nullptr ? values == 1 : plausible_value_count(*spec, values),
            "wrong number of reply values", argv, out);
    require(live_keys(store) <= store.size(), "more live keys than the store counts", argv, out);
    return spec;
  }

  engine::Store store;
  FakeClient client;
  NullSink sink;
  server::PubSubRegistry pubsub{sink};
  FakeServer server{store, client, pubsub};
  std::string out;

 private:
  int64_t now_ = kStartMs;
};

}  // namespace ringkv::fuzz
