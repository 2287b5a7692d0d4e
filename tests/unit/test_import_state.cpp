// Unit tests for CLUSTER IMPORT's record on disk: import.state round trips (passwords of any
// bytes), malformed files are refused, key logs are read back (a record cut short ends the log),
// and which stream commands may be applied twice.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "server/import_state.h"

using ringkv::server::ImportKeyLog;
using ringkv::server::ImportRecord;

namespace {

std::string temp_dir() {
  std::string dir = std::filesystem::temp_directory_path().string() + "/ringkv-import-" +
                    std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

bool safe(std::vector<std::string_view> argv) { return ringkv::server::replay_safe(argv); }

}  // namespace

TEST_CASE("import.state round trips every field") {
  const std::string dir = temp_dir();
  const std::string path = ringkv::server::import_state_path(dir);
  std::vector<ImportRecord> records(2);
  records[0] = {"10.0.0.5:6379", "pa ss\nword\x01", true, "8de1f4b1", 123456, false};
  records[1] = {"10.0.0.6:6380", "", false, "", 0, true};
  REQUIRE(ringkv::server::write_import_state(path, records).empty());
  std::string error;
  CHECK(ringkv::server::read_import_state(path, error) == records);
  CHECK(error.empty());
  std::ofstream(path, std::ios::app) << "10.0.0.7:1 running - x 0 -\n";
  CHECK(ringkv::server::read_import_state(path, error).empty());
  CHECK(error.find("import.state:4: malformed") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("no import.state: no imports") {
  std::string error;
  CHECK(ringkv::server::read_import_state("/nonexistent/import.state", error).empty());
  CHECK(error.empty());
}

TEST_CASE("a key log keeps every name once written, and a new import forgets it") {
  const std::string dir = temp_dir();
  {
    ImportKeyLog log(dir, "10.0.0.5:6379");
    log.add("a");
    log.add(std::string("with\nnewline:and colon", 22));
    CHECK(log.pending());
    REQUIRE(log.flush().empty());
    CHECK_FALSE(log.pending());
    log.add("");
    REQUIRE(log.flush().empty());
  }
  // A record cut short (a crash in the middle of a write) ends what is read.
  std::ofstream(dir + "/import-10.0.0.5-6379.keys", std::ios::app) << "10:abc";
  ImportKeyLog log(dir, "10.0.0.5:6379");
  std::unordered_set<std::string> keys;
  log.load(keys);
  CHECK(keys == std::unordered_set<std::string>{"a", "with\nnewline:and colon", ""});
  log.clear();
  keys.clear();
  log.load(keys);
  CHECK(keys.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("commands safe to apply twice") {
  CHECK(safe({"SET", "k", "v", "PXAT", "1"}));
  CHECK(safe({"del", "a", "b"}));
  CHECK(safe({"HSET", "h", "f", "v"}));
  CHECK(safe({"PEXPIREAT", "k", "1"}));
  CHECK(safe({"ZADD", "z", "1", "m"}));
  CHECK_FALSE(safe({"ZADD", "z", "INCR", "1", "m"}));
  CHECK_FALSE(safe({"INCR", "k"}));
  CHECK_FALSE(safe({"RPUSH", "l", "x"}));
  CHECK_FALSE(safe({"APPEND", "k", "x"}));
  CHECK_FALSE(safe({"XADD", "s", "1-1", "f", "v"}));
  CHECK_FALSE(safe({"RENAME", "a", "b"}));
}
