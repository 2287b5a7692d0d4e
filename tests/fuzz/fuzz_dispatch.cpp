// libFuzzer target for command dispatch: the input is a script of commands, one per line,
// arguments separated by single spaces (any other byte, NUL and CR included, is argument text).
// Each command runs through engine::dispatch against one fresh Store, with a minimal client,
// server and pub/sub registry so every row of the command table can run, blocking commands
// answering as inside MULTI. After each command the reply must be complete, valid RESP (exactly
// one value, or one per channel for the (un)subscribe family), the store's key count must agree
// with its live keys, and after FLUSHALL/FLUSHDB used_memory must be back to an empty store's.
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
#include "protocol/reply_reader.h"
#include "protocol/reply_writer.h"
#include "server/pubsub.h"

namespace {

using namespace ringkv;
using protocol::RespVersion;

// Bounds that keep one input fast; longer scripts add little that shorter ones cannot reach.
constexpr size_t kMaxCommands = 64;
constexpr size_t kMaxArgs = 64;
// The script's clock starts here (unix ms) and advances per command, so TTLs do expire.
constexpr int64_t kStartMs = 1'700'000'000'000;
constexpr int64_t kTickMs = 250;

void check(bool ok) {
  if (!ok) std::abort();
}

// Aborts with the command and its reply on stderr, so a crash report says which invariant broke.
void require(bool ok, const char* what, std::span<const std::string_view> argv,
             std::string_view reply) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_dispatch: %s after:", what);
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
  RespVersion resp() const override { return resp_; }
  void set_resp(RespVersion v) override { resp_ = v; }
  int db() const override { return 0; }
  void close_after_reply() override {}
  void reset_state() override {
    name_.clear();
    resp_ = RespVersion::kResp2;
  }
  std::string info_line() const override { return "id=7 name=" + name_; }

 private:
  std::string name_;
  RespVersion resp_ = RespVersion::kResp2;
};

// Answers the transaction commands with Redis's replies outside a transaction's queueing, and
// runs CONFIG GET/SET against a real Config, so the parameter parsers are fuzzed too.
class FakeServer final : public engine::ServerControl {
 public:
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

 private:
  conf::Config config_;
  engine::acl::Users users_;
};

class NullSink final : public server::PubSubSink {
 public:
  void deliver(uint64_t, const std::string*, std::string_view, std::string_view) override {}
  void deliver_shard(uint64_t, std::string_view, std::string_view) override {}
};

// Splits the input into commands (lines) of arguments (space-separated, empty ones kept: an
// empty argument is a valid request argument).
std::vector<std::vector<std::string_view>> split_script(std::string_view script) {
  std::vector<std::vector<std::string_view>> commands;
  while (!script.empty() && commands.size() < kMaxCommands) {
    const size_t eol = script.find('\n');
    std::string_view line = script.substr(0, eol);
    script = eol == std::string_view::npos ? std::string_view{} : script.substr(eol + 1);
    std::vector<std::string_view> argv;
    while (argv.size() < kMaxArgs) {
      const size_t sp = line.find(' ');
      argv.push_back(line.substr(0, sp));
      if (sp == std::string_view::npos) break;
      line.remove_prefix(sp + 1);
    }
    commands.push_back(std::move(argv));
  }
  return commands;
}

// How many RESP values a command that ran may write: one, except the (un)subscribe family (one
// per channel) and SHUTDOWN (none: the server closes instead of replying).
bool plausible_value_count(const engine::CommandSpec& spec, size_t values) {
  const std::string_view name = spec.name;
  if (name == "subscribe" || name == "unsubscribe" || name == "psubscribe" ||
      name == "punsubscribe") {
    return values >= 1;
  }
  if (name == "shutdown") return values <= 1;
  return values == 1;
}

constexpr size_t kInvalid = SIZE_MAX;

// Counts the RESP values in `reply`, checking each is complete and decodable; kInvalid when the
// bytes are not a sequence of whole values.
size_t count_values(std::string_view reply) {
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

size_t live_keys(engine::Store& store) {
  size_t n = 0;
  store.for_each([&n](const engine::Entry&) { ++n; });
  return n;
}

bool is_flush(std::string_view reply, const engine::CommandSpec* spec) {
  return spec != nullptr && (spec->name == "flushall" || spec->name == "flushdb") &&
         reply == "+OK\r\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  engine::Store store;
  const size_t empty_memory = store.used_memory();
  FakeClient client;
  FakeServer server;
  NullSink sink;
  server::PubSubRegistry pubsub(sink);
  int64_t now = kStartMs;
  std::string out;

  for (const std::vector<std::string_view>& argv : split_script(script)) {
    store.set_now(now += kTickMs);
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
    if (is_flush(out, spec)) {
      require(store.size() == 0, "keys left by a flush", argv, out);
      require(store.used_memory() == empty_memory, "used_memory not back to empty", argv, out);
    }
  }
  return 0;
}
