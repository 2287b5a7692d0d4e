// Eviction: keeps the store under maxmemory by deleting keys chosen by a maxmemory-policy,
// approximated by sampling as Redis does. Each round samples maxmemory-samples keys (all keys,
// or only keys with a TTL for the volatile-* policies), scores them (idle time for LRU, low
// access frequency for LFU, nearness of expiry for volatile-ttl) and keeps the 16 best
// candidates seen so far in a pool that persists across rounds, so eviction improves on a
// single sample; the best candidate that still exists goes first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"

namespace ringkv::engine {

enum class EvictionPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kVolatileLru,
  kAllKeysLfu,
  kVolatileLfu,
  kAllKeysRandom,
  kVolatileRandom,
  kVolatileTtl,
};

// The policy named as maxmemory-policy spells it (conf/options.h); nullopt for an unknown name.
std::optional<EvictionPolicy> parse_eviction_policy(std::string_view name);
// LFU policies keep access counters in the entries' access bits instead of the LRU clock.
bool is_lfu(EvictionPolicy policy);
// volatile-* policies only ever evict keys with a TTL.
bool is_volatile(EvictionPolicy policy);

// The best eviction candidates seen so far, ordered by score (higher = evict first).
class EvictionPool {
 public:
  static constexpr size_t kCapacity = 16;  // Redis's EVPOOL_SIZE

  struct Candidate {
    uint64_t score;
    std::string key;
    int db = 0;  // the database of the key (Redis pools candidates of every database)
  };

  // Keeps `key` if the pool has room or it scores above the worst candidate (which then leaves).
  // A key already in the pool takes the new score.
  void offer(uint64_t score, std::string_view key, int db = 0);
  // Removes and returns the best candidate; nullopt when empty.
  std::optional<Candidate> pop_best();
  size_t size() const { return candidates_.size(); }
  void clear() { candidates_.clear(); }

 private:
  std::vector<Candidate> candidates_;  // ascending by score
};

// What eviction aims for.
struct EvictionLimits {
  size_t maxmemory = 0;  // 0 = no limit
  EvictionPolicy policy = EvictionPolicy::kNoEviction;
  size_t samples = 5;
};

class Evictor {
 public:
  // Evicts keys until store.used_memory() is at most the limit (Redis's performEvictions).
  // Returns false when it is still over: the policy is noeviction or no key may be evicted.
  bool enforce(Store& store, const EvictionLimits& limits);
  // The same over several databases: their used_memory() together, keys taken from any.
  bool enforce(std::span<Store* const> stores, const EvictionLimits& limits);

  // A policy change invalidates the scores in the pool.
  void reset() { pool_.clear(); }
  // Only keys `evictable` accepts are evicted (a node with replicas evicts the keys it is the
  // primary of; its replicas drop their copies as its stream tells them). Null: any key.
  void set_filter(std::function<bool(std::string_view key)> evictable) {
    evictable_ = std::move(evictable);
    pool_.clear();
  }

 private:
  // Sampling rounds in a row that find nothing evictable before eviction gives up (the keys
  // held are nearly all copies: writes are then refused for memory, as with noeviction).
  static constexpr int kMaxBarrenRounds = 16;

  bool evictable(std::string_view key) const { return !evictable_ || evictable_(key); }
  // Evicts one key; false when none may go.
  bool evict_one(std::span<Store* const> stores, const EvictionLimits& limits);
  // Samples keys of every database into the pool; false when every database was empty. Counts
  // the keys offered in `offered`.
  bool populate(std::span<Store* const> stores, const EvictionLimits& limits, size_t& offered);

  size_t random_db_ = 0;  // where random eviction looks next (databases in turn, as Redis)

  EvictionPool pool_;
  std::function<bool(std::string_view key)> evictable_;
};

// The score of an entry under `policy` at the store's current time: higher goes first.
uint64_t eviction_score(const Store& store, const Entry& entry, EvictionPolicy policy);

}  // namespace ringkv::engine
