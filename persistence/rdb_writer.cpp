// The RDB file writer (rdbSaveRio in Redis 7.0): see rdb_writer.h.
#include "persistence/rdb_writer.h"

#include "common/version.h"
#include "engine/keyspace/access.h"
#include "engine/keyspace/entry.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/crc64.h"
#include "engine/rdb/rdb_format.h"
#include "engine/rdb/rdb_value.h"
#include "persistence/rdb_opcodes.h"

namespace ringkv::persistence {
namespace {

namespace rdb = engine::rdb;

// The Redis version whose files ringkv writes (redis-ver): tools and redis-server check it.

void aux(std::string& out, std::string_view key, std::string_view value) {
  out.push_back(static_cast<char>(kOpcodeAux));
  rdb::write_string(out, key);
  rdb::write_string(out, value);
}

void aux(std::string& out, std::string_view key, int64_t value) {
  aux(out, key, std::to_string(value));
}

void put_le64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Accumulates the stream, hands it to the sink in chunks and keeps the running CRC64.
class ChunkedOutput {
 public:
  ChunkedOutput(const RdbSink& sink, bool checksum) : sink_(sink), checksum_(checksum) {
    buf_.reserve(kRdbChunkBytes + kRdbChunkBytes / 4);
  }
  std::string& buf() { return buf_; }
  // Hands the buffer over once it holds a chunk (or always, with `force`).
  bool maybe_flush(bool force = false) {
    if (!ok_ || (!force && buf_.size() < kRdbChunkBytes) || buf_.empty()) return ok_;
    if (checksum_) crc_ = engine::crc64(crc_, buf_);
    bytes_ += buf_.size();
    ok_ = sink_(buf_);
    buf_.clear();
    return ok_;
  }
  uint64_t crc() const { return crc_; }
  uint64_t bytes() const { return bytes_ + buf_.size(); }
  bool ok() const { return ok_; }

 private:
  const RdbSink& sink_;
  const bool checksum_;
  std::string buf_;
  uint64_t crc_ = 0;
  uint64_t bytes_ = 0;
  bool ok_ = true;
};

}  // namespace

RdbSaveOptions::Access rdb_access_for_policy(std::string_view policy) {
  if (policy == "allkeys-lru" || policy == "volatile-lru") return RdbSaveOptions::Access::kLru;
  if (policy == "allkeys-lfu" || policy == "volatile-lfu") return RdbSaveOptions::Access::kLfu;
  return RdbSaveOptions::Access::kNone;
}

bool write_rdb(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
               const RdbSink& sink, RdbWriteStats* stats) {
  ChunkedOutput out(sink, options.checksum);
  std::string& buf = out.buf();
  buf.append("REDIS0010");
  aux(buf, "redis-ver", common::kRedisVersion);
  aux(buf, "redis-bits", 64);
  aux(buf, "ctime", options.now_ms / 1000);
  aux(buf, "used-mem", static_cast<int64_t>(options.used_mem));
  if (!options.repl_id.empty()) {
    aux(buf, "repl-stream-db", 0);
    aux(buf, "repl-id", options.repl_id);
    aux(buf, "repl-offset", options.repl_offset);
  }
  aux(buf, "aof-base", options.aof_preamble ? 1 : 0);
  for (const std::string& code : options.functions) {
    buf.push_back(static_cast<char>(kOpcodeFunction2));
    rdb::write_string(buf, code);
  }

  uint64_t keys = 0;
  for (size_t db = 0; db < dbs.size(); ++db) {
    engine::Store& store = *dbs[db];
    const size_t size = store.size();
    if (size == 0) continue;
    buf.push_back(static_cast<char>(kOpcodeSelectDb));
    rdb::write_len(buf, db);
    // Sizes are hints for the loader's tables (Redis caps them at 32 bits).
    buf.push_back(static_cast<char>(kOpcodeResizeDb));
    rdb::write_len(buf, std::min<uint64_t>(size, UINT32_MAX));
    rdb::write_len(buf, std::min<uint64_t>(store.volatile_size(), UINT32_MAX));
    const uint32_t lru_now = engine::lru_clock_at(options.now_ms);
    const int64_t decay = store.access_policy().decay_time;
    store.for_each([&](const engine::Entry& e) {
      if (!out.ok()) return;
      if (e.has_expire()) {
        buf.push_back(static_cast<char>(kOpcodeExpireTimeMs));
        put_le64(buf, static_cast<uint64_t>(e.expire_at()));
      }
      if (options.access == RdbSaveOptions::Access::kLru) {
        buf.push_back(static_cast<char>(kOpcodeIdle));
        rdb::write_len(buf, static_cast<uint64_t>(engine::lru_idle_seconds(lru_now, e.lru())));
      } else if (options.access == RdbSaveOptions::Access::kLfu) {
        buf.push_back(static_cast<char>(kOpcodeFreq));
        buf.push_back(
            static_cast<char>(engine::lfu_decayed_counter(e.lru(), options.now_ms, decay)));
      }
      engine::encode_key_value(e, buf);
      ++keys;
      // Counted as written so far (a child's progress reports read it as chunks go out).
      if (stats != nullptr) stats->keys = keys;
      out.maybe_flush();
    });
  }
  buf.push_back(static_cast<char>(kOpcodeEof));
  // The trailer covers everything before it, EOF included.
  if (!out.maybe_flush(true)) return false;
  put_le64(buf, options.checksum ? out.crc() : 0);
  const uint64_t total = out.bytes();
  if (!sink(buf)) return false;
  if (stats != nullptr) *stats = RdbWriteStats{keys, total};
  return true;
}

}  // namespace ringkv::persistence
