// SYNC and PSYNC for tools (`redis-cli --rdb FILE`, backup tools): the node answers with an RDB
// snapshot of its own keys, as a Redis master answers a full resync. With `REPLCONF capa eof`
// the snapshot streams as it is written (`$EOF:<40-byte mark>`, the RDB, the mark); without it
// the node collects it first and sends it with its length (`$<len>`). PSYNC's answer starts with
// `+FULLRESYNC <replid> 0`. The link closes after the snapshot: ringkv sends no command stream,
// so a redis-server that asks to replicate (REPLCONF listening-port, as REPLICAOF does) is
// refused rather than left with a snapshot that silently goes stale.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "persistence/snapshot_stream.h"

namespace ringkv::server {

// One snapshot on its way to one client.
struct SyncTransfer {
  uint64_t client_id = 0;
  std::unique_ptr<persistence::SnapshotStream> stream;
  bool eof_mark = false;  // streamed between two marks, else sent with its length at the end
  std::string mark;       // the 40 random characters around an EOF-marked snapshot
  std::string collected;  // without capa eof: the snapshot until it is complete
};

}  // namespace ringkv::server
