// Sets: the SetObject data structure and the pure set operations on the Store that the command
// handlers (commands/set.cpp) build on.
//
// Encodings, as Redis 7.0 with its default configuration:
//   intset     a sorted array of integers, all stored at the smallest width (2, 4 or 8 bytes)
//              that holds the largest of them. Membership is a binary search; iteration is in
//              ascending order, which is the order Redis replies in.
//   hashtable  chained buckets (a power of two) of single-block nodes holding the member bytes.
// A set whose members all read as 64-bit integers (Redis's string2ll rules) starts as an intset
// and becomes a hashtable, never back, when a non-integer member is added or it holds more than
// kSetMaxIntsetEntries members. Redis 7.0 has no listpack sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/result.h"
#include "engine/types/chained_table.h"
#include "engine/types/encoding_limits.h"
#include "engine/types/object.h"

namespace ringkv::engine {

class SetObject final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kSet;
  enum class Encoding : uint8_t { kIntset, kHashtable };
  // Visits one member; the view is valid during the call only.
  using Visit = std::function<void(std::string_view member)>;
  // Returns 64 random bits.
  using Random = std::function<uint64_t()>;

  SetObject();
  ~SetObject() override;

  Encoding encoding() const { return encoding_; }
  std::string_view encoding_name() const override;
  size_t free_effort() const override { return encoding_ == Encoding::kHashtable ? count_ : 1; }
  size_t size() const override { return count_; }
  size_t memory() const override;
  std::unique_ptr<Object> clone() const override;
  void prefetch_members(std::span<const std::string_view> members, bool chain) const override {
    table_.prefetch(members, chain);
  }

  // Whether `member` is in the set.
  bool contains(std::string_view member) const;
  // Adds `member` (which may not point into this set), converting to a hashtable when the intset
  // rules are broken. Returns true when it was new.
  bool add(std::string_view member);
  // Removes `member`. Returns true when it was present.
  bool remove(std::string_view member);
  // Visits every member in the encoding's order (ascending for an intset).
  void for_each(const Visit& visit) const;

  // SSCAN step: visits the members of the buckets at `cursor` (about `count` of them) and returns
  // the next cursor, 0 when done. An intset is visited whole in one call. The hashtable cursor
  // counts in reversed-bit order, so every member present for the whole scan is visited at least
  // once however the table grows or shrinks between calls.
  uint64_t scan(uint64_t cursor, size_t count, const Visit& visit) const;

  // A uniformly random member (an intset's) or a member of a random non-empty bucket (a
  // hashtable's, as Redis's dictGetRandomKey). The set must not be empty.
  std::string random_member(const Random& rng) const;

  // Exchanges the contents of two sets (SPOP replaces a set by the members it keeps).
  void swap(SetObject& other) noexcept;

 private:
  struct Node;

  void convert_to_hashtable();
  // Intset helpers.
  int64_t int_at(size_t i) const;
  void int_put(size_t i, int64_t v);
  // Binary search: true and the index when found, else false and the insertion index.
  bool int_find(int64_t v, size_t& index) const;
  void int_resize(size_t count, uint8_t width);
  // Hashtable helpers.
  Node* make_node(std::string_view member);
  void free_node(Node* node);

  Encoding encoding_ = Encoding::kIntset;
  uint8_t width_ = 2;  // intset: bytes per integer
  size_t count_ = 0;
  size_t heap_bytes_ = 0;  // allocations below, as heap_footprint counts them
  // Intset: count_ integers of width_ bytes, ascending.
  char* ints_ = nullptr;
  // Hashtable.
  ChainedTable<Node> table_;
};

// Which combination SINTER, SUNION and SDIFF compute.
enum class SetOp : uint8_t { kInter, kUnion, kDiff };

// SADD: adds the members, creating the key. Returns how many were new. Error: kWrongType.
Result<int64_t> set_add(Store& store, std::string_view key,
                        std::span<const std::string_view> members);

// SREM: removes the members (deleting the key when it becomes empty); returns how many existed.
// Error: kWrongType.
Result<int64_t> set_remove(Store& store, std::string_view key,
                           std::span<const std::string_view> members);

// SMOVE: moves `member` from `source` to `destination` (creating it). Returns whether the member
// was in `source` (a move within one key changes nothing). A missing source returns false before
// any type check, as Redis. Error: kWrongType for either key. `removed` runs once the member
// left the source (deleted when emptied) and before the destination is written, the point where
// Redis reports the source's events.
Result<bool> set_move(Store& store, std::string_view source, std::string_view destination,
                      std::string_view member, const std::function<void()>& removed = {});

// SPOP with a count: removes up to `count` random distinct members, visiting each; the whole
// set (in its order) when count >= size. Error: kWrongType.
Result<size_t> set_pop(Store& store, std::string_view key, uint64_t count,
                       const SetObject::Random& rng, const SetObject::Visit& visit);

// SRANDMEMBER with a count, as Redis 7.0: a negative count picks -count members with repetition;
// a count at least the size returns the whole set in order; otherwise count distinct members.
void set_random_members(const SetObject& set, int64_t count, const SetObject::Random& rng,
                        const SetObject::Visit& visit);

// SINTER and SINTERCARD over `keys`, with Redis 7.0's rules: every key is type-checked first; a
// missing key makes the intersection empty; the smallest set (the first of equal sizes) is
// walked in its own order, which is the order of the result; the walk stops once `limit`
// members (0 = no limit) are found. Error: kWrongType.
Result<std::vector<std::string>> set_inter(Store& store, std::span<const std::string_view> keys,
                                           size_t limit = 0);

// The combination of the sets at `keys` (missing keys are empty sets; every key is type-checked
// first) built as Redis 7.0 builds it: a new set that starts as an intset, filled by SUNION in
// key order, by SDIFF with the cheaper of Redis's two algorithms (which decides whether the
// result stays an intset), by SINTER in the smallest set's order. nullptr when empty.
// Error: kWrongType.
Result<std::unique_ptr<SetObject>> set_combine(Store& store, SetOp op,
                                               std::span<const std::string_view> keys);

// SINTERSTORE/SUNIONSTORE/SDIFFSTORE: computes the combination and replaces `destination` with
// it (whatever its type), or deletes `destination` when it is empty. Returns the result's size.
// Error: kWrongType from a source key.
Result<int64_t> set_combine_store(Store& store, SetOp op, std::string_view destination,
                                  std::span<const std::string_view> keys);

}  // namespace ringkv::engine
