// RDB files: every type in every encoding written and loaded back identical, whole or fed in
// chunks of any size, or streamed from a forked child through a pipe; the header, aux fields and
// CRC64 trailer; a file cut off anywhere or corrupted is refused with its offset; rdbchecksum no;
// what ringkv can't hold (other databases, modules, later versions); redis-check-rdb accepts the
// files.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "engine/keyspace/databases.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/crc64.h"
#include "engine/rdb/rdb_format.h"
#include "persistence/aof_loader.h"
#include "persistence/aof_rewrite.h"
#include "persistence/rdb_file.h"
#include "persistence/rdb_loader.h"
#include "persistence/rdb_writer.h"
#include "persistence/snapshot_stream.h"
#include "store_dump.h"
#include "store_fixture.h"

namespace {

using namespace ringkv::persistence;
using ringkv::engine::Databases;
using ringkv::engine::Expiry;
using ringkv::engine::Store;
using ringkv::test::dump_store;
using ringkv::test::fill;
using ringkv::test::unix_ms;

std::string rdb_of(Store& store, RdbSaveOptions options = {}) {
  options.now_ms = unix_ms();
  std::string out;
  size_t chunks = 0;
  REQUIRE(write_rdb(store, options, [&](std::string_view chunk) {
    out.append(chunk);
    ++chunks;
    return true;
  }));
  CHECK(chunks >= 1);
  return out;
}

// Loads `bytes` fed in chunks of `chunk` bytes; returns whether the RDB was whole.
bool load(std::string_view bytes, Store& into, size_t chunk, std::string* error = nullptr) {
  into.set_now(unix_ms());
  RdbLoader loader(store_consumer(into, true));
  for (size_t pos = 0; pos < bytes.size(); pos += chunk) {
    if (!loader.feed(bytes.substr(pos, chunk))) break;
  }
  const bool ok = loader.state() != RdbLoader::State::kFailed && loader.finish();
  if (error != nullptr) *error = loader.error();
  return ok;
}

uint64_t trailer(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 8; i-- > 0;) v = v << 8 | static_cast<uint8_t>(bytes[bytes.size() - 8 + i]);
  return v;
}

}  // namespace

TEST_CASE("every type in every encoding loads back identical, whole or in chunks") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  const std::string bytes = rdb_of(source);
  CHECK(bytes.substr(0, 9) == "REDIS0010");
  CHECK(bytes.find("redis-ver") != std::string::npos);
  CHECK(bytes.find("7.0.15") != std::string::npos);
  CHECK(static_cast<uint8_t>(bytes[bytes.size() - 9]) == 0xff);  // EOF, then the CRC64
  CHECK(trailer(bytes) ==
        ringkv::engine::crc64(0, std::string_view(bytes).substr(0, bytes.size() - 8)));
  for (size_t chunk : {bytes.size(), size_t{1}, size_t{7}, size_t{4096}}) {
    CAPTURE(chunk);
    Databases loaded_dbs(16);
    Store& loaded = loaded_dbs[0];
    REQUIRE(load(bytes, loaded, chunk));
    CHECK(dump_store(loaded) == dump_store(source));
  }
}

TEST_CASE("a file cut off anywhere is refused, naming the offset") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  const std::string bytes = rdb_of(source);
  for (size_t cut = 0; cut < bytes.size(); cut += cut < 64 ? 1 : 509) {
    CAPTURE(cut);
    Databases loaded_dbs(16);
    Store& loaded = loaded_dbs[0];
    std::string error;
    CHECK_FALSE(load(std::string_view(bytes).substr(0, cut), loaded, 8192, &error));
    CHECK(error.find("at offset") != std::string::npos);
  }
  // The last bytes: inside the checksum.
  Databases loaded_dbs(16);
  Store& loaded = loaded_dbs[0];
  std::string error;
  CHECK_FALSE(load(std::string_view(bytes).substr(0, bytes.size() - 3), loaded, 8192, &error));
  CHECK(error.find("unexpected end") != std::string::npos);
}

TEST_CASE("corruption is refused with its offset; a zero checksum is not checked") {
  Store source;
  source.set_now(unix_ms());
  source.set_string("k", std::string(300, 'x'), Expiry::none());
  source.set_string("n", "42", Expiry::none());
  std::string bytes = rdb_of(source);
  std::string bad = bytes;
  bad[bad.size() - 1] ^= 0x40;
  Store a;
  std::string error;
  CHECK_FALSE(load(bad, a, bad.size(), &error));
  CHECK(error == "wrong RDB checksum at offset " + std::to_string(bytes.size() - 8));

  // A value byte changed: the checksum (or the value's own checks) catches it.
  bad = bytes;
  bad[bytes.size() / 2] ^= 0x01;
  Store b;
  CHECK_FALSE(load(bad, b, 100, &error));
  CHECK(error.find("at offset") != std::string::npos);

  RdbSaveOptions no_checksum;
  no_checksum.checksum = false;
  const std::string unchecked = rdb_of(source, no_checksum);
  CHECK(trailer(unchecked) == 0);
  Store c;
  CHECK(load(unchecked, c, 3));
  CHECK(dump_store(c) == dump_store(source));
}

TEST_CASE("what ringkv can't hold is refused by name") {
  Store empty;
  std::string bytes = rdb_of(empty);
  std::string later = bytes;
  later[8] = '1';  // REDIS0011
  Store s;
  std::string error;
  CHECK_FALSE(load(later, s, later.size(), &error));
  CHECK(error == "can't handle RDB format version 11 at offset 0");
  CHECK_FALSE(load("REDXS0010", s, 9, &error));
  CHECK(error.find("wrong signature") != std::string::npos);

  // SELECTDB 1 with a key: ringkv has one database. Checksum off (zero) to keep it short.
  std::string db1 = "REDIS0010";
  db1 += '\xfe';
  db1 += '\x01';
  db1 += '\x00';  // string type
  db1 += "\x01k\x01v";
  db1 += '\xff';
  db1 += std::string(8, '\0');
  CHECK_FALSE(load(db1, s, db1.size(), &error));
  CHECK(error.find("in database 1") != std::string::npos);

  std::string module = "REDIS0010";
  module += '\x07';
  module += "\x01k";
  CHECK_FALSE(load(module, s, module.size(), &error));
  CHECK(error.find("module") != std::string::npos);
}

TEST_CASE("keys whose TTL passed are dropped when a file is loaded") {
  Store source;
  source.set_now(unix_ms());
  source.set_string("live", "1", Expiry::at(unix_ms() + 60'000));
  source.set_string("gone", "1", Expiry::none());
  source.set_loading(true);  // keeps the key while its TTL is set in the past
  source.set_expire("gone", unix_ms() - 1000);
  const std::string bytes = rdb_of(source);
  source.set_loading(false);
  Databases loaded_dbs(16);
  Store& loaded = loaded_dbs[0];
  REQUIRE(load(bytes, loaded, bytes.size()));
  CHECK(loaded.size() == 1);
  CHECK(loaded.peek("live") != nullptr);
}

TEST_CASE("save_rdb_file and load_rdb_file; redis-check-rdb accepts the file") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  ringkv::test::ScratchDir dir;
  RdbSaveOptions options;
  options.now_ms = unix_ms();
  RdbWriteStats stats;
  REQUIRE(save_rdb_file(source, options, dir.file("dump.rdb"), &stats).empty());
  CHECK(stats.keys == source.size());
  Databases loaded_dbs(16);
  Store& loaded = loaded_dbs[0];
  RdbFileResult r = load_rdb_file(dir.file("dump.rdb"), loaded_dbs);
  REQUIRE(r.status == RdbFileResult::Status::kOk);
  CHECK(r.keys == source.size());
  CHECK(dump_store(loaded) == dump_store(source));
  CHECK(load_rdb_file(dir.file("absent.rdb"), loaded_dbs).status ==
        RdbFileResult::Status::kMissing);

  if (std::system("command -v redis-check-rdb > /dev/null 2>&1") != 0) {
    MESSAGE("redis-check-rdb is not installed: skipped");
    return;
  }
  const std::string check = "redis-check-rdb " + dir.file("dump.rdb") + " > /dev/null 2>&1";
  CHECK(std::system(check.c_str()) == 0);
  // It does refuse a cut file, so the check above can fail.
  std::string bytes = rdb_of(source);
  const std::string cut = dir.write("cut.rdb", bytes.substr(0, bytes.size() / 2));
  CHECK(std::system(("redis-check-rdb " + cut + " > /dev/null 2>&1").c_str()) != 0);
}

TEST_CASE("an append-only file with an RDB preamble loads the keys, then the commands") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  ringkv::test::ScratchDir dir;
  RdbSaveOptions options;
  options.now_ms = unix_ms();
  const std::string path = dir.file("appendonly.aof");
  REQUIRE(write_snapshot(source, path, &options).empty());
  const std::string records =
      "*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n*2\r\n$3\r\nDEL\r\n$7\r\nstr:int\r\n";
  { std::ofstream(path, std::ios::binary | std::ios::app).write(records.data(), records.size()); }
  Databases loaded_dbs(16);
  Store& loaded = loaded_dbs[0];
  LoadResult r = load_aof(path, loaded_dbs);
  REQUIRE(r.status == LoadResult::Status::kOk);
  CHECK(r.preamble_keys == source.size());
  CHECK(r.commands == 2);
  source.set_string("after", "1", Expiry::none());
  source.erase("str:int");
  CHECK(dump_store(loaded) == dump_store(source));

  // A preamble cut short is corruption (the commands after it can't be trusted), with its offset.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  Databases cut_dbs(16);
  LoadResult bad = load_aof(dir.write("cut.aof", bytes.substr(0, bytes.size() / 3)), cut_dbs);
  CHECK(bad.status == LoadResult::Status::kCorrupt);
  CHECK(bad.error.find("RDB preamble") != std::string::npos);

  if (std::system("command -v redis-check-aof > /dev/null 2>&1") != 0) return;
  CHECK(std::system(("redis-check-aof " + path + " > /dev/null 2>&1").c_str()) == 0);
}

TEST_CASE("a snapshot streamed from a forked child, paused and resumed, loads back identical") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  for (int i = 0; i < 20000; ++i) {
    source.set_string("bulk:" + std::to_string(i), std::string(50, 'x'), Expiry::none());
  }
  const auto at_fork = dump_store(source);
  Store* const sources[] = {&source};
  uv_loop_t loop;
  uv_loop_init(&loop);
  RdbSaveOptions options;
  options.now_ms = unix_ms();
  std::string received;
  size_t chunks = 0;
  bool ended = false;
  bool ok = false;
  std::unique_ptr<SnapshotStream> stream;
  std::string error;
  stream = SnapshotStream::start(
      &loop, std::span<Store* const>(sources), options,
      [&](std::string_view chunk) {
        received.append(chunk);
        // Back-pressure: the child waits on the full pipe until the reader resumes.
        if (++chunks % 3 == 0) {
          stream->pause();
          stream->resume();
        }
      },
      [&](bool good, const std::string&) {
        ended = true;
        ok = good;
        stream.reset();
      },
      error);
  REQUIRE(stream != nullptr);
  // The store changes once the child has forked: the snapshot is of the fork's moment.
  source.set_string("str:int", "changed", Expiry::none());
  source.erase("bulk:7");
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(ended);
  CHECK(ok);
  CHECK(chunks > 1);
  uv_loop_close(&loop);
  Databases loaded_dbs(16);
  Store& loaded = loaded_dbs[0];
  REQUIRE(load(received, loaded, 65536));
  CHECK(dump_store(loaded) == at_fork);
  CHECK(dump_store(loaded) != dump_store(source));
}

TEST_CASE("IDLE and FREQ are written under LRU and LFU policies and loaded back") {
  Store source;
  source.set_now(unix_ms());
  fill(source);
  for (auto access : {RdbSaveOptions::Access::kLru, RdbSaveOptions::Access::kLfu}) {
    RdbSaveOptions options;
    options.access = access;
    const std::string bytes = rdb_of(source, options);
    // Each key gets an opcode and its value (at least 2 bytes) before its type.
    CHECK(bytes.size() >= rdb_of(source).size() + 2 * source.size());
    Databases loaded_dbs(16);
    Store& loaded = loaded_dbs[0];
    if (access == RdbSaveOptions::Access::kLfu) {
      loaded.set_access_policy(ringkv::engine::AccessPolicy{true, 10, 1});
    }
    REQUIRE(load(bytes, loaded, 1000));
    CHECK(dump_store(loaded) == dump_store(source));
  }
  CHECK(rdb_access_for_policy("allkeys-lru") == RdbSaveOptions::Access::kLru);
  CHECK(rdb_access_for_policy("volatile-lfu") == RdbSaveOptions::Access::kLfu);
  CHECK(rdb_access_for_policy("noeviction") == RdbSaveOptions::Access::kNone);
}

TEST_CASE("function libraries are written as FUNCTION2 records and read back in order") {
  Store store;
  fill(store);
  RdbSaveOptions options;
  options.functions = {"#!lua name=a\nredis.register_function('f', function() end)",
                       std::string("#!lua name=b\n-- \0 binary", 24)};
  const std::string bytes = rdb_of(store, options);
  CHECK(bytes.find('\xf5') != std::string::npos);
  for (size_t chunk : {bytes.size(), size_t{7}}) {
    Store into;
    into.set_now(unix_ms());
    RdbLoader loader(store_consumer(into, true));
    for (size_t pos = 0; pos < bytes.size(); pos += chunk) loader.feed(bytes.substr(pos, chunk));
    REQUIRE(loader.finish());
    CHECK(loader.functions() == options.functions);
    CHECK(dump_store(into) == dump_store(store));
  }
}

TEST_CASE("numbered databases are written after their SELECTDB and load back into theirs") {
  Databases source(16);
  source.set_now(unix_ms());
  source[0].set_string("k", "zero", Expiry::none());
  source[5].set_string("k", "five", Expiry::none());
  source[15].set_string("other", "fifteen", Expiry::none());
  std::string bytes;
  REQUIRE(write_rdb(source.all(), RdbSaveOptions{}, [&](std::string_view chunk) {
    bytes.append(chunk);
    return true;
  }));
  Databases loaded(16);
  loaded.set_now(unix_ms());
  RdbLoader loader(ringkv::persistence::databases_consumer(loaded, true));
  REQUIRE(loader.feed(bytes));
  REQUIRE(loader.finish());
  for (int db : {0, 5, 15}) CHECK(dump_store(loaded[db]) == dump_store(source[db]));
  CHECK(loaded.size() == 3);

  // Into a single store, a key of another database is refused (not merged into database 0).
  Store one;
  std::string error;
  CHECK_FALSE(load(bytes, one, bytes.size(), &error));
  CHECK(error.find("in database 5") != std::string::npos);
}
