// HyperLogLog sketches in Redis's exact byte format (a port of the design of Redis's
// hyperloglog.c), so a ringkv HLL string is byte-identical to redis-server's and estimates agree.
//
// A sketch is a string: a 16-byte header ("HYLL", encoding byte, 3 unused bytes, the cached
// cardinality as 8 little-endian bytes whose top bit set means "stale"), then the registers:
//   dense   16384 registers of 6 bits, packed least significant bit first (12288 bytes);
//   sparse  run-length opcodes: ZERO 00xxxxxx (1-64 zero registers), XZERO 01xxxxxx yyyyyyyy
//           (1-16384 zero registers), VAL 1vvvvvxx (1-4 registers of value 1-32).
// Elements are hashed with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the register,
// the run of zeros above them plus one is the value it may rise to. A sparse sketch turns dense
// when a value over 32 arrives or it would grow past hll-sparse-max-bytes. Estimates use Ertl's
// improved estimator, as Redis 7.
//
// Everything here is pure (bytes in, bytes out); the Store-level commands are in
// hyperloglog_ops.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ringkv::engine::hll {

inline constexpr int kP = 14;                          // register index bits
inline constexpr int kQ = 64 - kP;                     // hash bits left for the zero run
inline constexpr size_t kRegisters = size_t{1} << kP;  // 16384
inline constexpr int kBits = 6;                        // bits per dense register
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + (kRegisters * kBits + 7) / 8;  // 12304
// Redis's default hll-sparse-max-bytes: a sparse sketch longer than this (header included)
// becomes dense.
inline constexpr size_t kDefaultSparseMaxBytes = 3000;

inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;

// Every register's value, for merging (max per register) and counting.
using Registers = std::array<uint8_t, kRegisters>;

// MurmurHash64A as Redis computes it (little-endian 8-byte blocks).
uint64_t murmur_hash64a(std::string_view data, uint64_t seed);

// Which register an element maps to and the value it carries there (1..kQ + 1).
struct Pattern {
  uint32_t index;
  uint8_t count;
};
Pattern pattern(std::string_view element);

// A new, empty sketch: sparse, one XZERO covering every register, cached cardinality 0 (valid).
std::string create();

// Whether `value` is a sketch as Redis's isHLLObjectOrReply checks: long enough for the header,
// "HYLL" magic, a known encoding, and exactly kDenseSize bytes when dense. (A sparse sketch's
// opcodes are only checked when they are read.)
bool is_hll(std::string_view value);

// The encoding byte (kDense or kSparse) of a sketch that passed is_hll.
inline uint8_t encoding(std::string_view hll) { return static_cast<uint8_t>(hll[4]); }

// The cached cardinality, when valid.
std::optional<uint64_t> cached_count(std::string_view hll);
// Stores `count` as the cached cardinality (valid). `header` is the sketch's first 16 bytes.
void set_cached_count(std::span<uint8_t> header, uint64_t count);
// Marks the cached cardinality stale.
inline void invalidate_cache(std::span<uint8_t> header) { header[15] |= 0x80; }

// Dense register access; `registers` are the bytes after the header.
uint8_t dense_get(std::span<const uint8_t> registers, size_t index);
void dense_set(std::span<uint8_t> registers, size_t index, uint8_t value);

// Adds an element to a dense sketch in place (all kDenseSize bytes). Returns whether a register
// rose. Leaves the cached cardinality alone: callers invalidate it once per command.
bool dense_add(std::span<uint8_t> hll, std::string_view element);

// Raises register `index` of a sparse sketch to `count` when lower, rewriting opcodes as Redis
// does (the sketch may become dense). Returns 1 when it changed, 0 when not, -1 when the sketch
// is corrupt.
int sparse_set(std::string& hll, size_t index, uint8_t count, size_t sparse_max_bytes);

// Adds an element to a sketch of either encoding: 1 changed, 0 not, -1 corrupt.
int add(std::string& hll, std::string_view element, size_t sparse_max_bytes);

// Converts a sparse sketch to dense (keeping the header's other bytes); a dense one is left
// alone. false when the sparse opcodes do not cover exactly kRegisters registers.
bool sparse_to_dense(std::string& hll);

// Raises each of `max` to the sketch's register where that is higher. false when corrupt.
bool merge_into(Registers& max, std::string_view hll);

// The estimated cardinality of a sketch, ignoring the cache; nullopt when corrupt.
std::optional<uint64_t> estimate(std::string_view hll);
// The estimated cardinality of a set of registers (a merge).
uint64_t estimate(const Registers& registers);

// PFDEBUG DECODE's text of a sparse sketch: "z:N", "Z:N" and "v:VALUE,N" separated by spaces.
std::string decode_sparse(std::string_view hll);

// PFSELFTEST: checks the register packing, sparse and dense agreement and the estimator's error
// bounds. Returns "" when every check passes, else what failed (Redis's TESTFAILED message).
std::string self_test();

}  // namespace ringkv::engine::hll
