// The append-only file loader: whole files, files cut off anywhere in the last record or inside a
// MULTI block, corruption in the middle (named by offset), unknown commands, and the rule that
// nothing expires while loading.
#include <doctest/doctest.h>

#include <chrono>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/databases.h"
#include "engine/keyspace/store.h"
#include "persistence/aof_loader.h"
#include "protocol/request_writer.h"
#include "store_dump.h"

namespace {

using ringkv::engine::Databases;
using ringkv::engine::Store;
using ringkv::persistence::load_aof;
using ringkv::persistence::LoadResult;
using Status = LoadResult::Status;

std::string request(std::initializer_list<std::string_view> argv) {
  std::string out;
  ringkv::protocol::append_request(out, std::vector<std::string_view>(argv));
  return out;
}

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string get(Store& store, std::string_view key) {
  const auto* e = store.lookup(key);
  return e == nullptr ? "(nil)" : std::string(e->string_value());
}

// A few records of different types, then a MULTI block.
std::string sample_prefix() {
  return request({"SET", "a", "1"}) + request({"rpush", "l", "x", "y", "z"}) +
         request({"HSET", "h", "f", "v"}) + request({"SELECT", "0"}) + request({"MULTI"}) +
         request({"INCR", "a"}) + request({"SADD", "s", "m"}) + request({"EXEC"});
}

}  // namespace

TEST_CASE("a whole file is replayed and every byte of it is valid") {
  ringkv::test::ScratchDir dir;
  const std::string bytes = sample_prefix() + request({"PEXPIREAT", "a", "99999999999999"});
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult r = load_aof(dir.write("whole.aof", bytes), store_dbs);
  CHECK(r.status == Status::kOk);
  CHECK(r.error.empty());
  CHECK(r.valid_bytes == bytes.size());
  CHECK(r.file_bytes == bytes.size());
  CHECK(r.commands == 7);
  CHECK(get(store, "a") == "2");
  CHECK(store.lookup("a")->expire_at() == 99999999999999);
  CHECK(store.size() == 4);
  CHECK_FALSE(store.loading());
}

TEST_CASE("a missing file and an empty file load nothing and are fine") {
  ringkv::test::ScratchDir dir;
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult missing = load_aof(dir.file("absent.aof"), store_dbs);
  CHECK(missing.status == Status::kOk);
  CHECK(missing.commands == 0);
  LoadResult empty = load_aof(dir.write("empty.aof", ""), store_dbs);
  CHECK(empty.status == Status::kOk);
  CHECK(empty.valid_bytes == 0);
  CHECK(store.size() == 0);
}

TEST_CASE("a file cut anywhere inside its last record is truncated after the whole records") {
  ringkv::test::ScratchDir dir;
  const std::string prefix = sample_prefix();
  const std::string last = request({"SET", "last", "value"});
  for (size_t cut = 1; cut < last.size(); ++cut) {
    CAPTURE(cut);
    Databases store_dbs(16);
    Store& store = store_dbs[0];
    LoadResult r = load_aof(dir.write("cut.aof", prefix + last.substr(0, cut)), store_dbs);
    CHECK(r.status == Status::kTruncated);
    CHECK(r.valid_bytes == prefix.size());
    CHECK(r.error.find("offset " + std::to_string(prefix.size())) != std::string::npos);
    CHECK(get(store, "a") == "2");
    CHECK(get(store, "last") == "(nil)");
  }
}

TEST_CASE("a MULTI block without EXEC at the end is not applied and truncates at its MULTI") {
  ringkv::test::ScratchDir dir;
  const std::string prefix = request({"SET", "a", "1"});
  const std::string block =
      request({"MULTI"}) + request({"SET", "b", "2"}) + request({"INCR", "a"}) + request({"EXEC"});
  // Every cut inside the block, its EXEC record included, leaves the block out.
  for (size_t cut = 1; cut < block.size(); ++cut) {
    CAPTURE(cut);
    Databases store_dbs(16);
    Store& store = store_dbs[0];
    LoadResult r = load_aof(dir.write("multi.aof", prefix + block.substr(0, cut)), store_dbs);
    CHECK(r.status == Status::kTruncated);
    CHECK(r.valid_bytes == prefix.size());
    CHECK(get(store, "a") == "1");
    CHECK(get(store, "b") == "(nil)");
  }
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult whole = load_aof(dir.write("multi.aof", prefix + block), store_dbs);
  CHECK(whole.status == Status::kOk);
  CHECK(get(store, "a") == "2");
  CHECK(get(store, "b") == "2");
}

TEST_CASE("corruption in the middle stops loading at its offset") {
  ringkv::test::ScratchDir dir;
  const std::string prefix = sample_prefix();
  const std::string after = request({"SET", "after", "1"});
  const std::string offset = "offset " + std::to_string(prefix.size());
  for (std::string_view garbage :
       {std::string_view("garbage\r\n"), std::string_view("SET x 1\r\n"),
        std::string_view("*2\r\n$3\r\nGET\r\n$x\r\n"), std::string_view("*1\r\n:1\r\n"),
        std::string_view("*0\r\n"), std::string_view("*-1\r\n")}) {
    CAPTURE(garbage);
    Databases store_dbs(16);
    Store& store = store_dbs[0];
    LoadResult r = load_aof(dir.write("bad.aof", prefix + std::string(garbage) + after), store_dbs);
    CHECK(r.status == Status::kCorrupt);
    CHECK(r.valid_bytes == prefix.size());
    CHECK(r.error.find(offset) != std::string::npos);
    CHECK(get(store, "a") == "2");
    CHECK(get(store, "after") == "(nil)");
  }
}

TEST_CASE("an unknown command or a wrong arity is corruption; a failing command is not") {
  ringkv::test::ScratchDir dir;
  const std::string prefix = request({"SET", "a", "1"});
  for (const std::string& bad :
       {request({"NOSUCHCMD", "a"}), request({"GET"}), request({"CONFIG", "NOSUCH"})}) {
    CAPTURE(bad);
    Databases store_dbs(16);
    Store& store = store_dbs[0];
    LoadResult r =
        load_aof(dir.write("bad.aof", prefix + bad + request({"SET", "b", "1"})), store_dbs);
    CHECK(r.status == Status::kCorrupt);
    CHECK(r.valid_bytes == prefix.size());
    CHECK(r.error.find("offset " + std::to_string(prefix.size())) != std::string::npos);
    CHECK(get(store, "b") == "(nil)");
  }
  // A command that runs and answers an error (wrong type) changes nothing and loading goes on,
  // as in Redis.
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult r = load_aof(
      dir.write("err.aof", prefix + request({"LPUSH", "a", "x"}) + request({"SET", "b", "1"})),
      store_dbs);
  CHECK(r.status == Status::kOk);
  CHECK(get(store, "b") == "1");
}

TEST_CASE("nothing expires while loading: a passed TTL still holds for later records") {
  ringkv::test::ScratchDir dir;
  const std::string past = std::to_string(unix_ms() - 60'000);
  const std::string future = std::to_string(unix_ms() + 3'600'000);
  const std::string bytes = request({"SET", "k", "v", "PXAT", past}) +
                            request({"APPEND", "k", "w"}) + request({"PEXPIREAT", "k", future}) +
                            request({"SET", "gone", "v", "PXAT", past}) +
                            request({"APPEND", "gone", "w"});
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult r = load_aof(dir.write("ttl.aof", bytes), store_dbs);
  CHECK(r.status == Status::kOk);
  CHECK(get(store, "k") == "vw");
  CHECK(std::to_string(store.lookup("k")->expire_at()) == future);
  // Once loading is over, a key whose TTL passed is gone.
  CHECK(get(store, "gone") == "(nil)");
}

TEST_CASE("a record larger than the read chunk is loaded whole") {
  ringkv::test::ScratchDir dir;
  const std::string big(9u << 20, 'x');
  const std::string bytes =
      request({"SET", "a", "1"}) + request({"SET", "big", big}) + request({"RPUSH", "l", big, "y"});
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult r = load_aof(dir.write("big.aof", bytes), store_dbs);
  CHECK(r.status == Status::kOk);
  CHECK(r.valid_bytes == bytes.size());
  CHECK(get(store, "big") == big);
  CHECK(store.size() == 3);
}

TEST_CASE("PFCOUNT is replayed: the estimate it cached is part of the sketch's bytes") {
  ringkv::test::ScratchDir dir;
  const std::string bytes = request({"PFADD", "h", "a", "b", "c"}) + request({"PFCOUNT", "h"});
  Databases store_dbs(16);
  Store& store = store_dbs[0];
  LoadResult r = load_aof(dir.write("pf.aof", bytes), store_dbs);
  CHECK(r.status == Status::kOk);
  CHECK(get(store, "h").substr(8, 8) == std::string("\x03\0\0\0\0\0\0\0", 8));
}

TEST_CASE("SELECT sends the records after it to that database, also inside MULTI") {
  ringkv::test::ScratchDir dir;
  const std::string bytes =
      request({"SET", "a", "0"}) + request({"SELECT", "3"}) + request({"SET", "a", "3"}) +
      request({"MULTI"}) + request({"SET", "b", "3"}) + request({"SELECT", "15"}) +
      request({"SET", "b", "15"}) + request({"EXEC"}) + request({"SET", "c", "15"});
  Databases dbs(16);
  LoadResult r = load_aof(dir.write("select.aof", bytes), dbs);
  CHECK(r.status == Status::kOk);
  CHECK(get(dbs[0], "a") == "0");
  CHECK(get(dbs[3], "a") == "3");
  CHECK(get(dbs[3], "b") == "3");
  CHECK(get(dbs[15], "b") == "15");
  CHECK(get(dbs[15], "c") == "15");
  CHECK(dbs.size() == 5);

  // A database this server does not have: refused, not loaded into another one.
  const std::string beyond =
      request({"SET", "a", "0"}) + request({"SELECT", "16"}) + request({"SET", "a", "16"});
  Databases small(16);
  LoadResult bad = load_aof(dir.write("beyond.aof", beyond), small);
  CHECK(bad.status == Status::kCorrupt);
  CHECK(bad.error.find("SELECT of a database") != std::string::npos);
  CHECK(get(small[0], "a") == "0");
}
