// HashObject's two encodings and the pure hash operations (see hash_type.h). Memory is counted
// as it is allocated (each block's heap_footprint), so memory() is exact and O(1).
#include "engine/types/hash_type.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "engine/commands/string_ops.h"
#include "engine/types/heap.h"
#include "engine/types/varint.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr size_t kNpos = static_cast<size_t>(-1);

}  // namespace

// One hashtable field: a single block with the field bytes followed by the value bytes.
struct HashObject::Node {
  Node* chain;
  uint32_t field_size;
  uint32_t value_size;
  char data[];

  std::string_view field() const { return {data, field_size}; }
  std::string_view value() const { return {data + field_size, value_size}; }
  std::string_view key() const { return field(); }
};

HashObject::HashObject() : Object(kType) {}

HashObject::~HashObject() {
  table_.for_each([](Node* n) { std::free(n); });
}

std::string_view HashObject::encoding_name() const {
  return encoding_ == Encoding::kListpack ? "listpack" : "hashtable";
}

size_t HashObject::memory() const {
  // The object itself may live anywhere (the store allocates it, tests may not): count what
  // glibc would give a request of its size (16-byte chunks with an 8-byte header).
  return malloc_chunk_footprint(sizeof(HashObject)) + heap_bytes_;
}

std::unique_ptr<Object> HashObject::clone() const {
  auto copy = std::make_unique<HashObject>();
  if (encoding_ == Encoding::kListpack) {
    copy->lp_.copy_from(lp_, copy->heap_bytes_);
    copy->count_ = count_;
    return copy;
  }
  copy->encoding_ = Encoding::kHashtable;
  copy->table_.copy_from(
      table_, [&](const Node& n) { return copy->make_node(n.field(), n.value()); },
      copy->heap_bytes_);
  copy->count_ = count_;
  return copy;
}

std::optional<std::string_view> HashObject::get(std::string_view field) const {
  if (encoding_ == Encoding::kListpack) {
    const size_t at = lp_find(field);
    if (at == kNpos) return std::nullopt;
    std::string_view f;
    std::string_view v;
    get_prefixed(get_prefixed(lp_.data() + at, &f), &v);
    return v;
  }
  Node** link = table_.find(field);
  if (link == nullptr) return std::nullopt;
  return (*link)->value();
}

bool HashObject::set(std::string_view field, std::string_view value) {
  if (encoding_ == Encoding::kListpack &&
      (field.size() > encoding_limits().hash_max_listpack_value ||
       value.size() > encoding_limits().hash_max_listpack_value)) {
    convert_to_hashtable();
  }
  if (encoding_ == Encoding::kListpack) {
    const size_t at = lp_find(field);
    if (at != kNpos) {
      std::string_view old;
      const size_t value_at = static_cast<size_t>(get_prefixed(lp_.data() + at, &old) - lp_.data());
      get_prefixed(lp_.data() + value_at, &old);
      put_prefixed(lp_.splice(value_at, prefixed_size(old), prefixed_size(value), heap_bytes_),
                   value);
      // As Redis's hashTypeSet: an update converts too when the limit was lowered meanwhile.
      if (count_ > encoding_limits().hash_max_listpack_entries) convert_to_hashtable();
      return false;
    }
    char* p = lp_.splice(lp_.size(), 0, prefixed_size(field) + prefixed_size(value), heap_bytes_);
    put_prefixed(put_prefixed(p, field), value);
    ++count_;
    if (count_ > encoding_limits().hash_max_listpack_entries) convert_to_hashtable();
    return true;
  }
  if (Node** link = table_.find(field)) {
    Node* node = *link;
    if (node->value_size == value.size()) {
      if (!value.empty()) std::memcpy(node->data + node->field_size, value.data(), value.size());
      return false;
    }
    Node* fresh = make_node(field, value);
    fresh->chain = node->chain;
    *link = fresh;
    free_node(node);
    return false;
  }
  table_.insert(make_node(field, value));
  ++count_;
  table_.grow_if_needed(count_, heap_bytes_);
  return true;
}

bool HashObject::erase(std::string_view field) {
  if (encoding_ == Encoding::kListpack) {
    const size_t at = lp_find(field);
    if (at == kNpos) return false;
    std::string_view f;
    std::string_view v;
    const char* end = get_prefixed(get_prefixed(lp_.data() + at, &f), &v);
    lp_.splice(at, static_cast<size_t>(end - (lp_.data() + at)), 0, heap_bytes_);
    --count_;
    return true;
  }
  Node** link = table_.find(field);
  if (link == nullptr) return false;
  Node* node = *link;
  ChainedTable<Node>::unlink(link);
  free_node(node);
  --count_;
  table_.shrink_if_needed(count_, heap_bytes_);
  return true;
}

void HashObject::for_each(const Visit& visit) const {
  if (encoding_ == Encoding::kListpack) {
    const char* p = lp_.data();
    const char* end = lp_.end();
    while (p < end) {
      std::string_view f;
      std::string_view v;
      p = get_prefixed(get_prefixed(p, &f), &v);
      visit(f, v);
    }
    return;
  }
  table_.for_each([&](const Node* n) { visit(n->field(), n->value()); });
}

uint64_t HashObject::scan(uint64_t cursor, size_t count, const Visit& visit) const {
  if (encoding_ == Encoding::kListpack) {
    for_each(visit);
    return 0;
  }
  return table_.scan(cursor, count, [&](const Node& n) { visit(n.field(), n.value()); });
}

std::pair<std::string_view, std::string_view> HashObject::random_entry(
    const std::function<uint64_t()>& rng) const {
  assert(count_ > 0);
  if (encoding_ == Encoding::kListpack) {
    size_t skip = rng() % count_;
    std::pair<std::string_view, std::string_view> out;
    const char* p = lp_.data();
    do {
      p = get_prefixed(get_prefixed(p, &out.first), &out.second);
    } while (skip-- > 0);
    return out;
  }
  const Node* node = table_.random_node(rng);
  return {node->field(), node->value()};
}

void HashObject::random_distinct(size_t count, const std::function<uint64_t()>& rng,
                                 const Visit& visit) const {
  assert(count < count_);
  if (encoding_ == Encoding::kListpack) {
    // Selection sampling: each field is taken with probability needed / remaining.
    size_t needed = count;
    size_t remaining = count_;
    for_each([&](std::string_view field, std::string_view value) {
      if (needed > 0 && rng() % remaining < needed) {
        visit(field, value);
        --needed;
      }
      --remaining;
    });
    return;
  }
  std::vector<const Node*> nodes;
  nodes.reserve(count_);
  table_.for_each([&](const Node* n) { nodes.push_back(n); });
  for (size_t i = 0; i < count; ++i) {
    std::swap(nodes[i], nodes[i + rng() % (nodes.size() - i)]);
    visit(nodes[i]->field(), nodes[i]->value());
  }
}

void HashObject::convert_to_hashtable() {
  assert(encoding_ == Encoding::kListpack);
  const PackedBuffer lp = std::move(lp_);
  heap_bytes_ -= lp.heap_size();
  encoding_ = Encoding::kHashtable;
  table_.fit(count_, heap_bytes_);
  const char* p = lp.data();
  while (p < lp.end()) {
    std::string_view f;
    std::string_view v;
    p = get_prefixed(get_prefixed(p, &f), &v);
    table_.insert(make_node(f, v));
  }
}

HashObject::Node* HashObject::make_node(std::string_view field, std::string_view value) {
  auto* node =
      static_cast<Node*>(checked_realloc(nullptr, sizeof(Node) + field.size() + value.size()));
  node->chain = nullptr;
  node->field_size = static_cast<uint32_t>(field.size());
  node->value_size = static_cast<uint32_t>(value.size());
  if (!field.empty()) std::memcpy(node->data, field.data(), field.size());
  if (!value.empty()) std::memcpy(node->data + field.size(), value.data(), value.size());
  heap_bytes_ += heap_footprint(node);
  return node;
}

void HashObject::free_node(Node* node) {
  heap_bytes_ -= heap_footprint(node);
  std::free(node);
}

size_t HashObject::lp_find(std::string_view field) const {
  const char* p = lp_.data();
  const char* end = lp_.end();
  while (p < end) {
    std::string_view f;
    std::string_view v;
    const char* value_at = get_prefixed(p, &f);
    if (f == field) return static_cast<size_t>(p - lp_.data());
    p = get_prefixed(value_at, &v);
  }
  return kNpos;
}

Result<const HashObject*> lookup_hash(Store& store, std::string_view key) {
  return read_object<HashObject>(store, key);
}

Result<int64_t> hash_set(Store& store, std::string_view key,
                         std::span<const std::string_view> field_values) {
  auto hash = write_object<HashObject>(store, key, true);
  if (!hash) return Error{hash.error()};
  int64_t added = 0;
  for (size_t i = 0; i + 1 < field_values.size(); i += 2) {
    if (hash.value()->set(field_values[i], field_values[i + 1])) ++added;
  }
  return added;
}

Result<bool> hash_set_nx(Store& store, std::string_view key, std::string_view field,
                         std::string_view value) {
  auto hash = write_object<HashObject>(store, key, true);
  if (!hash) return Error{hash.error()};
  if (hash.value()->get(field)) return false;
  hash.value()->set(field, value);
  return true;
}

Result<int64_t> hash_del(Store& store, std::string_view key,
                         std::span<const std::string_view> fields) {
  return remove_each<HashObject>(store, key, fields, [](HashObject& hash, std::string_view field) {
    return hash.erase(field);
  });
}

Result<int64_t> hash_incr_by(Store& store, std::string_view key, std::string_view field,
                             int64_t delta) {
  auto hash = write_object<HashObject>(store, key, true);
  if (!hash) return Error{hash.error()};
  int64_t value = 0;
  if (auto current = hash.value()->get(field)) {
    if (!parse_int64(*current, value)) return Error{kHashValueNotInteger};
  }
  int64_t result = 0;
  if (__builtin_add_overflow(value, delta, &result)) return Error{err::kOverflow};
  hash.value()->set(field, std::to_string(result));
  return result;
}

Result<std::string> hash_incr_by_float(Store& store, std::string_view key, std::string_view field,
                                       long double increment) {
  auto hash = write_object<HashObject>(store, key, true);
  if (!hash) return Error{hash.error()};
  long double value = 0;
  if (auto current = hash.value()->get(field)) {
    if (!parse_long_double(*current, value)) return Error{kHashValueNotFloat};
  }
  value += increment;
  if (std::isnan(value) || std::isinf(value)) return Error{err::kIncrFloatNaN};
  std::string text = format_long_double(value);
  hash.value()->set(field, text);
  return text;
}

void hash_random_fields(const HashObject& hash, int64_t count, const std::function<uint64_t()>& rng,
                        const HashObject::Visit& visit) {
  const size_t size = hash.size();
  if (count < 0) {
    const uint64_t picks = static_cast<uint64_t>(-count);
    if (hash.encoding() == HashObject::Encoding::kListpack) {
      // At most encoding_limits().hash_max_listpack_entries pairs: index them once instead of
      // walking per pick.
      std::vector<std::pair<std::string_view, std::string_view>> pairs;
      pairs.reserve(size);
      hash.for_each([&](std::string_view f, std::string_view v) { pairs.emplace_back(f, v); });
      for (uint64_t i = 0; i < picks; ++i) {
        const auto& [f, v] = pairs[rng() % size];
        visit(f, v);
      }
      return;
    }
    for (uint64_t i = 0; i < picks; ++i) {
      auto [f, v] = hash.random_entry(rng);
      visit(f, v);
    }
    return;
  }
  if (static_cast<uint64_t>(count) >= size) {
    hash.for_each(visit);
    return;
  }
  hash.random_distinct(static_cast<size_t>(count), rng, visit);
}

}  // namespace ringkv::engine
