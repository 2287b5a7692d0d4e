// Pure bitmap operations (no RESP): bits live in string values, bit 0 being the most significant
// bit of byte 0, as in Redis. The value-level functions work on any bytes and are what SETBIT,
// GETBIT, BITCOUNT, BITPOS, BITOP and BITFIELD compute; the Store-level ones read and write keys
// with Redis 7.0.15's lookup order and encodings (a written value is "raw"). Handlers are in
// cmd_bitmap.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/result.h"

namespace ringkv::engine {

// The value of `key` as bytes that may be changed in place, after making it "raw" as Redis's
// dbUnshareStringValue does. `key` must hold a string. SETBIT, BITFIELD and PFADD change a few
// bytes of a possibly long value, which copying would make O(length); the length never changes
// this way, so the entry's layout and the store's memory accounting stay right.
std::span<uint8_t> writable_string(Store& store, std::string_view key);

// Parses a bit offset as Redis's getBitOffsetFromArgument: a decimal integer, or with
// `hash_bits` > 0 (BITFIELD) "#N" meaning N * hash_bits; negative or at least 8 times the
// proto-max-bulk-len is out of range. Error: kBitOffset.
Result<uint64_t> parse_bit_offset(std::string_view arg, int hash_bits, const BulkLimit& limit);

// The unit of BITCOUNT and BITPOS ranges.
enum class BitUnit : uint8_t { kByte, kBit };

// Parses BYTE or BIT (case-insensitively, as a C string). nullopt for anything else.
std::optional<BitUnit> parse_bit_unit(std::string_view arg);

// The bit at `offset` of `value` (0 past its end).
int bit_at(std::string_view value, uint64_t offset);

// Set bits in the whole value.
int64_t count_bits(std::string_view value);
// BITCOUNT with a range: inclusive indexes in `unit`s, negative ones counting from the end.
int64_t count_bits(std::string_view value, int64_t start, int64_t end, BitUnit unit);

// BITPOS: the first bit equal to `bit` from `start`, up to `end` when given (indexes in `unit`s,
// negative from the end), or -1. Looking for 0 without an end, the bits after the value count as
// zeros (so the answer may be its length in bits).
int64_t find_bit(std::string_view value, int bit, int64_t start, std::optional<int64_t> end,
                 BitUnit unit);

enum class BitOp : uint8_t { kAnd, kOr, kXor, kNot };

// Parses AND, OR, XOR or NOT (case-insensitively, as a C string).
std::optional<BitOp> parse_bit_op(std::string_view arg);

// BITOP's result over the sources (absent ones are empty; a shorter one reads as zero bytes):
// as long as the longest source.
std::string bit_op(BitOp op, std::span<const std::string_view> sources);

// SETBIT: sets the bit at `offset` (creating the key, or growing its value with zero bytes, as
// needed) and returns the previous bit. `changed` tells whether the key was created, grown or had
// its bit flipped, which is when Redis counts it a write. Error: kWrongType.
Result<int> set_bit(Store& store, std::string_view key, uint64_t offset, bool on, bool& changed);

// BITOP: writes the result to `dest` (dropping its TTL), or deletes `dest` when every source is
// empty. Returns the result's length; `changed` tells whether `dest` was written or deleted.
// Error: kWrongType when a source is not a string (nothing is written).
Result<size_t> bit_op_store(Store& store, BitOp op, std::string_view dest,
                            std::span<const std::string_view> keys, bool& changed);

// --- BITFIELD ---

enum class BitfieldOverflow : uint8_t { kWrap, kSat, kFail };

struct BitfieldOp {
  enum Kind : uint8_t { kGet, kSet, kIncrBy } kind = kGet;
  bool is_signed = false;
  int bits = 0;
  uint64_t offset = 0;
  int64_t value = 0;  // SET's value or INCRBY's increment
  BitfieldOverflow overflow = BitfieldOverflow::kWrap;
};

// Parses BITFIELD's subcommands (argv after the key) as Redis does, stopping at the first error:
// kSyntax, kBitfieldOverflow, kBitfieldType, kBitOffset or kNotInteger.
Result<std::vector<BitfieldOp>> parse_bitfield(std::span<const std::string_view> args,
                                               const BulkLimit& limit);

// The field of `bits` bits at bit `offset` (zero past the end of `value`), unsigned or
// sign-extended.
uint64_t get_unsigned_field(std::string_view value, uint64_t offset, int bits);
int64_t get_signed_field(std::string_view value, uint64_t offset, int bits);
// Writes the low `bits` bits of `field` at bit `offset`; the bytes must cover them.
void set_field(std::span<uint8_t> bytes, uint64_t offset, int bits, uint64_t field);

// Whether `value + incr` fits a field of `bits` bits (Redis's check*BitfieldOverflow): 0 when it
// does, else nonzero with `limit` set to the wrapped or saturated result for kWrap / kSat.
int unsigned_field_overflow(uint64_t value, int64_t incr, int bits, BitfieldOverflow how,
                            uint64_t& limit);
int signed_field_overflow(int64_t value, int64_t incr, int bits, BitfieldOverflow how,
                          int64_t& limit);

// Runs the operations on `key`: only GETs read it (absent reads as zeros), otherwise the key is
// created or grown to cover every written field first. Each reply is the value read (GET), the
// previous value (SET) or the new one (INCRBY); nullopt where OVERFLOW FAIL refused a write.
// `changed` counts the SETs and INCRBYs that wrote into a created or grown value or changed
// their field, as Redis counts them, and is at least 1 when the value was created or grown.
// Error: kWrongType.
Result<std::vector<std::optional<int64_t>>> bitfield(Store& store, std::string_view key,
                                                     std::span<const BitfieldOp> ops,
                                                     size_t& changed);

}  // namespace ringkv::engine
