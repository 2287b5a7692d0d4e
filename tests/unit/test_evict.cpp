// Unit tests for eviction: the LFU counter arithmetic, the candidate pool, the store's sampling
// and evict primitives, and the Evictor under each maxmemory-policy.
#include <doctest/doctest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "engine/keyspace/access.h"
#include "engine/keyspace/evict.h"
#include "engine/keyspace/store.h"

using namespace ringkv::engine;

namespace {

constexpr int64_t kNow = 1'700'000'000'000;
constexpr int64_t kMinute = 60'000;

std::string key_of(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "key:%08d", i);
  return buf;
}

// A store holding `n` keys with 100-byte values; keys below `volatile_below` get a TTL of
// (i + 1) minutes.
void fill(Store& store, int n, int volatile_below = 0) {
  const std::string value(100, 'v');
  for (int i = 0; i < n; ++i) {
    const Expiry ttl = i < volatile_below ? Expiry::at(kNow + (i + 1) * kMinute) : Expiry::none();
    store.set_string(key_of(i), value, ttl);
  }
}

EvictionLimits limits_for(const Store& store, double keep, EvictionPolicy policy) {
  return EvictionLimits{static_cast<size_t>(static_cast<double>(store.used_memory()) * keep),
                        policy, 5};
}

}  // namespace

TEST_CASE("LFU counter: starts at LFU_INIT_VAL, grows logarithmically and decays per period") {
  const uint32_t fresh = lfu_initial(kNow);
  CHECK((fresh & 0xff) == kLfuInitVal);
  CHECK(lfu_decayed_counter(fresh, kNow, 1) == kLfuInitVal);
  // One decrement per decay_time minutes without access, never below 0.
  CHECK(lfu_decayed_counter(fresh, kNow + 3 * kMinute, 1) == kLfuInitVal - 3);
  CHECK(lfu_decayed_counter(fresh, kNow + 3 * kMinute, 2) == kLfuInitVal - 1);
  CHECK(lfu_decayed_counter(fresh, kNow + 100 * kMinute, 1) == 0);
  CHECK(lfu_decayed_counter(fresh, kNow + 100 * kMinute, 0) == kLfuInitVal);
  // Up to LFU_INIT_VAL every access counts; above it, with probability 1/(base*factor+1).
  CHECK(lfu_log_incr(0, 10, 0.999) == 1);
  CHECK(lfu_log_incr(kLfuInitVal, 10, 0.999) == kLfuInitVal + 1);
  CHECK(lfu_log_incr(kLfuInitVal + 1, 10, 1.0 / 11 - 1e-9) == kLfuInitVal + 2);
  CHECK(lfu_log_incr(kLfuInitVal + 1, 10, 1.0 / 11 + 1e-9) == kLfuInitVal + 1);
  CHECK(lfu_log_incr(255, 0, 0.0) == 255);
  // The minutes wrap at 16 bits.
  const uint32_t before_wrap = (kLfuMinutesMax - 1) << 8 | 10;
  const int64_t after_wrap_ms = (int64_t{kLfuMinutesMax} + 1 + 2) * kMinute;
  CHECK(lfu_decayed_counter(before_wrap, after_wrap_ms, 1) == 10 - 3);
}

TEST_CASE("LFU: a store under an LFU policy counts accesses in the access bits") {
  Store store;
  store.set_now(kNow);
  store.set_access_policy(AccessPolicy{true, 0, 1});  // factor 0: every access counts
  store.set_string("hot", "value-hot", Expiry::none());
  store.set_string("cold", "value-cold", Expiry::none());
  CHECK((store.peek("hot")->lru() & 0xff) == kLfuInitVal);
  for (int i = 0; i < 20; ++i) store.lookup("hot");
  CHECK((store.peek("hot")->lru() & 0xff) == kLfuInitVal + 20);
  CHECK((store.peek("cold")->lru() & 0xff) == kLfuInitVal);
  CHECK(eviction_score(store, *store.peek("cold"), EvictionPolicy::kAllKeysLfu) >
        eviction_score(store, *store.peek("hot"), EvictionPolicy::kAllKeysLfu));
}

TEST_CASE("EvictionPool keeps the 16 best candidates, best first, without duplicates") {
  EvictionPool pool;
  for (int i = 0; i < 40; ++i) pool.offer(static_cast<uint64_t>((i * 7) % 40), key_of(i));
  CHECK(pool.size() == EvictionPool::kCapacity);
  pool.offer(1000, key_of(3));
  pool.offer(1001, key_of(3));  // the same key again takes the new score, no second copy
  CHECK(pool.size() == EvictionPool::kCapacity);
  auto best = pool.pop_best();
  REQUIRE(best);
  CHECK(best->score == 1001);
  CHECK(best->key == key_of(3));
  uint64_t last = best->score;
  std::set<std::string> seen{best->key};
  while (auto c = pool.pop_best()) {
    CHECK(c->score <= last);
    CHECK(seen.insert(c->key).second);
    last = c->score;
  }
  CHECK(seen.size() == EvictionPool::kCapacity);
  // Scores 25..39 (and 1001) made it: nothing below the 16th best.
  CHECK(last >= 25);
  // A candidate worse than every pooled one is dropped when the pool is full.
  for (int i = 0; i < 16; ++i) pool.offer(100 + i, key_of(i));
  pool.offer(1, "worse");
  std::set<std::string> kept;
  while (auto c = pool.pop_best()) kept.insert(c->key);
  CHECK(kept.count("worse") == 0);
}

TEST_CASE("Store::sample visits distinct live entries; volatile_only only keys with a TTL") {
  Store store;
  store.set_now(kNow);
  fill(store, 1000, 100);
  std::set<std::string> keys;
  store.sample(20, false, [&](const Entry& e) { keys.insert(std::string(e.key())); });
  CHECK(keys.size() == 20);
  size_t visited = 0;
  store.sample(20, true, [&](const Entry& e) {
    CHECK(e.has_expire());
    ++visited;
  });
  CHECK(visited == 20);
  Store empty;
  empty.sample(5, false, [](const Entry&) { FAIL("an empty store has nothing to sample"); });
}

TEST_CASE("Store::evict deletes, counts and reports the key; volatile_only spares persistent") {
  Store store;
  store.set_now(kNow);
  fill(store, 10, 5);
  std::vector<std::string> reported;
  store.set_eviction_listener([&](std::string_view key) { reported.emplace_back(key); });
  CHECK_FALSE(store.evict(key_of(7), true));
  CHECK(store.evict(key_of(7), false));
  CHECK(store.evict(key_of(2), true));
  CHECK_FALSE(store.evict("absent", false));
  CHECK(reported == std::vector<std::string>{key_of(7), key_of(2)});
  CHECK(store.stats().evicted_keys == 2);
  CHECK(store.size() == 8);
  store.reset_stats();
  CHECK(store.stats().evicted_keys == 0);
}

TEST_CASE("Evictor: noeviction and an exhausted volatile policy fail; others get under the limit") {
  for (EvictionPolicy policy :
       {EvictionPolicy::kAllKeysLru, EvictionPolicy::kAllKeysLfu, EvictionPolicy::kAllKeysRandom,
        EvictionPolicy::kVolatileLru, EvictionPolicy::kVolatileLfu, EvictionPolicy::kVolatileRandom,
        EvictionPolicy::kVolatileTtl}) {
    CAPTURE(static_cast<int>(policy));
    Store store;
    store.set_now(kNow);
    fill(store, 2000, 1000);
    Evictor evictor;
    const EvictionLimits limits = limits_for(store, 0.8, policy);
    CHECK(evictor.enforce(store, limits));
    CHECK(store.used_memory() <= limits.maxmemory);
    CHECK(store.stats().evicted_keys > 0);
    CHECK(store.size() == 2000 - store.stats().evicted_keys);
    if (is_volatile(policy)) {
      // Keys without a TTL never go: below them only an OOM remains.
      for (int i = 1000; i < 2000; ++i) CHECK(store.peek(key_of(i)) != nullptr);
      CHECK_FALSE(evictor.enforce(store, limits_for(store, 0.1, policy)));
      CHECK(store.volatile_size() == 0);
      CHECK(store.size() == 1000);
    }
  }
  Store store;
  store.set_now(kNow);
  fill(store, 100);
  Evictor evictor;
  CHECK_FALSE(evictor.enforce(store, limits_for(store, 0.5, EvictionPolicy::kNoEviction)));
  CHECK(store.size() == 100);
  CHECK(evictor.enforce(store, EvictionLimits{0, EvictionPolicy::kNoEviction, 5}));
}

TEST_CASE("Evictor: volatile-ttl takes the shortest TTLs first, allkeys-lru the idlest keys") {
  {
    Store store;
    store.set_now(kNow);
    fill(store, 1000, 1000);  // key i expires in i+1 minutes
    Evictor evictor;
    CHECK(evictor.enforce(store, limits_for(store, 0.7, EvictionPolicy::kVolatileTtl)));
    // Sampling approximates: most of the first third went, the last tenth stayed whole.
    int early_gone = 0;
    for (int i = 0; i < 300; ++i) early_gone += store.peek(key_of(i)) == nullptr;
    CHECK(early_gone > 200);
    for (int i = 900; i < 1000; ++i) CHECK(store.peek(key_of(i)) != nullptr);
  }
  {
    Store store;
    store.set_now(kNow);
    fill(store, 1000);
    // An hour later the first hundred keys are read; the rest stay idle.
    store.set_now(kNow + 60 * kMinute);
    for (int i = 0; i < 100; ++i) store.lookup(key_of(i));
    Evictor evictor;
    CHECK(evictor.enforce(store, limits_for(store, 0.5, EvictionPolicy::kAllKeysLru)));
    // A sample of five idle-tied hot keys is possible but rare (Redis shares the weakness).
    int hot_kept = 0;
    for (int i = 0; i < 100; ++i) hot_kept += store.peek(key_of(i)) != nullptr;
    CHECK(hot_kept >= 95);
    int cold_kept = 0;
    for (int i = 100; i < 1000; ++i) cold_kept += store.peek(key_of(i)) != nullptr;
    CHECK(cold_kept < 450);
  }
}

TEST_CASE("Evictor with a filter evicts only the keys it accepts, and fails when none is left") {
  for (EvictionPolicy policy :
       {EvictionPolicy::kAllKeysLru, EvictionPolicy::kAllKeysLfu, EvictionPolicy::kAllKeysRandom}) {
    CAPTURE(static_cast<int>(policy));
    Store store;
    store.set_now(kNow);
    fill(store, 2000);
    // Odd keys are another node's copies: never evicted here.
    auto own = [](std::string_view key) { return (key.back() - '0') % 2 == 0; };
    Evictor evictor;
    evictor.set_filter(own);
    const EvictionLimits limits = limits_for(store, 0.8, policy);
    CHECK(evictor.enforce(store, limits));
    CHECK(store.stats().evicted_keys > 0);
    for (int i = 1; i < 2000; i += 2) CHECK(store.peek(key_of(i)) != nullptr);
    // Below the copies alone: own keys go until samples (biased, as Redis's, toward keys after
    // gaps in the table) find hardly any, then it gives up. How many are left is random: 27-292
    // of the 1000 in 900 runs (allkeys-random leaves the most), so the check is that most went.
    CHECK_FALSE(evictor.enforce(store, limits_for(store, 0.3, policy)));
    for (int i = 1; i < 2000; i += 2) CHECK(store.peek(key_of(i)) != nullptr);
    CHECK(store.size() < 1500);
  }
}
