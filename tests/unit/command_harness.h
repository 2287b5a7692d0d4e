// The harness of the command handler unit tests (test_cmd_*.cpp): a Store at a fixed clock, a
// reply buffer, and the hooks a handler may use (key-ready and key-changed reports, a wait request,
// a server). run() calls one handler on argv and returns exactly the bytes it wrote.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_writer.h"

namespace ringkv::test {

// The fixed "current time" of every handler test, unix ms.
inline constexpr int64_t kNow = 1'700'000'000'000;
// The reply of any command run on a key of another type.
inline constexpr std::string_view kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

// Records the keys that writes reported ready for blocked clients, the keys they reported changed
// (for WATCH), and the store's size whenever a flush was announced (so a test can tell the
// announcement came before the keys were dropped).
struct ReadyKeys : engine::KeyEvents {
  std::vector<std::string> keys;
  std::vector<std::string> modified;
  std::vector<size_t> flushes;
  size_t data_changes = 0;  // changes Redis signals on no key (stream consumer groups)
  std::vector<std::string> data_changed_keys;  // ... and the key each one changed
  const engine::Store* store = nullptr;
  void key_ready(std::string_view key) override { keys.emplace_back(key); }
  void data_changed(std::string_view key) override {
    ++data_changes;
    data_changed_keys.emplace_back(key);
  }
  void key_modified(std::string_view key) override { modified.emplace_back(key); }
  void keyspace_flushing() override { flushes.push_back(store->size()); }
};

struct CommandHarness {
  engine::Store store;
  std::string out;
  protocol::ReplyWriter writer{out};
  ReadyKeys ready;
  // The wait request of the last run, when `blockable`; otherwise handlers cannot block and
  // answer as inside MULTI, or, with `timed_out`, as when a wait timed out.
  engine::BlockRequest block;
  bool blockable = false;
  bool timed_out = false;
  engine::ServerControl* server = nullptr;

  CommandHarness() {
    store.set_now(kNow);
    ready.store = &store;
  }

  // Runs `handler` on `args` (the command name first) and returns the reply bytes.
  std::string run(engine::CommandHandler handler, std::initializer_list<std::string_view> args) {
    std::vector<std::string_view> argv(args);
    out.clear();
    block = engine::BlockRequest{};
    engine::CommandContext ctx{
        argv, writer, store, nullptr, server, nullptr, blockable ? &block : nullptr, &ready};
    ctx.timed_out = timed_out;
    handler(ctx);
    return out;
  }

  // Runs `handler` on `args` and returns the keys it reported changed, in report order.
  std::vector<std::string> changed_by(engine::CommandHandler handler,
                                      std::initializer_list<std::string_view> args) {
    ready.modified.clear();
    run(handler, args);
    return ready.modified;
  }
};

// The argv positions a KeyFinder names for `args`.
inline std::vector<size_t> keys_of(engine::KeyFinder finder,
                                   std::initializer_list<std::string_view> args) {
  std::vector<std::string_view> argv(args);
  std::vector<size_t> positions;
  finder(argv, positions);
  return positions;
}

}  // namespace ringkv::test
