// A replication stream's backlog: frames come back by offset, the oldest are dropped past the
// byte limit (the newest always stays), and compaction keeps offsets and bytes in step.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cluster/frame_log.h"

using namespace ringkv::cluster;

namespace {

std::vector<std::pair<uint64_t, std::string>> frames_from(const FrameLog& log, uint64_t from) {
  std::vector<std::pair<uint64_t, std::string>> out;
  log.for_each_from(from, [&](uint64_t offset, std::string_view frame) {
    out.emplace_back(offset, std::string(frame));
    return true;
  });
  return out;
}

std::string frame_of(uint64_t n) { return "frame-" + std::to_string(n) + std::string(n % 7, 'x'); }

}  // namespace

TEST_CASE("an empty log starts at offset 1") {
  FrameLog log;
  CHECK(log.empty());
  CHECK(log.first() == 1);
  CHECK(frames_from(log, 1).empty());
}

TEST_CASE("frames come back by offset, from any kept offset on") {
  FrameLog log;
  for (uint64_t n = 1; n <= 5; ++n) log.push(frame_of(n), 1 << 20);
  CHECK(log.first() == 1);
  const auto all = frames_from(log, 1);
  REQUIRE(all.size() == 5);
  for (uint64_t n = 1; n <= 5; ++n) CHECK(all[n - 1] == std::make_pair(n, frame_of(n)));
  const auto tail = frames_from(log, 4);
  REQUIRE(tail.size() == 2);
  CHECK(tail[0].first == 4);
  CHECK(tail[1] == std::make_pair(uint64_t{5}, frame_of(5)));
  CHECK(frames_from(log, 6).empty());
}

TEST_CASE("past the limit the oldest frames go; the newest stays even when larger") {
  FrameLog log;
  log.push(std::string(10, 'a'), 25);
  log.push(std::string(10, 'b'), 25);
  log.push(std::string(10, 'c'), 25);  // 30 bytes: the first goes
  CHECK(log.first() == 2);
  log.push(std::string(100, 'd'), 25);  // alone over the limit: only it stays
  CHECK(log.first() == 4);
  const auto kept = frames_from(log, 1);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0] == std::make_pair(uint64_t{4}, std::string(100, 'd')));
}

TEST_CASE("iteration stops when the callback says so") {
  FrameLog log;
  for (uint64_t n = 1; n <= 10; ++n) log.push(frame_of(n), 1 << 20);
  std::vector<uint64_t> seen;
  log.for_each_from(3, [&](uint64_t offset, std::string_view) {
    seen.push_back(offset);
    return offset < 5;
  });
  CHECK(seen == std::vector<uint64_t>{3, 4, 5});
}

TEST_CASE("many frames through a small limit: compaction keeps every kept frame intact") {
  FrameLog log;
  const size_t limit = 10000;
  for (uint64_t n = 1; n <= 20000; ++n) {
    log.push(frame_of(n), limit);
    if (n % 997 == 0) {
      const auto kept = frames_from(log, 1);
      REQUIRE(!kept.empty());
      CHECK(kept.front().first == log.first());
      CHECK(kept.back().first == n);
      size_t bytes = 0;
      for (size_t i = 0; i < kept.size(); ++i) {
        CHECK(kept[i] == std::make_pair(log.first() + i, frame_of(log.first() + i)));
        bytes += kept[i].second.size();
      }
      CHECK(bytes <= limit);
      CHECK(bytes + frame_of(log.first() - 1).size() > limit);  // no more dropped than needed
    }
  }
}
