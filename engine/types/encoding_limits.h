// The sizes up to which hashes, sorted sets and sets keep their compact encodings (Redis's
// hash-max-listpack-*, zset-max-listpack-*, set-max-intset-entries) and the node layout of lists
// (list-max-listpack-size, list-compress-depth), settable at run time
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
};

// The limits in force (one set per process, as Redis's).
EncodingLimits& encoding_limits();

}  // namespace ringkv::engine
