// ZSetObject's two encodings and the range parsing of the sorted-set commands (see zset_type.h).
// Memory is counted as it is allocated (each block's heap_footprint), so memory() is exact
// and O(1).
#include "engine/types/zset_type.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common/random.h"
#include "engine/keyspace/store.h"
#include "engine/types/heap.h"
#include "engine/types/varint.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace {

constexpr size_t kNoEntry = static_cast<size_t>(-1);
// Redis's ZSKIPLIST_MAXLEVEL and ZSKIPLIST_P: a node reaches level k+1 with probability 1/4.
constexpr int kMaxLevel = 32;
constexpr uint32_t kLevelThreshold = 0xFFFF / 4;

// The order of elements: by score, then by member bytes (unsigned, shorter first on a tie).
bool element_less(double sa, std::string_view ma, double sb, std::string_view mb) {
  if (sa != sb) return sa < sb;
  return ma < mb;
}

// Listpack entries: an 8-byte score, then the length-prefixed member.
size_t zset_entry_size(std::string_view member) { return sizeof(double) + prefixed_size(member); }

// Reads the entry at `p`; returns the position after it.
const char* get_entry(const char* p, std::string_view* member, double* score) {
  std::memcpy(score, p, sizeof(double));
  return get_prefixed(p + sizeof(double), member);
}

void put_entry(char* p, std::string_view member, double score) {
  std::memcpy(p, &score, sizeof(double));
  put_prefixed(p + sizeof(double), member);
}

bool parse_lex_bound(std::string_view arg, LexBound& bound) {
  // Redis reads the C string: a NUL right after '+' or '-' ends it.
  if (arg.empty()) return false;
  const bool alone = arg.size() == 1 || arg[1] == '\0';
  switch (arg[0]) {
    case '+':
      if (!alone) return false;
      bound = {LexBound::Kind::kPosInf, {}, true};
      return true;
    case '-':
      if (!alone) return false;
      bound = {LexBound::Kind::kNegInf, {}, true};
      return true;
    case '(':
      bound = {LexBound::Kind::kValue, arg.substr(1), true};
      return true;
    case '[':
      bound = {LexBound::Kind::kValue, arg.substr(1), false};
      return true;
    default:
      return false;
  }
}

}  // namespace

bool lex_gte_min(std::string_view member, const LexBound& min) {
  switch (min.kind) {
    case LexBound::Kind::kNegInf:
      return true;
    case LexBound::Kind::kPosInf:
      return false;
    case LexBound::Kind::kValue:
      break;
  }
  return min.exclusive ? member > min.value : member >= min.value;
}

bool lex_lte_max(std::string_view member, const LexBound& max) {
  switch (max.kind) {
    case LexBound::Kind::kNegInf:
      return false;
    case LexBound::Kind::kPosInf:
      return true;
    case LexBound::Kind::kValue:
      break;
  }
  return max.exclusive ? member < max.value : member <= max.value;
}

bool parse_score_bound(std::string_view arg, double& value, bool& exclusive) {
  exclusive = !arg.empty() && arg[0] == '(';
  if (exclusive) arg.remove_prefix(1);
  // strtod on the C string: an empty string reads as 0 and parsing stops at an embedded NUL,
  // both accepted by Redis as long as nothing else follows the number.
  const std::string text(arg);
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return *end == '\0' && !std::isnan(value);
}

bool parse_score(std::string_view arg, double& value) {
  if (arg.empty() || std::isspace(static_cast<unsigned char>(arg[0]))) return false;
  const std::string text(arg);
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  if (static_cast<size_t>(end - text.c_str()) != text.size() || std::isnan(value)) return false;
  return !(errno == ERANGE && (std::isinf(value) || value == 0));
}

bool parse_score_range(std::string_view min, std::string_view max, ScoreRange& range) {
  return parse_score_bound(min, range.min, range.min_exclusive) &&
         parse_score_bound(max, range.max, range.max_exclusive);
}

bool parse_lex_range(std::string_view min, std::string_view max, LexRange& range) {
  return parse_lex_bound(min, range.min) && parse_lex_bound(max, range.max);
}

// One skip list node: score, links and member in a single block. The header node has kMaxLevel
// levels and no member.
struct ZSetObject::Node {
  struct Level {
    Node* forward;
    size_t span;  // elements passed by following `forward` (rank distance)
  };
  double score;
  Node* backward;
  Node* chain;  // the next node in the member index's bucket
  uint32_t member_size;
  uint8_t level_count;
  Level level[];  // level_count of them, then the member bytes

  std::string_view member() const {
    return {reinterpret_cast<const char*>(level + level_count), member_size};
  }
  std::string_view key() const { return member(); }
};

ZSetObject::ZSetObject() : Object(kType) {}

ZSetObject::ZSetObject(Encoding encoding) : Object(kType) {
  if (encoding == Encoding::kSkiplist) convert_to_skiplist();
}

ZSetObject::~ZSetObject() {
  if (header_ != nullptr) {
    for (Node* n = header_->level[0].forward; n != nullptr;) {
      Node* next = n->level[0].forward;
      std::free(n);
      n = next;
    }
    std::free(header_);
  }
}

std::string_view ZSetObject::encoding_name() const {
  return encoding_ == Encoding::kListpack ? "listpack" : "skiplist";
}

size_t ZSetObject::memory() const {
  // What glibc gives a request of the object's size (16-byte chunks with an 8-byte header).
  return malloc_chunk_footprint(sizeof(ZSetObject)) + heap_bytes_;
}

std::unique_ptr<Object> ZSetObject::clone() const {
  auto copy = std::make_unique<ZSetObject>();
  if (encoding_ == Encoding::kListpack) {
    copy->lp_.copy_from(lp_, copy->heap_bytes_);
    copy->count_ = count_;
    return copy;
  }
  copy->convert_to_skiplist();
  for (const Node* n = header_->level[0].forward; n != nullptr; n = n->level[0].forward) {
    copy->sl_insert(n->member(), n->score);
  }
  return copy;
}

std::optional<double> ZSetObject::score(std::string_view member) const {
  if (encoding_ == Encoding::kListpack) {
    double score = 0;
    if (lp_find(member, &score) == kNoEntry) return std::nullopt;
    return score;
  }
  Node** link = index_.find(member);
  if (link == nullptr) return std::nullopt;
  return (*link)->score;
}

bool ZSetObject::set(std::string_view member, double score) {
  assert(!std::isnan(score));
  if (encoding_ == Encoding::kListpack &&
      member.size() > encoding_limits().zset_max_listpack_value) {
    convert_to_skiplist();
  }
  if (encoding_ == Encoding::kListpack) {
    // The listpack keeps scores as text in Redis, where -0 reads back as 0.
    if (score == 0) score = 0;
    double old = 0;
    const size_t at = lp_find(member, &old);
    if (at != kNoEntry) {
      if (old == score) return false;
      lp_.splice(at, zset_entry_size(member), 0, heap_bytes_);
      lp_insert(member, score);
      return false;
    }
    if (count_ + 1 > encoding_limits().zset_max_listpack_entries) {
      convert_to_skiplist();
      sl_insert(member, score);
      return true;
    }
    lp_insert(member, score);
    ++count_;
    return true;
  }
  if (Node** link = index_.find(member)) {
    Node* node = *link;
    if (node->score == score) return false;
    sl_move(node, score);
    return false;
  }
  sl_insert(member, score);
  return true;
}

bool ZSetObject::erase(std::string_view member) {
  if (encoding_ == Encoding::kListpack) {
    double score = 0;
    const size_t at = lp_find(member, &score);
    if (at == kNoEntry) return false;
    lp_.splice(at, zset_entry_size(member), 0, heap_bytes_);
    --count_;
    return true;
  }
  Node** link = index_.find(member);
  if (link == nullptr) return false;
  Node* node = *link;
  ChainedTable<Node>::unlink(link);
  sl_unlink(node);
  heap_bytes_ -= heap_footprint(node);
  std::free(node);
  index_.shrink_if_needed(count_, heap_bytes_);
  return true;
}

std::optional<size_t> ZSetObject::rank(std::string_view member) const {
  if (encoding_ == Encoding::kListpack) {
    const char* p = lp_.data();
    const char* end = lp_.end();
    for (size_t r = 0; p < end; ++r) {
      std::string_view m;
      double s = 0;
      p = get_entry(p, &m, &s);
      if (m == member) return r;
    }
    return std::nullopt;
  }
  Node** link = index_.find(member);
  if (link == nullptr) return std::nullopt;
  const Node* node = *link;
  return sl_count_before([node](const Node* n) {
    return element_less(n->score, n->member(), node->score, node->member());
  });
}

template <typename Before>
size_t ZSetObject::sl_count_before(Before before) const {
  size_t rank = 0;
  const Node* x = header_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->level[i].forward != nullptr && before(x->level[i].forward)) {
      rank += x->level[i].span;
      x = x->level[i].forward;
    }
  }
  return rank;
}

size_t ZSetObject::score_lower_rank(const ScoreRange& range) const {
  auto before = [&](double s) { return range.min_exclusive ? s <= range.min : s < range.min; };
  if (encoding_ == Encoding::kSkiplist) {
    return sl_count_before([&](const Node* n) { return before(n->score); });
  }
  size_t rank = 0;
  for_each([&](std::string_view, double s) { rank += before(s) ? 1 : 0; });
  return rank;
}

size_t ZSetObject::score_upper_rank(const ScoreRange& range) const {
  auto within = [&](double s) { return range.max_exclusive ? s < range.max : s <= range.max; };
  if (encoding_ == Encoding::kSkiplist) {
    return sl_count_before([&](const Node* n) { return within(n->score); });
  }
  size_t rank = 0;
  for_each([&](std::string_view, double s) { rank += within(s) ? 1 : 0; });
  return rank;
}

size_t ZSetObject::lex_lower_rank(const LexRange& range) const {
  if (encoding_ == Encoding::kSkiplist) {
    return sl_count_before([&](const Node* n) { return !lex_gte_min(n->member(), range.min); });
  }
  // A prefix, as in the skip list: stop at the first member inside the bound.
  size_t rank = 0;
  bool inside = false;
  for_each([&](std::string_view m, double) {
    inside = inside || lex_gte_min(m, range.min);
    rank += inside ? 0 : 1;
  });
  return rank;
}

size_t ZSetObject::lex_upper_rank(const LexRange& range) const {
  if (encoding_ == Encoding::kSkiplist) {
    return sl_count_before([&](const Node* n) { return lex_lte_max(n->member(), range.max); });
  }
  size_t rank = 0;
  bool past = false;
  for_each([&](std::string_view m, double) {
    past = past || !lex_lte_max(m, range.max);
    rank += past ? 0 : 1;
  });
  return rank;
}

void ZSetObject::visit_ranks(size_t start, size_t count, bool reverse, const Visit& visit) const {
  if (count == 0) return;
  assert(reverse ? start < count_ && count <= start + 1 : start + count <= count_);
  if (encoding_ == Encoding::kSkiplist) {
    const Node* n = sl_node_at(start);
    for (size_t i = 0; i < count; ++i) {
      visit(n->member(), n->score);
      n = reverse ? n->backward : n->level[0].forward;
    }
    return;
  }
  std::string_view m;
  double s = 0;
  if (!reverse) {
    const char* p = lp_.data() + lp_offset_of_rank(start);
    for (size_t i = 0; i < count; ++i) {
      p = get_entry(p, &m, &s);
      visit(m, s);
    }
    return;
  }
  // Entries have no back links: note where each one starts, then walk the notes backwards.
  std::vector<const char*> starts;
  starts.reserve(start + 1);
  const char* p = lp_.data();
  for (size_t i = 0; i <= start; ++i) {
    starts.push_back(p);
    p = get_entry(p, &m, &s);
  }
  for (size_t i = 0; i < count; ++i) {
    get_entry(starts[start - i], &m, &s);
    visit(m, s);
  }
}

size_t ZSetObject::erase_ranks(size_t start, size_t count) {
  if (start >= count_) return 0;
  count = std::min(count, count_ - start);
  if (count == 0) return 0;
  if (encoding_ == Encoding::kListpack) {
    const size_t from = lp_offset_of_rank(start);
    const char* p = lp_.data() + from;
    std::string_view m;
    double s = 0;
    for (size_t i = 0; i < count; ++i) p = get_entry(p, &m, &s);
    lp_.splice(from, static_cast<size_t>(p - (lp_.data() + from)), 0, heap_bytes_);
    count_ -= count;
    return count;
  }
  Node* n = sl_node_at(start);
  for (size_t i = 0; i < count; ++i) {
    Node* next = n->level[0].forward;
    ChainedTable<Node>::unlink(index_.find(n->member()));
    sl_unlink(n);
    heap_bytes_ -= heap_footprint(n);
    std::free(n);
    n = next;
  }
  index_.shrink_if_needed(count_, heap_bytes_);
  return count;
}

void ZSetObject::convert_to_skiplist() {
  if (encoding_ != Encoding::kListpack) return;
  const size_t header_size = sizeof(Node) + kMaxLevel * sizeof(Node::Level);
  header_ = static_cast<Node*>(checked_realloc(nullptr, header_size));
  std::memset(static_cast<void*>(header_), 0, header_size);
  header_->level_count = kMaxLevel;
  heap_bytes_ += heap_footprint(header_);
  level_ = 1;
  const PackedBuffer lp = std::move(lp_);
  heap_bytes_ -= lp.heap_size();
  const size_t n = std::exchange(count_, 0);
  encoding_ = Encoding::kSkiplist;
  index_.fit(n, heap_bytes_);
  const char* p = lp.data();
  while (p < lp.end()) {
    std::string_view m;
    double s = 0;
    p = get_entry(p, &m, &s);
    sl_insert(m, s);
  }
}

size_t ZSetObject::lp_find(std::string_view member, double* score) const {
  const char* p = lp_.data();
  const char* end = lp_.end();
  while (p < end) {
    std::string_view m;
    const char* next = get_entry(p, &m, score);
    if (m == member) return static_cast<size_t>(p - lp_.data());
    p = next;
  }
  return kNoEntry;
}

void ZSetObject::lp_insert(std::string_view member, double score) {
  const char* p = lp_.data();
  const char* end = lp_.end();
  while (p < end) {
    std::string_view m;
    double s = 0;
    const char* next = get_entry(p, &m, &s);
    if (element_less(score, member, s, m)) break;
    p = next;
  }
  const size_t at = static_cast<size_t>(p - lp_.data());
  put_entry(lp_.splice(at, 0, zset_entry_size(member), heap_bytes_), member, score);
}

size_t ZSetObject::lp_offset_of_rank(size_t rank) const {
  const char* p = lp_.data();
  std::string_view m;
  double s = 0;
  for (size_t i = 0; i < rank; ++i) p = get_entry(p, &m, &s);
  return static_cast<size_t>(p - lp_.data());
}

ZSetObject::Node* ZSetObject::sl_node_at(size_t rank) const {
  size_t traversed = 0;
  Node* x = header_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->level[i].forward != nullptr && traversed + x->level[i].span <= rank + 1) {
      traversed += x->level[i].span;
      x = x->level[i].forward;
    }
    if (traversed == rank + 1) return x;
  }
  assert(false && "rank out of range");
  return nullptr;
}

void ZSetObject::sl_insert(std::string_view member, double score) {
  const int lvl = random_level();
  const size_t size = sizeof(Node) + static_cast<size_t>(lvl) * sizeof(Node::Level) + member.size();
  Node* node = static_cast<Node*>(checked_realloc(nullptr, size));
  heap_bytes_ += heap_footprint(node);
  node->score = score;
  node->member_size = static_cast<uint32_t>(member.size());
  node->level_count = static_cast<uint8_t>(lvl);
  if (!member.empty()) {
    std::memcpy(reinterpret_cast<char*>(node->level + lvl), member.data(), member.size());
  }
  sl_link(node);
  index_.insert(node);
  index_.grow_if_needed(count_, heap_bytes_);
}

void ZSetObject::sl_link(Node* node) {
  const double score = node->score;
  const std::string_view member = node->member();
  const int lvl = node->level_count;
  Node* update[kMaxLevel];
  size_t rank[kMaxLevel];
  Node* x = header_;
  for (int i = level_ - 1; i >= 0; --i) {
    rank[i] = i == level_ - 1 ? 0 : rank[i + 1];
    while (x->level[i].forward != nullptr &&
           element_less(x->level[i].forward->score, x->level[i].forward->member(), score, member)) {
      rank[i] += x->level[i].span;
      x = x->level[i].forward;
    }
    update[i] = x;
  }
  if (lvl > level_) {
    for (int i = level_; i < lvl; ++i) {
      rank[i] = 0;
      update[i] = header_;
      header_->level[i].span = count_;
    }
    level_ = lvl;
  }
  sl_link_after(node, update, rank);
  ++count_;
}

void ZSetObject::sl_link_after(Node* node, Node* const* update, const size_t* rank) {
  const int lvl = node->level_count;
  for (int i = 0; i < lvl; ++i) {
    node->level[i].forward = update[i]->level[i].forward;
    update[i]->level[i].forward = node;
    node->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
    update[i]->level[i].span = rank[0] - rank[i] + 1;
  }
  for (int i = lvl; i < level_; ++i) ++update[i]->level[i].span;
  node->backward = update[0] == header_ ? nullptr : update[0];
  if (node->level[0].forward != nullptr) node->level[0].forward->backward = node;
}

void ZSetObject::sl_unlink(Node* node) {
  Node* update[kMaxLevel];
  Node* x = header_;
  for (int i = level_ - 1; i >= 0; --i) {
    while (x->level[i].forward != nullptr && x->level[i].forward != node &&
           element_less(x->level[i].forward->score, x->level[i].forward->member(), node->score,
                        node->member())) {
      x = x->level[i].forward;
    }
    update[i] = x;
  }
  sl_unlink_after(node, update);
  while (level_ > 1 && header_->level[level_ - 1].forward == nullptr) --level_;
  --count_;
}

// Unlinking and linking again would walk the list twice, one walk after the other; the two walks
// are independent, so they go down the levels side by side, and the cache misses of each (most
// of a walk's time in a big set) overlap. The new place is found in the list as it is without
// `node`: a link to it is followed past it, and ranks past it count one less.
void ZSetObject::sl_move(Node* node, double score) {
  const std::string_view member = node->member();
  Node* old_update[kMaxLevel];
  Node* new_update[kMaxLevel];
  size_t new_rank[kMaxLevel];  // ranks with `node` counted, until the end
  size_t old_rank = 0;
  Node* xo = header_;
  Node* xn = header_;
  size_t rn = 0;
  for (int i = level_ - 1; i >= 0; --i) {
    bool old_walks = true;
    bool new_walks = true;
    while (old_walks || new_walks) {
      if (old_walks) {
        Node* f = xo->level[i].forward;
        if (f != nullptr && f != node && element_less(f->score, f->member(), node->score, member)) {
          old_rank += xo->level[i].span;
          xo = f;
        } else {
          old_walks = false;
        }
      }
      if (new_walks) {
        Node* f = xn->level[i].forward;
        size_t span = xn->level[i].span;
        if (f == node) {
          span += node->level[i].span;
          f = node->level[i].forward;
        }
        if (f != nullptr && element_less(f->score, f->member(), score, member)) {
          rn += span;
          xn = f;
        } else {
          new_walks = false;
        }
      }
    }
    old_update[i] = xo;
    new_update[i] = xn;
    new_rank[i] = rn;
  }
  // Unlinked (the levels in use stay: the node comes back with its own), then linked at its new
  // place with ranks counted without it (it had rank old_rank + 1).
  sl_unlink_after(node, old_update);
  node->score = score;
  for (int i = 0; i < level_; ++i) {
    if (new_rank[i] > old_rank) --new_rank[i];
  }
  sl_link_after(node, new_update, new_rank);
}

void ZSetObject::sl_unlink_after(Node* node, Node* const* update) {
  for (int i = 0; i < level_; ++i) {
    if (update[i]->level[i].forward == node) {
      update[i]->level[i].span += node->level[i].span - 1;
      update[i]->level[i].forward = node->level[i].forward;
    } else {
      --update[i]->level[i].span;
    }
  }
  if (node->level[0].forward != nullptr) node->level[0].forward->backward = node->backward;
}

int ZSetObject::random_level() {
  int level = 1;
  while (level < kMaxLevel && (common::next_random() & 0xFFFF) < kLevelThreshold) ++level;
  return level;
}

uint64_t ZSetObject::scan(uint64_t cursor, size_t count, const Visit& visit) const {
  if (encoding_ == Encoding::kListpack) {
    for_each(visit);
    return 0;
  }
  return index_.scan(cursor, count, [&](const Node& n) { visit(n.member(), n.score); });
}

Result<ZAddOutcome> zset_add(Store& store, std::string_view key,
                             std::span<const ScoredMember> pairs, ZAddFlags flags) {
  auto found = write_object<ZSetObject>(store, key, !flags.xx);
  if (!found) return Error{found.error()};
  auto& zset = found.value();
  ZAddOutcome out;
  for (size_t i = 0; zset && i < pairs.size(); ++i) {
    const std::string_view member = pairs[i].member;
    double score = pairs[i].score;
    const auto current = zset->score(member);
    if (current) {
      if (flags.nx) continue;
      if (flags.incr) {
        score += *current;
        if (std::isnan(score)) return Error{protocol::err::kScoreNaN};
      }
      if ((flags.lt && score >= *current) || (flags.gt && score <= *current)) continue;
      ++out.processed;
      out.score = score;
      if (score != *current) {
        zset->set(member, score);
        ++out.updated;
      }
    } else if (!flags.xx) {
      zset->set(member, score);
      ++out.added;
      ++out.processed;
      out.score = score;
    }
  }
  return out;
}

}  // namespace ringkv::engine
