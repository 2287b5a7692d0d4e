// Hash schemes for the ring: how a virtual node's point and a key's position on the 2^32 ring
// are computed. A scheme is a plain value of function pointers so lookups stay cheap and tests
// can inject a hash whose values they know.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ringkv::hashring {

// Maps bytes to a position on the 2^32 ring.
using HashFn = uint32_t (*)(std::string_view bytes);

// A named way of placing virtual nodes and keys on the ring.
//
// Virtual node i of a node with address A sits at point_hash(decimal(i) + A), i = 0 … n-1 (the
// classic label, e.g. "0127.0.0.1:7001"). A key (or its hash tag) is looked up at `probes`
// positions: probe 0 is key_hash(key), further probes are derived from it (probe_position). The
// key belongs to the first virtual node clockwise from the probe that is closest to its virtual
// node; with one probe this is plain consistent hashing.
struct HashScheme {
  std::string name;     // part of the ring fingerprint: peers must agree on it
  HashFn point_hash;    // hash of a virtual node's label
  HashFn key_hash;      // hash of a key or of its hash tag
  uint32_t probes = 1;  // positions looked up per key (multi-probe consistent hashing)
};

// IEEE crc32 (zlib's crc32) of the bytes.
uint32_t crc32_hash(std::string_view bytes);

// A 64-bit hash of the bytes with full avalanche: word-at-a-time rounds and a final mix64, so
// labels that differ in one character land at unrelated points. Stable across platforms.
uint64_t hash64(std::string_view bytes);

// The 64-bit finalizer of MurmurHash3 (fmix64): a bijection with full avalanche.
uint64_t mix64(uint64_t x);

// The upper 32 bits of hash64: the "balanced" scheme's point and key hash.
uint32_t hash64_upper(std::string_view bytes);

// Position of probe `probe` (>= 1) of a key whose first probe is at `first`.
inline uint32_t probe_position(uint32_t first, uint32_t probe) {
  return static_cast<uint32_t>(mix64((static_cast<uint64_t>(probe) << 32) | first) >> 32);
}

// The classic scheme: crc32 of the label and of the key, one probe. Compatible with the Go
// consistent-hash maps it derives from, but points of near-identical labels cluster.
HashScheme crc32_scheme();

// The default scheme: hash64 of the label and of the key, five probes per key. With 10 nodes ×
// 100 virtual nodes the busiest node gets about 1.05× the mean share (at most 1.11× over 500
// random member sets) instead of about 1.16× for one probe of the same hash and about 1.3× for
// crc32 (measure with ringkv-ring); a lookup is one hash and five branch-free binary searches
// over a flat array of a few KiB.
HashScheme balanced_scheme();

// The scheme called `name` ("crc32" or "balanced"), or nullopt for an unknown name.
std::optional<HashScheme> scheme_named(std::string_view name);

}  // namespace ringkv::hashring
