// HyperLogLog commands as pure operations on the Store (no RESP): PFADD, PFCOUNT, PFMERGE and
// the key handling of PFDEBUG, with Redis 7.0.15's lookups, checks and side effects (a sketch
// that is read or written becomes "raw"; a single-key PFCOUNT stores the estimate it computed in
// the sketch's header). Sketches are strings in Redis's format (hyperloglog.h); handlers are in
// cmd_hyperloglog.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/keyspace/store.h"
#include "engine/result.h"
#include "engine/types/hyperloglog.h"

namespace ringkv::engine {

// PFADD: adds the elements to the sketch at `key`, creating it when absent. Returns whether the
// key was created or a register changed. Errors: kWrongType (not a string), kNotHll (a string
// that is not a sketch), kInvalidHll (corrupt sparse opcodes, found after the elements before
// may have been added, as in Redis). `modified` tells whether the stored value changed, error
// or not.
Result<bool> pf_add(Store& store, std::string_view key, std::span<const std::string_view> elements,
                    bool& modified, size_t sparse_max_bytes = hll::kDefaultSparseMaxBytes);

// PFCOUNT: the estimated cardinality of one sketch (0 when absent), or of the union of several.
// For one key a stale cached estimate is recomputed and stored, and `changed` is set (Redis
// propagates that write). Errors: kWrongType, kNotHll, kInvalidHll.
Result<int64_t> pf_count(Store& store, std::span<const std::string_view> keys, bool& changed);

// PFMERGE: merges the sketches at `keys` (keys[0], the destination, included) into keys[0],
// creating it when absent; the destination turns dense when any input is dense.
// Errors: kWrongType, kNotHll, kInvalidHll.
Result<bool> pf_merge(Store& store, std::span<const std::string_view> keys,
                      size_t sparse_max_bytes = hll::kDefaultSparseMaxBytes);

// PFDEBUG's lookup: the sketch at `key`, made raw. Errors: kHllKeyMissing, kWrongType, kNotHll.
Result<std::string_view> pf_debug_lookup(Store& store, std::string_view key);

// PFDEBUG TODENSE / GETREG: converts the sketch at `key` (which pf_debug_lookup accepted) to
// dense. Returns whether it was sparse. Error: kInvalidHll.
Result<bool> pf_to_dense(Store& store, std::string_view key);

}  // namespace ringkv::engine
