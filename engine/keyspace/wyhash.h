// wyhash (final version), the store's key hash: fast on short keys and passes SMHasher. Inline,
// since the store hashes every key it looks up; the store seeds it once per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ringkv::engine {

constexpr uint64_t kWyp0 = 0x2d358dccaa6c78a5ull;
constexpr uint64_t kWyp1 = 0x8bb84b93962eacc9ull;
constexpr uint64_t kWyp2 = 0x4b33a62ed433d4a3ull;
constexpr uint64_t kWyp3 = 0x4d5a2da51de1aa47ull;

inline void wymum(uint64_t* a, uint64_t* b) {
  __uint128_t r = static_cast<__uint128_t>(*a) * *b;
  *a = static_cast<uint64_t>(r);
  *b = static_cast<uint64_t>(r >> 64);
}
inline uint64_t wymix(uint64_t a, uint64_t b) {
  wymum(&a, &b);
  return a ^ b;
}
inline uint64_t wyr8(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t wyr4(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t wyr3(const uint8_t* p, size_t k) {
  return static_cast<uint64_t>(p[0]) << 16 | static_cast<uint64_t>(p[k >> 1]) << 8 | p[k - 1];
}

inline uint64_t wyhash(std::string_view key, uint64_t seed) {
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  const size_t len = key.size();
  seed ^= wymix(seed ^ kWyp0, kWyp1);
  uint64_t a;
  uint64_t b;
  if (len <= 16) {
    if (len >= 4) {
      a = wyr4(p) << 32 | wyr4(p + ((len >> 3) << 2));
      b = wyr4(p + len - 4) << 32 | wyr4(p + len - 4 - ((len >> 3) << 2));
    } else if (len > 0) {
      a = wyr3(p, len);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    size_t i = len;
    if (i > 48) {
      uint64_t see1 = seed;
      uint64_t see2 = seed;
      do {
        seed = wymix(wyr8(p) ^ kWyp1, wyr8(p + 8) ^ seed);
        see1 = wymix(wyr8(p + 16) ^ kWyp2, wyr8(p + 24) ^ see1);
        see2 = wymix(wyr8(p + 32) ^ kWyp3, wyr8(p + 40) ^ see2);
        p += 48;
        i -= 48;
      } while (i > 48);
      seed ^= see1 ^ see2;
    }
    while (i > 16) {
      seed = wymix(wyr8(p) ^ kWyp1, wyr8(p + 8) ^ seed);
      i -= 16;
      p += 16;
    }
    a = wyr8(p + i - 16);
    b = wyr8(p + i - 8);
  }
  a ^= kWyp1;
  b ^= seed;
  wymum(&a, &b);
  return wymix(a ^ kWyp0 ^ len, b ^ kWyp1);
}

}  // namespace ringkv::engine
