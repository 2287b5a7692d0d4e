// Sorted sets: the ZSetObject data structure and the range types its commands share.
//
// Elements are ordered by (score, member bytes). Encodings, as Redis 7.0 with its defaults:
//   listpack  one malloc'd buffer of (8-byte score, varint length, member bytes) entries kept in
//             order. Lookups scan it, which is fast for the small sizes it is used for.
//   skiplist  a skip list whose links carry spans (rank and range in O(log n)) whose nodes are
//             single blocks holding score, links and member, plus an intrusive chained hash from
//             member to node (ZSCORE, ZADD's lookup in O(1)).
// A sorted set starts as a listpack and becomes a skiplist, never back, as soon as it holds more
// than kZSetMaxListpackEntries members or a member longer than kZSetMaxListpackValue bytes.
// Every order question is answered as a rank (how many elements come before a bound), so score
// and lex ranges, counts and rank-ranged walks share one path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "engine/result.h"
#include "engine/types/chained_table.h"
#include "engine/types/encoding_limits.h"
#include "engine/types/object.h"
#include "engine/types/packed_buffer.h"

namespace ringkv::engine {

// A score interval: ZRANGEBYSCORE's "(1.5", "-inf", "+inf" bounds.
struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;
};

// One end of a member interval: ZRANGEBYLEX's "-" (before everything), "+" (after everything),
// "[a" (inclusive) or "(a" (exclusive).
struct LexBound {
  enum class Kind : uint8_t { kNegInf, kPosInf, kValue };
  Kind kind = Kind::kNegInf;
  std::string_view value;  // without the '[' or '('
  bool exclusive = false;
};

// A member interval.
struct LexRange {
  LexBound min;
  LexBound max;
};

// Whether `member` lies at or above the range's minimum / at or below its maximum.
bool lex_gte_min(std::string_view member, const LexBound& min);
bool lex_lte_max(std::string_view member, const LexBound& max);

// Parses a score (ZADD, ZINCRBY, WEIGHTS) as Redis's string2d: strtod syntax with no leading
// space, every byte consumed, not NaN, not overflowing nor underflowing to zero.
bool parse_score(std::string_view arg, double& value);

// Parses ZRANGEBYSCORE's bounds (see parse_score_bound). Returns false when either is invalid.
bool parse_score_range(std::string_view min, std::string_view max, ScoreRange& range);

// Parses one ZRANGEBYSCORE bound as Redis's zslParseRange: an optional '(' then a strtod number
// (not NaN). Returns false when it is not one.
bool parse_score_bound(std::string_view arg, double& value, bool& exclusive);

// Parses ZRANGEBYLEX bounds as Redis's zslParseLexRange. Returns false when either bound is
// neither "-", "+" nor a string starting with '[' or '('.
bool parse_lex_range(std::string_view min, std::string_view max, LexRange& range);

class ZSetObject final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kZSet;
  enum class Encoding : uint8_t { kListpack, kSkiplist };
  // Visits one element; the member view is valid during the call only.
  using Visit = std::function<void(std::string_view member, double score)>;

  ZSetObject();
  // An empty set starting in `encoding` (a skiplist stays one however small it gets).
  explicit ZSetObject(Encoding encoding);
  ~ZSetObject() override;

  Encoding encoding() const { return encoding_; }
  std::string_view encoding_name() const override;
  size_t free_effort() const override { return encoding_ == Encoding::kSkiplist ? count_ : 1; }
  size_t size() const override { return count_; }
  size_t memory() const override;
  std::unique_ptr<Object> clone() const override;
  void prefetch_members(std::span<const std::string_view> members, bool chain) const override {
    index_.prefetch(members, chain);
  }

  // The score of `member`, or nullopt.
  std::optional<double> score(std::string_view member) const;
  // Adds `member` or moves it to `score` (not NaN; `member` must not point into this set),
  // converting to a skiplist when the limits are passed. Returns true when the member is new.
  bool set(std::string_view member, double score);
  // Removes `member`. Returns true when it existed.
  bool erase(std::string_view member);
  // The 0-based ascending rank of `member`, or nullopt.
  std::optional<size_t> rank(std::string_view member) const;

  // How many elements lie below the range's lower bound (the rank of its first element) and how
  // many lie at or below its upper bound; the range holds [score_lower_rank, score_upper_rank).
  size_t score_lower_rank(const ScoreRange& range) const;
  size_t score_upper_rank(const ScoreRange& range) const;
  // The same for member ranges (meaningful when all scores are equal, as Redis says).
  size_t lex_lower_rank(const LexRange& range) const;
  size_t lex_upper_rank(const LexRange& range) const;

  // Visits `count` elements starting at ascending rank `start` (start + count <= size()), going
  // up, or with `reverse` going down from ascending rank `start`.
  void visit_ranks(size_t start, size_t count, bool reverse, const Visit& visit) const;
  // Removes the elements of ascending ranks [start, start + count). Returns how many.
  size_t erase_ranks(size_t start, size_t count);
  // Visits every element in order.
  void for_each(const Visit& visit) const { visit_ranks(0, count_, false, visit); }

  // ZSCAN step: visits the elements of the member index's buckets at `cursor` (about `count` of
  // them) and returns the next cursor, 0 when done. A listpack is visited whole in one call, in
  // order. The skiplist's cursor counts in reversed-bit order over the member index, so every
  // element present for the whole scan is visited at least once however the index is resized.
  uint64_t scan(uint64_t cursor, size_t count, const Visit& visit) const;

  // Converts a listpack to a skiplist (no-op for a skiplist): insertions past the limits do,
  // and SORT does, as Redis's sortCommand converts the sorted set it sorts.
  void convert_to_skiplist();

 private:
  struct Node;

  // Listpack helpers.
  size_t lp_find(std::string_view member, double* score) const;  // offset of the entry, or npos
  void lp_insert(std::string_view member, double score);
  size_t lp_offset_of_rank(size_t rank) const;
  // Skiplist helpers.
  template <typename Before>
  size_t sl_count_before(Before before) const;  // elements e with before(e) true (a prefix)
  Node* sl_node_at(size_t rank) const;          // 0-based
  void sl_insert(std::string_view member, double score);  // a new node, linked and hashed
  void sl_link(Node* node);    // links a node at its place by (score, member); counts it
  void sl_unlink(Node* node);  // unlinks a node (it stays in the hash); uncounts it
  void sl_move(Node* node, double score);  // gives a linked node a new score, at its new place
  // The pointer and span updates of a link / an unlink once the walk found, for every level in
  // use, the node after which `node` goes / that precedes it, and (link) those nodes' ranks.
  void sl_link_after(Node* node, Node* const* update, const size_t* rank);
  void sl_unlink_after(Node* node, Node* const* update);
  int random_level();

  Encoding encoding_ = Encoding::kListpack;
  size_t count_ = 0;
  size_t heap_bytes_ = 0;  // allocations below, as heap_footprint counts them
  // Listpack.
  PackedBuffer lp_;
  // Skiplist: a header node with the maximum level, and the highest level in use.
  Node* header_ = nullptr;
  int level_ = 1;
  // Hash from member to node, chained through the nodes.
  ChainedTable<Node> index_;
};

// ZADD's options (ZADD_IN_* in Redis); ZINCRBY is ZADD with `incr`.
struct ZAddFlags {
  bool nx = false;
  bool xx = false;
  bool gt = false;
  bool lt = false;
  bool ch = false;
  bool incr = false;
};

// One score/member pair of ZADD.
struct ScoredMember {
  double score;
  std::string_view member;
};

// What ZADD did: members added, members whose score changed, pairs that were applied (not skipped
// by NX/XX/GT/LT), and the last applied score (ZADD INCR's reply).
struct ZAddOutcome {
  int64_t added = 0;
  int64_t updated = 0;
  int64_t processed = 0;
  double score = 0;
};

// ZADD of `pairs` to the sorted set at `key` with `flags` (already checked for conflicts): XX
// never creates the key, and a key created for nothing is not kept. Errors: WRONGTYPE, and the
// NaN an INCR produces ("ERR resulting score is not a number (NaN)"), which changes nothing after
// the pairs before it.
Result<ZAddOutcome> zset_add(Store& store, std::string_view key,
                             std::span<const ScoredMember> pairs, ZAddFlags flags);

}  // namespace ringkv::engine
