// The persisted ring: its text round-trips, malformed files are refused with the line, and
// writing replaces the file atomically.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cluster/ring_file.h"

using namespace ringkv::cluster;

TEST_CASE("a ring state round-trips through its text") {
  RingState s;
  s.version = 7;
  s.members = {{"127.0.0.1:7001", 1}, {"127.0.0.1:7002", 3}};
  std::string error;
  auto back = parse_ring_state(format_ring_state(s), error);
  REQUIRE(back);
  CHECK(*back == s);
  s.pending_version = 8;
  s.pending_members = {{"127.0.0.1:7001", 1}, {"127.0.0.1:7002", 3}, {"127.0.0.1:7003", 1}};
  s.coordinator = "127.0.0.1:7002";
  back = parse_ring_state(format_ring_state(s), error);
  REQUIRE(back);
  CHECK(*back == s);
  // Failed-over members, committed and in a pending change.
  s.failed = {"127.0.0.1:7002"};
  s.pending_failed = {"127.0.0.1:7002", "127.0.0.1:7003"};
  back = parse_ring_state(format_ring_state(s), error);
  REQUIRE(back);
  CHECK(*back == s);
  CHECK(format_ring_state(s).find("\nfailed 127.0.0.1:7002\n") != std::string::npos);
  // A pending change its members fenced (resolving it without its coordinator).
  CHECK(format_ring_state(s).find("fenced") == std::string::npos);
  s.fenced = true;
  back = parse_ring_state(format_ring_state(s), error);
  REQUIRE(back);
  CHECK(back->fenced);
  // A pending failover whose coordinator completes it (never aborts it).
  CHECK(format_ring_state(s).find("completes") == std::string::npos);
  s.completes = true;
  back = parse_ring_state(format_ring_state(s), error);
  REQUIRE(back);
  CHECK(*back == s);
  CHECK(format_ring_state(s).find("\ncompletes\n") != std::string::npos);
  // A member the pending change forces out (it takes no part in it).
  s.pending_forced = {"127.0.0.1:7004"};
  back = parse_ring_state(format_ring_state(s), error);
  REQUIRE(back);
  CHECK(*back == s);
  CHECK(format_ring_state(s).find("\npending-forced 127.0.0.1:7004\n") != std::string::npos);
  CHECK(*back == s);
}

TEST_CASE("a malformed ring file is refused with its line") {
  std::string error;
  CHECK_FALSE(parse_ring_state("", error));
  CHECK(error == "empty file");
  CHECK_FALSE(parse_ring_state("hello\n", error));
  CHECK(error == "line 1: not a ringkv ring file");
  CHECK_FALSE(parse_ring_state("ringkv-ring 1\nversion x\n", error));
  CHECK(error == "line 2: bad version");
  CHECK_FALSE(parse_ring_state("ringkv-ring 1\nversion 1\nmember a:1 0\n", error));
  CHECK(error == "line 3: bad weight");
  CHECK_FALSE(parse_ring_state("ringkv-ring 1\nversion 1\n", error));
  CHECK(error == "no version or no members");
  CHECK_FALSE(parse_ring_state("ringkv-ring 1\nversion 1\nmember a:1 1\npending 2\n", error));
  CHECK(error == "a pending change needs both its version and its members");
  CHECK_FALSE(parse_ring_state("ringkv-ring 1\nversion 1\nmember a:1 1\nextra\n", error));
  CHECK(error == "line 4: unknown line 'extra'");
}

TEST_CASE("the ring file is written atomically and read back") {
  char dir_template[] = "/tmp/ringkv-ring-test-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  REQUIRE(dir != nullptr);
  const std::string path = ring_file_path(dir);
  std::string error;
  CHECK_FALSE(read_ring_file(path, error));
  CHECK(error.empty());  // absent: no error
  RingState s;
  s.version = 2;
  s.members = {{"h:1", 1}};
  CHECK(write_ring_file(path, s).empty());
  s.version = 3;
  CHECK(write_ring_file(path, s).empty());
  auto back = read_ring_file(path, error);
  REQUIRE(back);
  CHECK(back->version == 3);
  CHECK(access((path + ".tmp").c_str(), F_OK) != 0);
  std::ofstream(path) << "garbage\n";
  CHECK_FALSE(read_ring_file(path, error));
  CHECK(error == path + ": line 1: not a ringkv ring file");
  unlink(path.c_str());
  rmdir(dir);
}
