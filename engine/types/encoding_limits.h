// The sizes up to which hashes, sorted sets, sets and HyperLogLogs keep their compact encodings
// (Redis's hash-max-listpack-*, zset-max-listpack-*, set-max-intset-entries,
// hll-sparse-max-bytes) and the node layout of lists (list-max-listpack-size,
// list-compress-depth) and streams (stream-node-max-bytes, -entries), settable at run time
// (CONFIG SET) like Redis's server-wide settings: a key converts when a write takes it past the
// limits in force then; lowering a limit converts nothing by itself.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringkv::engine {

struct EncodingLimits {
  size_t hash_max_listpack_entries = 512;  // Redis 7.0.15's defaults
  size_t hash_max_listpack_value = 64;
  size_t zset_max_listpack_entries = 128;
  size_t zset_max_listpack_value = 64;
  size_t set_max_intset_entries = 512;
  // A list takes these two when it is created and keeps them (as Redis's quicklist does).
  int list_max_listpack_size = -2;
  int list_compress_depth = 0;
  // A HyperLogLog's sparse form turns dense past this many bytes (PFADD, PFMERGE).
  size_t hll_sparse_max_bytes = 3000;
  // A stream's last node takes no more entries once its listpack would reach this many bytes
  // (0: 1 GB) or it holds this many entries, deleted ones included (0: no limit); approximate
  // trimming (MAXLEN ~) removes at most 100 nodes' worth by default.
  size_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
};

// The limits in force (one set per process, as Redis's).
EncodingLimits& encoding_limits();

}  // namespace ringkv::engine
