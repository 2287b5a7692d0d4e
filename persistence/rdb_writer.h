// Writing a store as an RDB file, version 10, as redis-server 7.0.15 writes it: the magic, the
// aux fields (redis-ver, redis-bits, ctime, used-mem, the replication fields when given,
// aof-base), SELECTDB 0 and RESIZEDB, each key with its EXPIRETIME_MS (and IDLE or FREQ under an
// LRU or LFU maxmemory policy), EOF and the CRC64 of everything before it (zero when checksums
// are off). Values are engine/rdb's encoding, the one DUMP uses.
//
// This is the snapshot writer for BGSAVE, SAVE, SYNC/PSYNC, the append-only file's preamble and
// full resyncs: it hands the stream to a sink in chunks of about kRdbChunkBytes, so whoever
// consumes it (a file, a pipe to the event loop, a socket) holds a bounded amount of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

inline constexpr size_t kRdbChunkBytes = 1 << 20;

struct RdbSaveOptions {
  bool checksum = true;       // rdbchecksum: the CRC64 trailer (else 8 zero bytes)
  bool aof_preamble = false;  // aof-base 1: the base of an append-only file
  // The key access information Redis saves with its maxmemory policy: IDLE seconds under an LRU
  // policy, the FREQ counter under an LFU one.
  enum class Access { kNone, kLru, kLfu } access = Access::kNone;
  int64_t now_ms = 0;     // ctime, and the clock idle times are measured against
  uint64_t used_mem = 0;  // used-mem
  // repl-stream-db, repl-id and repl-offset, written when repl_id is not empty (a snapshot for a
  // replica).
  std::string repl_id;
  int64_t repl_offset = 0;
  // The function libraries' code, written as FUNCTION2 records after the aux fields.
  std::vector<std::string> functions;
};

// Receives the stream in order; returns false to stop the writing (an I/O error).
using RdbSink = std::function<bool(std::string_view chunk)>;

struct RdbWriteStats {
  uint64_t keys = 0;
  uint64_t bytes = 0;
};

// Writes every live key of the databases `dbs` (by number, each after its SELECTDB) as a
// complete RDB stream into `sink`. The store must not
// change meanwhile (a forked child's frozen copy, or a store nothing else touches). Returns false
// when the sink refused a chunk. `stats` counts the keys written so far as it goes (the sink may
// read it), and holds the totals at the end.
bool write_rdb(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
               const RdbSink& sink, RdbWriteStats* stats = nullptr);
// The same for one store, written as database 0.
inline bool write_rdb(engine::Store& store, const RdbSaveOptions& options, const RdbSink& sink,
                      RdbWriteStats* stats = nullptr) {
  engine::Store* const one[] = {&store};
  return write_rdb(one, options, sink, stats);
}

// The maxmemory policy's access information (see RdbSaveOptions::access).
RdbSaveOptions::Access rdb_access_for_policy(std::string_view maxmemory_policy);

}  // namespace ringkv::persistence
