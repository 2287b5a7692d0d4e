// Access tracking: what the 24 bits an Entry keeps for eviction mean, as Redis uses them.
//
// Under an LRU (or non-LFU) policy they hold the LRU clock: unix seconds modulo 2^24, the time
// of the last access. Under an LFU policy they hold, as Redis's LFU does, 16 bits of "last
// decrement time" in minutes (modulo 2^16) and an 8-bit logarithmic access counter: a new key
// starts at kLfuInitVal, each access increments the counter with probability
// 1 / ((counter - kLfuInitVal) * log_factor + 1), and the counter loses one for every
// decay_time minutes without access. Switching the policy at run time reinterprets the bits,
// so the old values take a while to become meaningful again (as in Redis).
#pragma once

#include <cstdint>

namespace ringkv::engine {

inline constexpr uint32_t kLruClockMax = (1u << 24) - 1;
inline constexpr uint32_t kLfuInitVal = 5;
inline constexpr uint32_t kLfuCounterMax = 255;
inline constexpr uint32_t kLfuMinutesMax = 65535;

// How the store interprets and updates an entry's 24 access bits.
struct AccessPolicy {
  bool lfu = false;         // an LFU maxmemory policy is selected
  int64_t log_factor = 10;  // lfu-log-factor
  int64_t decay_time = 1;   // lfu-decay-time, minutes per counter decrement (0 = never)
  // Redis shares the objects of the integers 0..9999 unless maxmemory is set with an LRU or LFU
  // policy (each key needs its own access clock then); decided when a value is written.
  bool shared_integers = true;
};

// The LRU clock for `now_ms`.
inline uint32_t lru_clock_at(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 1000) & kLruClockMax;
}

// Seconds since an entry with clock `entry_clock` was last accessed (Redis's
// estimateObjectIdleTime, which allows for one wrap of the clock).
inline int64_t lru_idle_seconds(uint32_t now_clock, uint32_t entry_clock) {
  if (now_clock >= entry_clock) return now_clock - entry_clock;
  return static_cast<int64_t>(now_clock) + (kLruClockMax - entry_clock);
}

// Minutes modulo 2^16, the LFU's time base.
inline uint32_t lfu_minutes_at(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 60000) & kLfuMinutesMax;
}

// Access bits of a key created at `now_ms` under an LFU policy.
inline uint32_t lfu_initial(int64_t now_ms) { return lfu_minutes_at(now_ms) << 8 | kLfuInitVal; }

// The counter of `bits` after the decay due by `now_ms` (Redis's LFUDecrAndReturn); what OBJECT
// FREQ reports and what eviction compares.
inline uint32_t lfu_decayed_counter(uint32_t bits, int64_t now_ms, int64_t decay_time) {
  const uint32_t last = bits >> 8;
  const uint32_t counter = bits & 0xff;
  if (decay_time <= 0) return counter;
  const uint32_t now = lfu_minutes_at(now_ms);
  const uint32_t elapsed = now >= last ? now - last : kLfuMinutesMax - last + now;
  const uint64_t periods = elapsed / static_cast<uint64_t>(decay_time);
  return periods >= counter ? 0 : counter - static_cast<uint32_t>(periods);
}

// One logarithmic increment of `counter`; `uniform` is a random number in [0, 1).
inline uint32_t lfu_log_incr(uint32_t counter, int64_t log_factor, double uniform) {
  if (counter >= kLfuCounterMax) return kLfuCounterMax;
  const double base = counter > kLfuInitVal ? static_cast<double>(counter - kLfuInitVal) : 0.0;
  const double p = 1.0 / (base * static_cast<double>(log_factor) + 1.0);
  return uniform < p ? counter + 1 : counter;
}

// Access bits after one access at `now_ms` (Redis's updateLFU).
inline uint32_t lfu_touched(uint32_t bits, int64_t now_ms, const AccessPolicy& policy,
                            double uniform) {
  uint32_t counter = lfu_decayed_counter(bits, now_ms, policy.decay_time);
  counter = lfu_log_incr(counter, policy.log_factor, uniform);
  return lfu_minutes_at(now_ms) << 8 | counter;
}

}  // namespace ringkv::engine
