// The keys a run of replication frames writes: what a replica that missed them lacks. A
// frame's database prefix and a block's SELECT place each key; what names no key (a flush, a
// keyless record), SWAPDB, or a frame no longer kept makes it unknown.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/frame_keys.h"
#include "cluster/frame_log.h"
#include "protocol/request_writer.h"

using namespace ringkv::cluster;
using Keys = std::vector<std::pair<int, std::string>>;

namespace {

std::string frame(std::initializer_list<std::string_view> args) {
  std::string out;
  ringkv::protocol::append_request(out, std::vector<std::string_view>(args));
  return out;
}

FrameLog log_of(std::initializer_list<std::string> frames, size_t limit = 1 << 20) {
  FrameLog log;
  for (const std::string& f : frames) log.push(f, limit);
  return log;
}

}  // namespace

TEST_CASE("the keys of each frame, in the frame's database") {
  const FrameLog log = log_of({frame({"SET", "a", "1"}), frame({"RINGKV.DB", "3", "DEL", "b", "c"}),
                               frame({"MSET", "d", "1", "e", "2"})});
  Keys keys;
  REQUIRE(keys_of_frames(log, 1, 4, keys));
  CHECK(keys == Keys{{0, "a"}, {3, "b"}, {3, "c"}, {0, "d"}, {0, "e"}});
}

TEST_CASE("only the frames asked for: from `from` up to `to`, not included") {
  const FrameLog log =
      log_of({frame({"SET", "a", "1"}), frame({"SET", "b", "1"}), frame({"SET", "c", "1"})});
  Keys keys;
  REQUIRE(keys_of_frames(log, 2, 3, keys));
  CHECK(keys == Keys{{0, "b"}});
  keys.clear();
  CHECK(keys_of_frames(log, 3, 3, keys));  // nothing asked for
  CHECK(keys.empty());
}

TEST_CASE("a block's SELECT places the keys of the commands queued after it") {
  const FrameLog log = log_of({frame({"MULTI"}), frame({"SET", "a", "1"}), frame({"SELECT", "2"}),
                               frame({"INCR", "b"}), frame({"EXEC"}), frame({"SET", "c", "1"})});
  Keys keys;
  REQUIRE(keys_of_frames(log, 1, 7, keys));
  CHECK(keys == Keys{{0, "a"}, {2, "b"}, {0, "c"}});
}

TEST_CASE("MOVE writes its key in both databases, COPY ... DB n its destination in n") {
  const FrameLog log =
      log_of({frame({"MOVE", "a", "4"}), frame({"RINGKV.DB", "1", "COPY", "b", "c", "DB", "5"}),
              frame({"COPY", "d", "e", "REPLACE"})});
  Keys keys;
  REQUIRE(keys_of_frames(log, 1, 4, keys));
  CHECK(keys == Keys{{0, "a"}, {4, "a"}, {1, "b"}, {5, "c"}, {0, "d"}, {0, "e"}});
  CHECK_FALSE(keys_of_frames(log_of({frame({"MOVE", "a", "-1"})}), 1, 2, keys));
}

TEST_CASE("stream marks write nothing; a flush or a keyless record is unknown") {
  Keys keys;
  CHECK(keys_of_frames(log_of({frame({"RINGKV.REPL", "SYNCED"}), frame({"SET", "a", "1"})}), 1, 3,
                       keys));
  CHECK(keys == Keys{{0, "a"}});
  CHECK_FALSE(keys_of_frames(log_of({frame({"SET", "a", "1"}), frame({"RINGKV.REPL", "FLUSH"})}), 1,
                             3, keys));
  CHECK_FALSE(keys_of_frames(log_of({frame({"FUNCTION", "FLUSH"})}), 1, 2, keys));
  CHECK_FALSE(keys_of_frames(log_of({frame({"SWAPDB", "0", "1"})}), 1, 2, keys));
  CHECK_FALSE(keys_of_frames(log_of({frame({"NOSUCHCOMMAND", "a"})}), 1, 2, keys));
  CHECK_FALSE(keys_of_frames(log_of({std::string("not resp")}), 1, 2, keys));
}

TEST_CASE("frames no longer kept, or not made yet, are unknown") {
  // A limit that keeps only the newest frame.
  const FrameLog log = log_of({frame({"SET", "a", "1"}), frame({"SET", "b", "1"})}, 1);
  REQUIRE(log.first() == 2);
  Keys keys;
  CHECK_FALSE(keys_of_frames(log, 1, 3, keys));
  CHECK_FALSE(keys_of_frames(log, 2, 4, keys));
  keys.clear();
  CHECK(keys_of_frames(log, 2, 3, keys));
  CHECK(keys == Keys{{0, "b"}});
}
