// Hashes: the HashObject data structure and the pure hash operations on the Store that the
// command handlers (commands/hash.cpp) build on.
//
// Encodings, as Redis 7.0 with its default configuration:
//   listpack   one malloc'd buffer of (varint length, bytes) pairs, field then value, in insertion
//              order (an overwritten field keeps its place). Lookups scan it, which is fast for the
//              small sizes it is used for and costs ~2 bytes of overhead per string.
//   hashtable  chained buckets (a power of two) of single-block nodes holding field and value.
// A hash starts as a listpack and becomes a hashtable, never back, as soon as it holds more than
// kHashMaxListpackEntries fields or a field or value longer than kHashMaxListpackValue bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/result.h"
#include "engine/types/chained_table.h"
#include "engine/types/encoding_limits.h"
#include "engine/types/object.h"
#include "engine/types/packed_buffer.h"

namespace ringkv::engine {

// Error texts of the hash commands (Redis 7.0.15, t_hash.c).
inline constexpr std::string_view kHashValueNotInteger = "ERR hash value is not an integer";
inline constexpr std::string_view kHashValueNotFloat = "ERR hash value is not a float";
inline constexpr std::string_view kHashIncrementNotFinite = "ERR value is NaN or Infinity";

class HashObject final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kHash;
  enum class Encoding : uint8_t { kListpack, kHashtable };
  // Visits one field and its value; the views are valid during the call only.
  using Visit = std::function<void(std::string_view field, std::string_view value)>;

  HashObject();
  ~HashObject() override;

  Encoding encoding() const { return encoding_; }
  std::string_view encoding_name() const override;
  size_t free_effort() const override { return encoding_ == Encoding::kHashtable ? count_ : 1; }
  size_t size() const override { return count_; }
  size_t memory() const override;
  std::unique_ptr<Object> clone() const override;
  void prefetch_members(std::span<const std::string_view> members, bool chain) const override {
    table_.prefetch(members, chain);
  }

  // The value of `field`, or nullopt. The view is valid until the hash is next written.
  std::optional<std::string_view> get(std::string_view field) const;
  // Sets `field` to `value` (neither may point into this hash), converting to a hashtable when
  // the limits are passed. Returns true when the field is new.
  bool set(std::string_view field, std::string_view value);
  // Removes `field`. Returns true when it existed.
  bool erase(std::string_view field);
  // Visits every field in the encoding's order (insertion order for a listpack).
  void for_each(const Visit& visit) const;

  // HSCAN step: visits the fields of the buckets at `cursor` (about `count` of them) and returns
  // the next cursor, 0 when done. A listpack is visited whole in one call. The hashtable cursor
  // counts in reversed-bit order, so every field present for the whole scan is visited at least
  // once however the table grows or shrinks between calls.
  uint64_t scan(uint64_t cursor, size_t count, const Visit& visit) const;

  // A uniformly random field and its value; the hash must not be empty. `rng` returns 64 random
  // bits.
  std::pair<std::string_view, std::string_view> random_entry(
      const std::function<uint64_t()>& rng) const;
  // `count` distinct random fields (count < size()), visited in the encoding's order for a
  // listpack (as Redis's lpRandomPairsUnique) and in random order for a hashtable.
  void random_distinct(size_t count, const std::function<uint64_t()>& rng,
                       const Visit& visit) const;

 private:
  struct Node;

  void convert_to_hashtable();
  // Hashtable helpers.
  Node* make_node(std::string_view field, std::string_view value);
  void free_node(Node* node);
  // Listpack helpers.
  size_t lp_find(std::string_view field) const;  // offset of the field entry, or npos

  Encoding encoding_ = Encoding::kListpack;
  size_t count_ = 0;
  size_t heap_bytes_ = 0;  // allocations below, as heap_footprint counts them
  // Listpack.
  PackedBuffer lp_;
  // Hashtable.
  ChainedTable<Node> table_;
};

// Looks a key up for reading a hash: nullptr when absent; error kWrongType for another type.
Result<const HashObject*> lookup_hash(Store& store, std::string_view key);

// HSET/HMSET: sets each (field, value) pair of `field_values` (even length), creating the key.
// Returns how many fields were new. Error: kWrongType.
Result<int64_t> hash_set(Store& store, std::string_view key,
                         std::span<const std::string_view> field_values);

// HSETNX: sets the field only when absent. Returns whether it was set. Error: kWrongType.
Result<bool> hash_set_nx(Store& store, std::string_view key, std::string_view field,
                         std::string_view value);

// HDEL: removes the fields (deleting the key when it becomes empty); returns how many existed.
// Error: kWrongType.
Result<int64_t> hash_del(Store& store, std::string_view key,
                         std::span<const std::string_view> fields);

// HINCRBY: adds `delta` to the integer in the field (0 when absent). Returns the new value.
// Errors: kWrongType, kHashValueNotInteger, kOverflow.
Result<int64_t> hash_incr_by(Store& store, std::string_view key, std::string_view field,
                             int64_t delta);

// HINCRBYFLOAT: adds `increment` (already parsed, finite) to the number in the field (0 when
// absent) and returns the stored text. Errors: kWrongType, kHashValueNotFloat, kIncrFloatNaN.
Result<std::string> hash_incr_by_float(Store& store, std::string_view key, std::string_view field,
                                       long double increment);

// HRANDFIELD with a count, as Redis 7.0: a negative count picks -count fields with repetition;
// a count at least the size returns the whole hash in order; otherwise count distinct fields.
// Visits the chosen (field, value) pairs. `rng` returns 64 random bits.
void hash_random_fields(const HashObject& hash, int64_t count, const std::function<uint64_t()>& rng,
                        const HashObject::Visit& visit);

}  // namespace ringkv::engine
