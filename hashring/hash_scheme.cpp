// Hash functions and the two named schemes of the ring.
#include "hashring/hash_scheme.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace ringkv::hashring {

namespace {

// Primes of xxHash64; any odd constants with well-mixed bits would do.
constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;

// Busiest/mean share over 500 random sets of 10 nodes × 100 virtual nodes (mean / worst):
// 1 probe 1.16 / 1.38, 3 probes 1.07 / 1.15, 4 probes 1.06 / 1.13, 5 probes 1.05 / 1.11. Five is
// the fewest that kept every set within 1.12×; each probe costs one more binary search.
constexpr uint32_t kBalancedProbes = 5;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Reads up to 8 bytes as a little-endian word, so every platform computes the same points.
uint64_t load64(const char* p, size_t n) {
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}

}  // namespace

uint32_t crc32_hash(std::string_view bytes) {
  // zlib takes a uInt length; keys are far below 4 GiB, but stay correct for any size.
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) {
    const auto chunk = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), chunk);
    bytes.remove_prefix(chunk);
  }
  return static_cast<uint32_t>(crc);
}

uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t hash64(std::string_view bytes) {
  uint64_t h = kPrime4 ^ (bytes.size() * kPrime1);
  const char* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    h ^= rotl(load64(p, 8) * kPrime2, 31) * kPrime1;
    h = rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (n > 0) {
    h ^= rotl(load64(p, n) * kPrime2, 31) * kPrime1;
    h = rotl(h, 27) * kPrime1 + kPrime4;
  }
  return mix64(h);
}

uint32_t hash64_upper(std::string_view bytes) { return static_cast<uint32_t>(hash64(bytes) >> 32); }

HashScheme crc32_scheme() { return HashScheme{"crc32", &crc32_hash, &crc32_hash, 1}; }

HashScheme balanced_scheme() {
  return HashScheme{"balanced", &hash64_upper, &hash64_upper, kBalancedProbes};
}

std::optional<HashScheme> scheme_named(std::string_view name) {
  if (name == "crc32") return crc32_scheme();
  if (name == "balanced") return balanced_scheme();
  return std::nullopt;
}

}  // namespace ringkv::hashring
