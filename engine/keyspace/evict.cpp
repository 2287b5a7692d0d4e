// Eviction by sampling into a pool of the best candidates (see evict.h).
#include "engine/keyspace/evict.h"

#include <algorithm>
#include <array>
#include <limits>

#include "conf/options.h"
#include "engine/keyspace/access.h"

namespace ringkv::engine {
namespace {

struct PolicyName {
  std::string_view name;
  EvictionPolicy policy;
};

constexpr std::array<PolicyName, 8> kPolicies = {{
    {conf::kPolicyVolatileLru, EvictionPolicy::kVolatileLru},
    {conf::kPolicyVolatileLfu, EvictionPolicy::kVolatileLfu},
    {conf::kPolicyVolatileRandom, EvictionPolicy::kVolatileRandom},
    {conf::kPolicyVolatileTtl, EvictionPolicy::kVolatileTtl},
    {conf::kPolicyAllKeysLru, EvictionPolicy::kAllKeysLru},
    {conf::kPolicyAllKeysLfu, EvictionPolicy::kAllKeysLfu},
    {conf::kPolicyAllKeysRandom, EvictionPolicy::kAllKeysRandom},
    {conf::kPolicyNoEviction, EvictionPolicy::kNoEviction},
}};

bool is_random(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysRandom || p == EvictionPolicy::kVolatileRandom;
}

}  // namespace

std::optional<EvictionPolicy> parse_eviction_policy(std::string_view name) {
  for (const PolicyName& p : kPolicies) {
    if (p.name == name) return p.policy;
  }
  return std::nullopt;
}

bool is_lfu(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLfu || p == EvictionPolicy::kVolatileLfu;
}

bool is_volatile(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLru || p == EvictionPolicy::kVolatileLfu ||
         p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kVolatileTtl;
}

void EvictionPool::offer(uint64_t score, std::string_view key, int db) {
  auto same = std::find_if(candidates_.begin(), candidates_.end(),
                           [&](const Candidate& c) { return c.key == key && c.db == db; });
  if (same != candidates_.end()) candidates_.erase(same);
  if (candidates_.size() == kCapacity) {
    if (score <= candidates_.front().score) return;
    candidates_.erase(candidates_.begin());
  }
  auto at = std::upper_bound(candidates_.begin(), candidates_.end(), score,
                             [](uint64_t s, const Candidate& c) { return s < c.score; });
  candidates_.insert(at, Candidate{score, std::string(key), db});
}

std::optional<EvictionPool::Candidate> EvictionPool::pop_best() {
  if (candidates_.empty()) return std::nullopt;
  Candidate best = std::move(candidates_.back());
  candidates_.pop_back();
  return best;
}

uint64_t eviction_score(const Store& store, const Entry& entry, EvictionPolicy policy) {
  switch (policy) {
    case EvictionPolicy::kAllKeysLfu:
    case EvictionPolicy::kVolatileLfu:
      return kLfuCounterMax -
             lfu_decayed_counter(entry.lru(), store.now(), store.access_policy().decay_time);
    case EvictionPolicy::kVolatileTtl:
      // The sooner it expires, the better a candidate.
      return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(entry.expire_at());
    default:
      return static_cast<uint64_t>(lru_idle_seconds(store.lru_clock(), entry.lru()));
  }
}

bool Evictor::enforce(Store& store, const EvictionLimits& limits) {
  Store* const one[] = {&store};
  return enforce(one, limits);
}

bool Evictor::enforce(std::span<Store* const> stores, const EvictionLimits& limits) {
  if (limits.maxmemory == 0) return true;
  auto used = [&] {
    size_t n = 0;
    for (const Store* s : stores) n += s->used_memory();
    return n;
  };
  while (used() > limits.maxmemory) {
    if (limits.policy == EvictionPolicy::kNoEviction || !evict_one(stores, limits)) return false;
  }
  return true;
}

bool Evictor::populate(std::span<Store* const> stores, const EvictionLimits& limits,
                       size_t& offered) {
  bool any = false;
  offered = 0;
  for (size_t db = 0; db < stores.size(); ++db) {
    Store& store = *stores[db];
    if (store.size() == 0) continue;
    store.sample(limits.samples, is_volatile(limits.policy), [&](const Entry& e) {
      any = true;
      if (!evictable(e.key())) return;
      pool_.offer(eviction_score(store, e, limits.policy), e.key(), static_cast<int>(db));
      offered++;
    });
  }
  return any;
}

bool Evictor::evict_one(std::span<Store* const> stores, const EvictionLimits& limits) {
  const bool volatile_only = is_volatile(limits.policy);
  if (is_random(limits.policy)) {
    // Each database in turn; with a filter, as many keys as kMaxBarrenRounds samples hold.
    const size_t tries =
        stores.size() * (evictable_ ? kMaxBarrenRounds * std::max<size_t>(limits.samples, 1) : 1);
    for (size_t i = 0; i < tries; ++i) {
      Store& store = *stores[random_db_++ % stores.size()];
      std::optional<std::string> key;
      store.sample(1, volatile_only, [&](const Entry& e) { key.emplace(e.key()); });
      if (key && evictable(*key) && store.evict(*key, volatile_only)) return true;
    }
    return false;
  }
  size_t offered = 0;
  for (int barren = 0; barren < kMaxBarrenRounds && populate(stores, limits, offered);) {
    barren = offered == 0 ? barren + 1 : 0;
    // Candidates may have gone (deleted, or their TTL removed) since they were pooled.
    while (auto best = pool_.pop_best()) {
      if (static_cast<size_t>(best->db) < stores.size() && evictable(best->key) &&
          stores[static_cast<size_t>(best->db)]->evict(best->key, volatile_only)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace ringkv::engine
