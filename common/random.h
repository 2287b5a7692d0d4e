// Random bits for the engine's random choices (HRANDFIELD, SRANDMEMBER, SPOP, ZRANDMEMBER, skip
// list levels, RANDOMKEY's slots): splitmix64, cheap and good enough for picking.
#pragma once

#include <cstdint>

namespace ringkv::common {

// One splitmix64 step: advances `state` and returns 64 random bits.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 64 random bits from the process's generator, seeded once from std::random_device. The engine
// runs on one thread, so the generator is not locked.
uint64_t next_random();

}  // namespace ringkv::common
