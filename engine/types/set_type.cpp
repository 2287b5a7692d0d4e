// SetObject's two encodings and the pure set operations (see set_type.h). Memory is counted as it
// is allocated (each block's heap_footprint), so memory() is exact and O(1).
#include "engine/types/set_type.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_set>

#include "engine/commands/string_ops.h"
#include "engine/types/heap.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// SPOP pops one by one while the members left outnumber the popped ones by this factor divided
// out (Redis's SPOP_MOVE_STRATEGY_MUL); otherwise it rebuilds the set from the members that stay.
constexpr uint64_t kSpopMoveStrategyMul = 5;
// SRANDMEMBER copies the whole set and drops members when count is within this factor of the
// size (Redis's SRANDMEMBER_SUB_STRATEGY_MUL); otherwise it draws until it has count members.
constexpr uint64_t kSrandmemberSubStrategyMul = 3;

// The intset width (bytes) that holds v, as Redis's _intsetValueEncoding.
uint8_t width_for(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

// An integer member printed as Redis prints it (ll2string).
struct IntText {
  char buf[24];
  std::string_view view;
  explicit IntText(int64_t v) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    view = std::string_view(buf, static_cast<size_t>(end - buf));
  }
};

}  // namespace

// One hashtable member: a single block with the member bytes.
struct SetObject::Node {
  Node* chain;
  uint32_t size;
  char data[];

  std::string_view member() const { return {data, size}; }
  std::string_view key() const { return member(); }
};

SetObject::SetObject() : Object(kType) {}

SetObject::~SetObject() {
  std::free(ints_);
  table_.for_each([](Node* n) { std::free(n); });
}

std::string_view SetObject::encoding_name() const {
  return encoding_ == Encoding::kIntset ? "intset" : "hashtable";
}

size_t SetObject::memory() const {
  // Counted as glibc would size a request for the object (16-byte chunks, 8-byte header),
  // wherever it was allocated.
  return malloc_chunk_footprint(sizeof(SetObject)) + heap_bytes_;
}

std::unique_ptr<Object> SetObject::clone() const {
  auto copy = std::make_unique<SetObject>();
  copy->width_ = width_;
  copy->count_ = count_;
  if (encoding_ == Encoding::kIntset) {
    if (count_ > 0) {
      copy->ints_ = static_cast<char*>(checked_realloc(nullptr, count_ * width_));
      std::memcpy(copy->ints_, ints_, count_ * width_);
      copy->heap_bytes_ = heap_footprint(copy->ints_);
    }
    return copy;
  }
  copy->encoding_ = Encoding::kHashtable;
  copy->table_.copy_from(
      table_, [&](const Node& n) { return copy->make_node(n.member()); }, copy->heap_bytes_);
  return copy;
}

bool SetObject::contains(std::string_view member) const {
  if (encoding_ == Encoding::kIntset) {
    int64_t v = 0;
    size_t index = 0;
    return parse_int64(member, v) && int_find(v, index);
  }
  return table_.find(member) != nullptr;
}

bool SetObject::add(std::string_view member) {
  if (encoding_ == Encoding::kIntset) {
    int64_t v = 0;
    if (!parse_int64(member, v)) {
      convert_to_hashtable();
    } else {
      size_t index = 0;
      if (int_find(v, index)) return false;
      const uint8_t width = std::max(width_, width_for(v));
      int_resize(count_ + 1, width);
      std::memmove(ints_ + (index + 1) * width_, ints_ + index * width_, (count_ - index) * width_);
      int_put(index, v);
      ++count_;
      if (count_ > encoding_limits().set_max_intset_entries) convert_to_hashtable();
      return true;
    }
  }
  if (table_.find(member) != nullptr) return false;
  table_.insert(make_node(member));
  ++count_;
  table_.grow_if_needed(count_, heap_bytes_);
  return true;
}

bool SetObject::remove(std::string_view member) {
  if (encoding_ == Encoding::kIntset) {
    int64_t v = 0;
    size_t index = 0;
    if (!parse_int64(member, v) || !int_find(v, index)) return false;
    std::memmove(ints_ + index * width_, ints_ + (index + 1) * width_,
                 (count_ - index - 1) * width_);
    --count_;
    int_resize(count_, width_);
    return true;
  }
  Node** link = table_.find(member);
  if (link == nullptr) return false;
  Node* node = *link;
  ChainedTable<Node>::unlink(link);
  free_node(node);
  --count_;
  table_.shrink_if_needed(count_, heap_bytes_);
  return true;
}

void SetObject::for_each(const Visit& visit) const {
  if (encoding_ == Encoding::kIntset) {
    for (size_t i = 0; i < count_; ++i) visit(IntText(int_at(i)).view);
    return;
  }
  table_.for_each([&](const Node* n) { visit(n->member()); });
}

uint64_t SetObject::scan(uint64_t cursor, size_t count, const Visit& visit) const {
  if (encoding_ == Encoding::kIntset) {
    for_each(visit);
    return 0;
  }
  return table_.scan(cursor, count, [&](const Node& n) { visit(n.member()); });
}

std::string SetObject::random_member(const Random& rng) const {
  assert(count_ > 0);
  if (encoding_ == Encoding::kIntset) return std::string(IntText(int_at(rng() % count_)).view);
  return std::string(table_.random_node(rng)->member());
}

void SetObject::swap(SetObject& other) noexcept {
  std::swap(encoding_, other.encoding_);
  std::swap(width_, other.width_);
  std::swap(count_, other.count_);
  std::swap(heap_bytes_, other.heap_bytes_);
  std::swap(ints_, other.ints_);
  table_.swap(other.table_);
}

void SetObject::convert_to_hashtable() {
  assert(encoding_ == Encoding::kIntset);
  char* ints = ints_;
  const uint8_t width = width_;
  const size_t count = count_;
  encoding_ = Encoding::kHashtable;
  table_.fit(count, heap_bytes_);
  for (size_t i = 0; i < count; ++i) {
    int64_t v = 0;
    if (width == 2) {
      int16_t x;
      std::memcpy(&x, ints + i * 2, 2);
      v = x;
    } else if (width == 4) {
      int32_t x;
      std::memcpy(&x, ints + i * 4, 4);
      v = x;
    } else {
      std::memcpy(&v, ints + i * 8, 8);
    }
    table_.insert(make_node(IntText(v).view));
  }
  heap_bytes_ -= heap_footprint(ints);
  std::free(ints);
  ints_ = nullptr;
}

int64_t SetObject::int_at(size_t i) const {
  if (width_ == 2) {
    int16_t x;
    std::memcpy(&x, ints_ + i * 2, 2);
    return x;
  }
  if (width_ == 4) {
    int32_t x;
    std::memcpy(&x, ints_ + i * 4, 4);
    return x;
  }
  int64_t x;
  std::memcpy(&x, ints_ + i * 8, 8);
  return x;
}

void SetObject::int_put(size_t i, int64_t v) {
  if (width_ == 2) {
    const auto x = static_cast<int16_t>(v);
    std::memcpy(ints_ + i * 2, &x, 2);
  } else if (width_ == 4) {
    const auto x = static_cast<int32_t>(v);
    std::memcpy(ints_ + i * 4, &x, 4);
  } else {
    std::memcpy(ints_ + i * 8, &v, 8);
  }
}

bool SetObject::int_find(int64_t v, size_t& index) const {
  size_t lo = 0;
  size_t hi = count_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int64_t at = int_at(mid);
    if (at == v) {
      index = mid;
      return true;
    }
    if (at < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  index = lo;
  return false;
}

void SetObject::int_resize(size_t count, uint8_t width) {
  heap_bytes_ -= heap_footprint(ints_);
  if (count == 0) {
    std::free(ints_);
    ints_ = nullptr;
  } else if (width == width_) {
    // Like Redis's intset, the array is always exactly as big as its contents.
    ints_ = static_cast<char*>(checked_realloc(ints_, count * width));
  } else {
    // Widening: re-encode from the back so no value is overwritten before it is read.
    ints_ = static_cast<char*>(checked_realloc(ints_, count * width));
    for (size_t i = count_; i-- > 0;) {
      const int64_t v = int_at(i);
      const uint8_t old = width_;
      width_ = width;
      int_put(i, v);
      width_ = old;
    }
  }
  width_ = width;
  heap_bytes_ += heap_footprint(ints_);
}

SetObject::Node* SetObject::make_node(std::string_view member) {
  auto* node = static_cast<Node*>(checked_realloc(nullptr, sizeof(Node) + member.size()));
  node->chain = nullptr;
  node->size = static_cast<uint32_t>(member.size());
  if (!member.empty()) std::memcpy(node->data, member.data(), member.size());
  heap_bytes_ += heap_footprint(node);
  return node;
}

void SetObject::free_node(Node* node) {
  heap_bytes_ -= heap_footprint(node);
  std::free(node);
}

// -- operations on the store ------------------------------------------------------------------

Result<int64_t> set_add(Store& store, std::string_view key,
                        std::span<const std::string_view> members) {
  auto set = write_object<SetObject>(store, key, true);
  if (!set) return Error{set.error()};
  int64_t added = 0;
  for (std::string_view member : members) {
    if (set.value()->add(member)) ++added;
  }
  return added;
}

Result<int64_t> set_remove(Store& store, std::string_view key,
                           std::span<const std::string_view> members) {
  return remove_each<SetObject>(store, key, members, [](SetObject& set, std::string_view member) {
    return set.remove(member);
  });
}

Result<bool> set_move(Store& store, std::string_view source, std::string_view destination,
                      std::string_view member, const std::function<void()>& removed) {
  auto src = write_object<SetObject>(store, source, false);
  if (src.ok() && !src.value()) return false;
  if (!src) return Error{src.error()};
  const Entry* dst_entry = store.peek(destination);
  if (dst_entry != nullptr && dst_entry->type() != ValueType::kSet) return Error{err::kWrongType};
  if (source == destination) return src.value()->contains(member);
  if (!src.value()->remove(member)) return false;
  src.value().finish();
  if (removed) removed();
  auto dst = write_object<SetObject>(store, destination, true);
  dst.value()->add(member);
  return true;
}

Result<size_t> set_pop(Store& store, std::string_view key, uint64_t count,
                       const SetObject::Random& rng, const SetObject::Visit& visit) {
  auto guard = write_object<SetObject>(store, key, false);
  if (!guard) return Error{guard.error()};
  SetObject* set = guard.value().get();
  if (set == nullptr || count == 0) return size_t{0};
  const size_t size = set->size();
  if (count >= size) {
    // Redis returns the whole set through SUNION's temporary set, which an intset shares the
    // order of; the key is then deleted.
    set->for_each(visit);
    guard.value().finish();
    store.erase(key);
    return size;
  }
  const uint64_t remaining = size - count;
  if (remaining * kSpopMoveStrategyMul > count) {
    for (uint64_t i = 0; i < count; ++i) {
      const std::string member = set->random_member(rng);
      visit(member);
      set->remove(member);
    }
    return static_cast<size_t>(count);
  }
  // Most of the set goes: move the members that stay into a fresh set (which may be an intset
  // again) and reply the rest in the old set's order, as Redis does.
  SetObject kept;
  for (uint64_t i = 0; i < remaining; ++i) {
    const std::string member = set->random_member(rng);
    kept.add(member);
    set->remove(member);
  }
  set->for_each(visit);
  set->swap(kept);
  return static_cast<size_t>(count);
}

void set_random_members(const SetObject& set, int64_t count, const SetObject::Random& rng,
                        const SetObject::Visit& visit) {
  const uint64_t size = set.size();
  if (count < 0) {
    const uint64_t picks = static_cast<uint64_t>(-count);
    for (uint64_t i = 0; i < picks; ++i) visit(set.random_member(rng));
    return;
  }
  const uint64_t want = static_cast<uint64_t>(count);
  if (want >= size) {
    set.for_each(visit);
    return;
  }
  if (want * kSrandmemberSubStrategyMul > size) {
    // Most of the set: shuffle a copy of every member and take the first `want`.
    std::vector<std::string> all;
    all.reserve(size);
    set.for_each([&](std::string_view m) { all.emplace_back(m); });
    for (uint64_t i = 0; i < want; ++i) {
      std::swap(all[i], all[i + rng() % (all.size() - i)]);
      visit(all[i]);
    }
    return;
  }
  std::unordered_set<std::string> picked;
  while (picked.size() < want) {
    auto [it, fresh] = picked.insert(set.random_member(rng));
    if (fresh) visit(*it);
  }
}

namespace {

// Type-checks every key first, as Redis 7.0 does; missing keys come back as nullptr.
Result<std::vector<const SetObject*>> lookup_sets(Store& store,
                                                  std::span<const std::string_view> keys) {
  std::vector<const SetObject*> sets;
  sets.reserve(keys.size());
  for (std::string_view key : keys) {
    auto set = read_object<SetObject>(store, key);
    if (!set) return Error{set.error()};
    sets.push_back(*set);
  }
  return sets;
}

// Walks the intersection in the smallest set's order, calling `take` for each member until it
// returns false.
template <typename Take>
void walk_intersection(std::vector<const SetObject*> sets, Take take) {
  for (const SetObject* s : sets) {
    if (s == nullptr) return;
  }
  std::stable_sort(sets.begin(), sets.end(),
                   [](const SetObject* a, const SetObject* b) { return a->size() < b->size(); });
  bool more = true;
  sets[0]->for_each([&](std::string_view member) {
    if (!more) return;
    for (size_t j = 1; j < sets.size(); ++j) {
      if (sets[j] != sets[0] && !sets[j]->contains(member)) return;
    }
    more = take(member);
  });
}

}  // namespace

Result<std::vector<std::string>> set_inter(Store& store, std::span<const std::string_view> keys,
                                           size_t limit) {
  auto sets = lookup_sets(store, keys);
  if (!sets) return Error{sets.error()};
  std::vector<std::string> out;
  walk_intersection(*sets, [&](std::string_view member) {
    out.emplace_back(member);
    return limit == 0 || out.size() < limit;
  });
  return out;
}

Result<std::unique_ptr<SetObject>> set_combine(Store& store, SetOp op,
                                               std::span<const std::string_view> keys) {
  auto found = lookup_sets(store, keys);
  if (!found) return Error{found.error()};
  const std::vector<const SetObject*>& sets = *found;
  auto out = std::make_unique<SetObject>();
  if (op == SetOp::kInter) {
    walk_intersection(sets, [&](std::string_view member) {
      out->add(member);
      return true;
    });
  } else if (op == SetOp::kUnion) {
    for (const SetObject* s : sets) {
      if (s != nullptr) s->for_each([&](std::string_view m) { out->add(m); });
    }
  } else if (sets[0] != nullptr) {
    // Redis's choice between its two SDIFF algorithms (t_set.c): walk the first set probing
    // the others, or copy the first set and remove the others' members. Which one runs decides
    // whether a result of integers stays an intset, so it is mirrored exactly.
    uint64_t algo_one_work = 0;
    uint64_t algo_two_work = 0;
    for (const SetObject* s : sets) {
      if (s == nullptr) continue;
      algo_one_work += sets[0]->size();
      algo_two_work += s->size();
    }
    if (algo_one_work / 2 <= algo_two_work) {
      sets[0]->for_each([&](std::string_view m) {
        for (size_t j = 1; j < sets.size(); ++j) {
          if (sets[j] == nullptr) continue;
          if (sets[j] == sets[0] || sets[j]->contains(m)) return;
        }
        out->add(m);
      });
    } else {
      for (size_t j = 0; j < sets.size(); ++j) {
        if (sets[j] == nullptr) continue;
        sets[j]->for_each([&](std::string_view m) {
          if (j == 0) {
            out->add(m);
          } else {
            out->remove(m);
          }
        });
        if (out->size() == 0) break;
      }
    }
  }
  if (out->size() == 0) return std::unique_ptr<SetObject>();
  return out;
}

Result<int64_t> set_combine_store(Store& store, SetOp op, std::string_view destination,
                                  std::span<const std::string_view> keys) {
  auto result = set_combine(store, op, keys);
  if (!result) return Error{result.error()};
  std::unique_ptr<SetObject>& set = result.value();
  if (set == nullptr) {
    store.erase(destination);
    return int64_t{0};
  }
  const auto size = static_cast<int64_t>(set->size());
  store.put_object(destination, std::move(set));
  return size;
}

}  // namespace ringkv::engine
