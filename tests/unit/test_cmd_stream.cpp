// Unit tests of the stream command handlers where they meet the server: which writes report their
// key ready for blocked readers (and which report a group change without touching WATCH), the
// wait XREAD and XREADGROUP ask for when they find nothing (the IDs resolved, COUNT 1000, each
// waiter on its own), what a woken reader answers when its stream or group went away, and what
// a timed-out one answers. Reply bytes are Redis 7.0.15's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "command_harness.h"
#include "engine/commands/stream.h"

namespace {

using ringkv::test::CommandHarness;
using Strings = std::vector<std::string>;

// Runs a handler as a blocked client's command run again after a write woke it.
std::string rerun(CommandHarness& h, ringkv::engine::CommandHandler handler,
                  std::vector<std::string_view> argv) {
  h.out.clear();
  ringkv::engine::BlockRequest block;
  ringkv::engine::CommandContext ctx{argv,    h.writer, h.store, nullptr,
                                     nullptr, nullptr,  &block,  &h.ready};
  ctx.blocked_retry = true;
  handler(ctx);
  return h.out;
}

}  // namespace

using namespace ringkv::engine;

TEST_CASE("XADD reports its key ready and changed; group changes are data changes only") {
  CommandHarness h;
  CHECK(h.run(cmd_xadd, {"XADD", "s", "1-1", "f", "v"}) == "$3\r\n1-1\r\n");
  CHECK(h.ready.keys == Strings{"s"});
  CHECK(h.ready.modified == Strings{"s"});
  h.ready.keys.clear();
  h.ready.modified.clear();
  CHECK(h.run(cmd_xgroup_create, {"XGROUP", "CREATE", "s", "g", "0"}) == "+OK\r\n");
  CHECK(h.run(cmd_xreadgroup, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}) ==
        "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
  CHECK(h.run(cmd_xack, {"XACK", "s", "g", "1-1"}) == ":1\r\n");
  CHECK(h.ready.modified.empty());
  // XGROUP CREATE, XREADGROUP (one per effect it logs: the claim and the group's new last ID)
  // and XACK, each naming the stream.
  CHECK(h.ready.data_changes == 5);
  CHECK(h.ready.data_changed_keys == Strings(5, "s"));
  // DESTROY wakes blocked group readers, so that they learn the group is gone.
  CHECK(h.run(cmd_xgroup_destroy, {"XGROUP", "DESTROY", "s", "g"}) == ":1\r\n");
  CHECK(h.ready.keys == Strings{"s"});
  // A failed append reports nothing.
  h.ready.keys.clear();
  CHECK(h.run(cmd_xadd, {"XADD", "s", "1-1", "f", "v"}) ==
        "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n");
  CHECK(h.ready.keys.empty());
  CHECK(h.ready.modified.empty());
}

TEST_CASE("XREAD that finds nothing waits with its IDs resolved") {
  CommandHarness h;
  h.blockable = true;
  h.run(cmd_xadd, {"XADD", "s", "5-1", "f", "v"});
  CHECK(h.run(cmd_xread, {"XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"}).empty());
  CHECK(h.block.active);
  CHECK(h.block.keys == Strings{"s", "t"});
  CHECK(h.block.timeout_ms == 0);
  CHECK(h.block.independent);
  CHECK(h.block.rerun_argv ==
        Strings{"XREAD", "COUNT", "1000", "BLOCK", "0", "STREAMS", "s", "t", "5-1", "0-0"});
  CHECK(h.run(cmd_xread, {"xread", "COUNT", "2", "BLOCK", "150", "STREAMS", "s", "9"}).empty());
  CHECK(h.block.timeout_ms == 150);
  CHECK(h.block.rerun_argv ==
        Strings{"xread", "COUNT", "2", "BLOCK", "150", "STREAMS", "s", "9-0"});
  // Without BLOCK, or unable to block (inside MULTI), nothing is a null array.
  CHECK(h.run(cmd_xread, {"XREAD", "STREAMS", "s", "$"}) == "*-1\r\n");
  h.blockable = false;
  CHECK(h.run(cmd_xread, {"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}) == "*-1\r\n");
  h.timed_out = true;
  CHECK(h.run(cmd_xread, {"XREAD", "BLOCK", "10", "STREAMS", "s", "0"}) == "*-1\r\n");
}

TEST_CASE("a woken XREAD ignores a key of another type; XREADGROUP learns what went away") {
  CommandHarness h;
  h.run(cmd_xgroup_create, {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"});
  h.blockable = true;
  CHECK(h.run(cmd_xreadgroup, {"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"})
            .empty());
  CHECK(h.block.active);
  CHECK(h.block.rerun_argv == Strings{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1000", "BLOCK",
                                      "0", "STREAMS", "s", ">"});
  const std::vector<std::string_view> group_read{
      "XREADGROUP", "GROUP", "g", "c", "COUNT", "1000", "BLOCK", "0", "STREAMS", "s", ">"};
  // Woken with nothing new: nothing is written (it waits on).
  CHECK(rerun(h, cmd_xreadgroup, group_read).empty());
  h.run(cmd_xgroup_destroy, {"XGROUP", "DESTROY", "s", "g"});
  CHECK(rerun(h, cmd_xreadgroup, group_read) ==
        "-NOGROUP the consumer group this client was blocked on no longer exists\r\n");
  h.store.erase("s");
  CHECK(rerun(h, cmd_xreadgroup, group_read) == "-UNBLOCKED the stream key no longer exists\r\n");
  h.store.set_string("s", "string", Expiry::none());
  CHECK(rerun(h, cmd_xreadgroup, group_read) == "-UNBLOCKED the stream key no longer exists\r\n");
  CHECK(
      rerun(h, cmd_xread, {"XREAD", "COUNT", "1000", "BLOCK", "0", "STREAMS", "s", "0-0"}).empty());
  // The consumer was never served, so it was never created (as in Redis 7.0).
  h.store.erase("s");
  h.run(cmd_xgroup_create, {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"});
  h.blockable = false;
  h.run(cmd_xreadgroup, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"});
  CHECK(h.run(cmd_xinfo_groups, {"XINFO", "GROUPS", "s"}).find("$9\r\nconsumers\r\n:0\r\n") !=
        std::string::npos);
}

TEST_CASE("an empty stream stays a key; XADD NOMKSTREAM creates none") {
  CommandHarness h;
  CHECK(h.run(cmd_xadd, {"XADD", "s", "NOMKSTREAM", "1-1", "f", "v"}) == "$-1\r\n");
  CHECK(h.store.peek("s") == nullptr);
  h.run(cmd_xadd, {"XADD", "s", "1-1", "f", "v"});
  CHECK(h.run(cmd_xdel, {"XDEL", "s", "1-1"}) == ":1\r\n");
  REQUIRE(h.store.peek("s") != nullptr);
  CHECK(h.run(cmd_xlen, {"XLEN", "s"}) == ":0\r\n");
  CHECK(h.run(cmd_xadd, {"XADD", "s", "1-1", "f", "v"}) ==
        "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n");
}
