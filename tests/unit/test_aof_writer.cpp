// The append-only file's writer and rewrite: records as RESP requests, one write per flush,
// failed writes kept for a retry without leaving a partial record, switching to a rewritten file,
// installing a rewrite (snapshot + tail, renamed over the old file), a forked rewrite of a store
// that loads back identical, and MULTI/EXEC framing of a transaction's records.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "conf/options.h"
#include "engine/keyspace/store.h"
#include "persistence/aof.h"
#include "persistence/aof_loader.h"
#include "persistence/aof_rewrite.h"
#include "persistence/aof_writer.h"
#include "persistence/child_info.h"
#include "store_dump.h"

namespace {

using ringkv::persistence::AofWriter;
using ringkv::persistence::FsyncPolicy;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string set_record(std::string_view key, std::string_view value) {
  return "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + std::string(key) + "\r\n$" +
         std::to_string(value.size()) + "\r\n" + std::string(value) + "\r\n";
}

void append_set(AofWriter& w, std::string_view key, std::string_view value) {
  const std::string_view argv[] = {"SET", key, value};
  w.append(argv);
}

}  // namespace

TEST_CASE("records are buffered until flush writes them all at once") {
  ringkv::test::ScratchDir dir;
  for (FsyncPolicy policy : {FsyncPolicy::kAlways, FsyncPolicy::kEverysec, FsyncPolicy::kNo}) {
    const std::string path = dir.file("a.aof");
    std::filesystem::remove(path);
    AofWriter w;
    REQUIRE(w.open(path).empty());
    w.set_policy(policy);
    append_set(w, "k", "v");
    w.append(std::vector<std::string>{"DEL", "k"});
    CHECK(w.has_pending());
    CHECK(read_file(path).empty());
    CHECK(w.flush(1000));
    CHECK_FALSE(w.has_pending());
    const std::string want = set_record("k", "v") + "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";
    CHECK(read_file(path) == want);
    CHECK(w.current_size() == want.size());
    CHECK(w.last_write_ok());
  }
}

TEST_CASE("opening an existing file appends to it") {
  ringkv::test::ScratchDir dir;
  const std::string path = dir.write("a.aof", set_record("old", "1"));
  AofWriter w;
  REQUIRE(w.open(path).empty());
  CHECK(w.current_size() == set_record("old", "1").size());
  append_set(w, "new", "2");
  w.close();
  CHECK(read_file(path) == set_record("old", "1") + set_record("new", "2"));
}

TEST_CASE("a failed write keeps the records for the next try") {
  AofWriter w;
  REQUIRE(w.open("/dev/full").empty());
  w.set_policy(FsyncPolicy::kEverysec);
  append_set(w, "k", "v");
  CHECK_FALSE(w.flush(1000));
  CHECK_FALSE(w.last_write_ok());
  CHECK(w.has_pending());
  CHECK(w.buffer_length() == set_record("k", "v").size());
}

TEST_CASE("the parse of appendfsync names") {
  CHECK(ringkv::persistence::parse_fsync_policy("always") == FsyncPolicy::kAlways);
  CHECK(ringkv::persistence::parse_fsync_policy("everysec") == FsyncPolicy::kEverysec);
  CHECK(ringkv::persistence::parse_fsync_policy("no") == FsyncPolicy::kNo);
}

TEST_CASE("while a rewrite commits, records go to both files; then the new file takes over") {
  ringkv::test::ScratchDir dir;
  const std::string path = dir.file("a.aof");
  AofWriter w;
  REQUIRE(w.open(path).empty());
  w.set_policy(FsyncPolicy::kAlways);
  append_set(w, "before", "1");
  REQUIRE(w.flush(0));
  const std::string temp = dir.write("temp.aof", set_record("base", "1"));
  std::string error;
  const std::string tail = set_record("before", "1");
  int fd = ringkv::persistence::open_rewritten(temp, tail, error);
  REQUIRE(fd >= 0);
  w.set_mirror(fd);
  append_set(w, "during", "2");
  REQUIRE(w.flush(0));
  CHECK(read_file(path) == set_record("before", "1") + set_record("during", "2"));
  CHECK(ringkv::persistence::commit_rewrite(fd, temp, path).empty());
  CHECK_FALSE(std::filesystem::exists(temp));
  w.promote_mirror(path);
  CHECK_FALSE(w.has_mirror());
  append_set(w, "after", "3");
  w.close();
  CHECK(read_file(path) ==
        set_record("base", "1") + tail + set_record("during", "2") + set_record("after", "3"));
}

TEST_CASE("a missing temporary file cannot be opened for the rewrite") {
  ringkv::test::ScratchDir dir;
  std::string error;
  CHECK(ringkv::persistence::open_rewritten(dir.file("missing.aof"), "", error) < 0);
  CHECK_FALSE(error.empty());
}

TEST_CASE("a forked rewrite child writes a file that loads back the same store") {
  ringkv::test::ScratchDir dir;
  ringkv::engine::Databases store_dbs(16);
  ringkv::engine::Store& store = store_dbs[0];
  const std::string seed = set_record("s", "text") +
                           "*5\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\na\r\n$1\r\n"
                           "b\r\n$1\r\nc\r\n*4\r\n$4\r\nSADD\r\n$2\r\nst\r\n$1\r\nx\r\n$1\r\ny\r\n"
                           "*4\r\n$4\r\nZADD\r\n$1\r\nz\r\n$3\r\n1.5\r\n$1\r\nm\r\n*4\r\n$4\r\nHSET"
                           "\r\n$1\r\nh\r\n$1\r\nf\r\n$1\r\nv\r\n*3\r\n$9\r\nPEXPIREAT\r\n$1\r\ns"
                           "\r\n$14\r\n99999999999999\r\n";
  REQUIRE(ringkv::persistence::load_aof(dir.write("seed.aof", seed), store_dbs).status ==
          ringkv::persistence::LoadResult::Status::kOk);
  for (int i = 0; i < 5000; ++i) {
    store.set_string("n" + std::to_string(i), std::to_string(i), ringkv::engine::Expiry::none());
  }
  pid_t pid = ringkv::persistence::fork_rewrite_child(store_dbs.all(), dir.file(""));
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const std::string temp = ringkv::persistence::temp_rewrite_path(dir.file(""), pid);
  ringkv::engine::Databases loaded_dbs(16);
  ringkv::engine::Store& loaded = loaded_dbs[0];
  auto r = ringkv::persistence::load_aof(temp, loaded_dbs);
  CHECK(r.status == ringkv::persistence::LoadResult::Status::kOk);
  CHECK(ringkv::test::dump_store(loaded) == ringkv::test::dump_store(store));
}

TEST_CASE("a rewrite child reports its progress and what it copied on write") {
  ringkv::test::ScratchDir dir;
  ringkv::engine::Databases store_dbs(16);
  ringkv::engine::Store& store = store_dbs[0];
  for (int i = 0; i < 3000; ++i) {
    store.set_string("n" + std::to_string(i), std::string(100, 'x'),
                     ringkv::engine::Expiry::none());
  }
  ringkv::persistence::ChildInfo info;
  const int fd = info.open(store_dbs.size());
  REQUIRE(fd >= 0);
  pid_t pid =
      ringkv::persistence::fork_rewrite_child(store_dbs.all(), dir.file(""), nullptr, {}, fd);
  REQUIRE(pid > 0);
  info.forked();
  CHECK(info.running());
  CHECK(info.figures(0).keys_total == 3000);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WEXITSTATUS(status) == 0);
  info.poll();
  // Its last report: every key written.
  const ringkv::persistence::ChildFigures done = info.figures(0);
  CHECK(done.keys_processed == 3000);
  CHECK(done.fork_perc == doctest::Approx(100.0));
  info.finish();
  CHECK(!info.running());
  CHECK(info.figures(0).keys_total == 0);
  // Nothing written meanwhile, but the child's own stack and buffers are private.
  CHECK(info.last_cow_size() > 0);
  unlink(ringkv::persistence::temp_rewrite_path(dir.file(""), pid).c_str());
}

TEST_CASE("a transaction's records are wrapped in MULTI/EXEC only when it wrote") {
  ringkv::test::ScratchDir dir;
  ringkv::engine::Databases store_dbs(16);
  ringkv::conf::PersistenceOptions options;
  options.appendonly = true;
  options.dir = dir.file("");
  ringkv::persistence::AppendOnlyFile aof(store_dbs, options);
  REQUIRE(aof.load_and_open());
  CHECK(aof.wants_records());
  aof.begin_transaction();
  aof.end_transaction();
  aof.begin_transaction();
  const std::string_view set[] = {"SET", "k", "v"};
  aof.feed(set);
  aof.end_transaction();
  aof.feed(std::vector<std::string>{"SET", "k", "v"});
  CHECK(aof.has_pending());
  aof.flush_before_replies(0);
  CHECK_FALSE(aof.has_pending());
  CHECK(read_file(dir.file("appendonly.aof")) == "*1\r\n$5\r\nMULTI\r\n" + set_record("k", "v") +
                                                     "*1\r\n$4\r\nEXEC\r\n" + set_record("k", "v"));
  CHECK(aof.info(0).enabled);
}
