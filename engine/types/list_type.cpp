// ListObject's node array and packed nodes, and the pure list operations (see list_type.h).
// Memory is counted as it is allocated (each block's heap_footprint), so memory() is exact
// and O(1).
#include "engine/types/list_type.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include "common/numbers.h"
#include "engine/rdb/rdb_format.h"
#include "engine/types/encoding_limits.h"
#include "engine/types/heap.h"
#include "engine/types/varint.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace {

// Bytes one element takes in a node: its length before and after it.
size_t entry_size(std::string_view s) { return 2 * varint_size(s.size()) + s.size(); }

// Writes the entry for `s` at `p`; returns the position after it.
char* write_entry(char* p, std::string_view s) {
  uint64_t v = s.size();
  const size_t n = varint_size(v);
  p = put_prefixed(p, s);
  // The trailing length is the same varint with its bytes in reverse order, so a reader coming
  // from the end meets the low bits first.
  char* back = p + n;
  for (uint64_t x = v; x >= 0x80; x >>= 7) *--back = static_cast<char>(x | 0x80);
  *--back = static_cast<char>(v >> (7 * (n - 1)));
  return p + n;
}

// quicklist.c (7.0.15): a node's listpack size limits for fill -1..-5, the limit on any node that
// is limited by count, the slack added to a pushed element's length, and an empty listpack's
// header and end byte.
constexpr size_t kOptimizationLevel[] = {4096, 8192, 16384, 32768, 65536};
constexpr size_t kSizeSafetyLimit = 8192;
constexpr size_t kSizeEstimateOverhead = 8;
constexpr size_t kListpackEmpty = 7;
// _quicklistNodeAllowMerge (7.0.15) still takes a ziplist's header and end (11 bytes) off the
// sum of the two sizes, so a merged node may end up to 4 bytes over the limit.
constexpr size_t kMergeOverlap = 11;
constexpr int kFillMax = (1 << 15) - 1;
constexpr int kCompressMax = (1 << 16) - 1;

bool meets_optimization(size_t size, int fill) {
  if (fill >= 0) return false;
  const size_t level = static_cast<size_t>(-static_cast<int64_t>(fill)) - 1;
  return level < std::size(kOptimizationLevel) && size <= kOptimizationLevel[level];
}

size_t lp_size(std::string_view s) { return rdb::listpack_element_size(s); }

}  // namespace

const char* ListObject::read_forward(const char* p, std::string_view* out) {
  p = get_prefixed(p, out);
  return p + varint_size(out->size());
}

const char* ListObject::read_backward(const char* end, std::string_view* out) {
  uint64_t len = 0;
  int shift = 0;
  const char* p = end;
  while (static_cast<uint8_t>(*--p) & 0x80) {
    len |= static_cast<uint64_t>(static_cast<uint8_t>(*p) & 0x7f) << shift;
    shift += 7;
  }
  len |= static_cast<uint64_t>(static_cast<uint8_t>(*p)) << shift;
  const char* data = p - len;
  *out = std::string_view(data, static_cast<size_t>(len));
  return data - varint_size(len);
}

ListObject::ListObject()
    : ListObject(encoding_limits().list_max_listpack_size, encoding_limits().list_compress_depth) {}

ListObject::ListObject(int fill, int compress_depth)
    : Object(kType),
      fill_(std::clamp(fill, -5, kFillMax)),
      compress_(std::clamp(compress_depth, 0, kCompressMax)) {}

ListObject::~ListObject() {
  for (size_t i = 0; i < nnodes_; ++i) std::free(node(i));
  std::free(nodes_);
}

size_t ListObject::memory() const {
  // As HashObject: what glibc gives a request of this object's size.
  return malloc_chunk_footprint(sizeof(ListObject)) + heap_bytes_;
}

size_t ListObject::listpack_bytes() const {
  size_t total = 0;
  for (size_t i = 0; i < nnodes_; ++i) total += node(i)->lp_bytes;
  return total;
}

std::unique_ptr<Object> ListObject::clone() const {
  auto copy = std::make_unique<ListObject>(fill_, compress_);
  for (size_t i = 0; i < nnodes_; ++i) {
    const Node* n = node(i);
    Node* m = copy->new_node(n->used);
    std::memcpy(m->data(), n->data(), n->used);
    m->used = n->used;
    m->count = n->count;
    m->lp_bytes = n->lp_bytes;
    copy->insert_node(i, m);
  }
  copy->count_ = count_;
  return copy;
}

ListObject::Node* ListObject::new_node(size_t cap) {
  auto* n = static_cast<Node*>(checked_realloc(nullptr, sizeof(Node) + cap));
  n->used = 0;
  n->head = 0;
  n->cap = static_cast<uint32_t>(cap);
  n->count = 0;
  n->lp_bytes = kListpackEmpty;
  heap_bytes_ += heap_footprint(n);
  return n;
}

void ListObject::free_node(Node* n) {
  heap_bytes_ -= heap_footprint(n);
  std::free(n);
}

void ListObject::insert_node(size_t pos, Node* n) {
  assert(pos <= nnodes_);
  if (pos == 0 && first_ > 0) {
    nodes_[--first_] = n;
    ++nnodes_;
    return;
  }
  if (pos == nnodes_ && first_ + nnodes_ < cap_) {
    nodes_[first_ + nnodes_++] = n;
    return;
  }
  if (nnodes_ + 1 <= cap_ && nnodes_ + 1 > cap_ / 2) {
    // Fairly full: shift toward the side with room.
    Node** at = nodes_ + first_ + pos;
    if (first_ + nnodes_ < cap_) {
      std::memmove(at + 1, at, (nnodes_ - pos) * sizeof(Node*));
    } else {
      std::memmove(nodes_ + first_ - 1, nodes_ + first_, pos * sizeof(Node*));
      --first_;
      --at;
    }
    *at = n;
    ++nnodes_;
    return;
  }
  // Full, or at most half full with no room on the needed side: re-centre in a new array (twice
  // as large when full), leaving room on both sides so pushes at either end stay O(1) amortized.
  const size_t new_cap = nnodes_ + 1 > cap_ ? std::max<size_t>(1, 2 * size_t{cap_}) : cap_;
  auto** fresh = static_cast<Node**>(checked_realloc(nullptr, new_cap * sizeof(Node*)));
  const size_t new_first = (new_cap - nnodes_ - 1) / 2;
  Node** old = nodes_ + first_;
  if (pos > 0) std::memcpy(fresh + new_first, old, pos * sizeof(Node*));
  fresh[new_first + pos] = n;
  if (nnodes_ > pos) {
    std::memcpy(fresh + new_first + pos + 1, old + pos, (nnodes_ - pos) * sizeof(Node*));
  }
  heap_bytes_ -= heap_footprint(nodes_);
  std::free(nodes_);
  nodes_ = fresh;
  heap_bytes_ += heap_footprint(nodes_);
  cap_ = static_cast<uint32_t>(new_cap);
  first_ = static_cast<uint32_t>(new_first);
  ++nnodes_;
}

void ListObject::erase_node(size_t pos) {
  free_node(node(pos));
  if (pos == 0) {
    ++first_;
  } else {
    Node** at = nodes_ + first_ + pos;
    std::memmove(at, at + 1, (nnodes_ - pos - 1) * sizeof(Node*));
  }
  --nnodes_;
  if (nnodes_ == 0) {
    heap_bytes_ -= heap_footprint(nodes_);
    std::free(nodes_);
    nodes_ = nullptr;
    cap_ = first_ = 0;
  }
}

ListObject::Node* ListObject::resize_node(size_t pos, size_t used) {
  // Grow by half again (small nodes grow from exact fits), shrink to an exact fit.
  Node* n = node(pos);
  const size_t cap = used > n->cap
                         ? std::max(used, std::min<size_t>(n->cap + n->cap / 2, kSizeSafetyLimit))
                         : used;
  heap_bytes_ -= heap_footprint(n);
  n = static_cast<Node*>(checked_realloc(n, sizeof(Node) + cap));
  heap_bytes_ += heap_footprint(n);
  n->cap = static_cast<uint32_t>(cap);
  nodes_[first_ + pos] = n;
  return n;
}

char* ListObject::splice(size_t pos, size_t offset, size_t old_size, size_t new_size) {
  Node* n = node(pos);
  const size_t used = n->used - old_size + new_size;
  // Shrink when under half used (see resize_node for growth).
  const bool shrinks = used < n->cap / 2;
  const bool resizes = shrinks || used > n->cap;
  // At the front the entries' start moves instead of the entries (LPOP, then LPUSH into the
  // room pops left), unless the node's block is to shrink.
  if (offset == 0 && new_size < old_size && !shrinks) {
    n->head += static_cast<uint32_t>(old_size - new_size);
    n->used = static_cast<uint32_t>(used);
    return n->data();
  }
  if (offset == 0 && new_size > old_size && n->head >= new_size - old_size) {
    n->head -= static_cast<uint32_t>(new_size - old_size);
    n->used = static_cast<uint32_t>(used);
    return n->data();
  }
  if (offset == 0 && new_size > old_size && !shrinks) {
    // Growing at the front without the room before the entries (LPUSH into a full node): all
    // the block's free room goes before them, so a run of pushes moves the node's entries once
    // per growth of its block rather than once per push.
    if (used > n->cap) n = resize_node(pos, used);
    const size_t head = n->cap - used;
    std::memmove(n->raw + head + new_size, n->data() + old_size, n->used - old_size);
    n->head = static_cast<uint32_t>(head);
    n->used = static_cast<uint32_t>(used);
    return n->data();
  }
  const size_t tail = n->used - offset - old_size;
  if (new_size < old_size) {
    std::memmove(n->data() + offset + new_size, n->data() + offset + old_size, tail);
  }
  if (n->head > 0 && (resizes || n->head + used > n->cap)) {
    // The block is to be resized, or the entries to grow past its end: close the front gap.
    std::memmove(n->raw, n->data(), new_size < old_size ? used : n->used);
    n->head = 0;
  }
  if (resizes) n = resize_node(pos, used);
  if (new_size > old_size) {
    std::memmove(n->data() + offset + new_size, n->data() + offset + old_size, tail);
  }
  n->used = static_cast<uint32_t>(used);
  return n->data() + offset;
}

void ListObject::put(size_t pos, size_t offset, std::string_view value) {
  write_entry(splice(pos, offset, 0, entry_size(value)), value);
  Node* n = node(pos);
  ++n->count;
  n->lp_bytes += static_cast<uint32_t>(lp_size(value));
  ++count_;
}

ListObject::Pos ListObject::locate(size_t index) const {
  assert(index < count_);
  std::string_view s;
  if (index < count_ / 2) {
    size_t ni = 0;
    while (index >= node(ni)->count) index -= node(ni++)->count;
    const Node* n = node(ni);
    if (index <= n->count / 2) {
      const char* p = n->data();
      for (size_t i = 0; i < index; ++i) p = read_forward(p, &s);
      return {ni, static_cast<size_t>(p - n->data()), index};
    }
    const char* p = n->data() + n->used;
    for (size_t i = n->count; i > index; --i) p = read_backward(p, &s);
    return {ni, static_cast<size_t>(p - n->data()), index};
  }
  size_t from_tail = count_ - 1 - index;
  size_t ni = nnodes_ - 1;
  while (from_tail >= node(ni)->count) from_tail -= node(ni--)->count;
  const Node* n = node(ni);
  const size_t rank = n->count - 1 - from_tail;
  if (rank <= n->count / 2) {
    const char* p = n->data();
    for (size_t i = 0; i < rank; ++i) p = read_forward(p, &s);
    return {ni, static_cast<size_t>(p - n->data()), rank};
  }
  const char* p = n->data() + n->used;
  for (size_t i = n->count; i > rank; --i) p = read_backward(p, &s);
  return {ni, static_cast<size_t>(p - n->data()), rank};
}

bool ListObject::allows_insert(const Node* n, size_t new_size) const {
  if (meets_optimization(new_size, fill_)) return true;
  if (new_size > kSizeSafetyLimit) return false;
  return static_cast<int64_t>(n->count) < fill_;
}

bool ListObject::allows_push(const Node* n, std::string_view value) const {
  if (n->lp_bytes >= kListPlainThreshold || value.size() >= kListPlainThreshold) return false;
  return allows_insert(n, n->lp_bytes + value.size() + kSizeEstimateOverhead);
}

bool ListObject::allows_linsert(const Node* n, std::string_view value) const {
  if (n->lp_bytes >= kListPlainThreshold || value.size() >= kListPlainThreshold) return false;
  return allows_insert(n, n->lp_bytes + value.size() + kSizeEstimateOverhead);
}

bool ListObject::allows_merge(const Node* a, const Node* b) const {
  if (a->lp_bytes >= kListPlainThreshold || b->lp_bytes >= kListPlainThreshold) return false;
  const size_t merged = a->lp_bytes + b->lp_bytes - kMergeOverlap;
  if (meets_optimization(merged, fill_)) return true;
  if (merged > kSizeSafetyLimit) return false;
  return static_cast<int64_t>(a->count) + b->count <= fill_;
}

void ListObject::push(End end, std::string_view value) {
  const size_t size = entry_size(value);
  if (end == End::kHead) {
    if (nnodes_ == 0 || !allows_push(node(0), value)) insert_node(0, new_node(size));
    put(0, 0, value);
    return;
  }
  if (nnodes_ == 0 || !allows_push(node(nnodes_ - 1), value)) {
    insert_node(nnodes_, new_node(size));
  }
  put(nnodes_ - 1, node(nnodes_ - 1)->used, value);
}

void ListObject::append_loaded(std::string_view element, bool starts_node, size_t listpack_bytes) {
  if (starts_node || nnodes_ == 0) {
    // Its entries take about as many bytes as the listpack they came from.
    insert_node(nnodes_, new_node(std::max(listpack_bytes, entry_size(element))));
    if (listpack_bytes != 0) node(nnodes_ - 1)->lp_bytes = static_cast<uint32_t>(listpack_bytes);
  }
  const size_t last = nnodes_ - 1;
  if (listpack_bytes == 0) return put(last, node(last)->used, element);
  // The node's listpack size is known: no estimate per element (it was most of a load's time).
  write_entry(splice(last, node(last)->used, 0, entry_size(element)), element);
  ++node(last)->count;
  ++count_;
}

void ListObject::append_node(std::span<const std::string_view> elements) {
  bool first = true;
  for (std::string_view e : elements) {
    append_loaded(e, first);
    first = false;
  }
}

std::string ListObject::pop(End end) {
  assert(count_ > 0);
  std::string_view s;
  std::string out;
  if (end == End::kHead) {
    const Node* n = node(0);
    const size_t size = static_cast<size_t>(read_forward(n->data(), &s) - n->data());
    out.assign(s);
    if (n->count == 1) {
      erase_node(0);
    } else {
      node(0)->lp_bytes -= static_cast<uint32_t>(lp_size(s));
      splice(0, 0, size, 0);
      --node(0)->count;
    }
  } else {
    const size_t last = nnodes_ - 1;
    const Node* n = node(last);
    const char* start = read_backward(n->data() + n->used, &s);
    out.assign(s);
    if (n->count == 1) {
      erase_node(last);
    } else {
      node(last)->lp_bytes -= static_cast<uint32_t>(lp_size(s));
      splice(last, static_cast<size_t>(start - n->data()), n->used - (start - n->data()), 0);
      --node(last)->count;
    }
  }
  --count_;
  return out;
}

std::string_view ListObject::at(size_t index) const {
  const Pos pos = locate(index);
  std::string_view s;
  read_forward(node(pos.node)->data() + pos.offset, &s);
  return s;
}

void ListObject::set(size_t index, std::string_view value) {
  const Pos pos = locate(index);
  std::string_view old;
  const Node* n = node(pos.node);
  const size_t old_size =
      static_cast<size_t>(read_forward(n->data() + pos.offset, &old) - n->data()) - pos.offset;
  // Redis 7.0 replaces an element in its node whatever the node's size then.
  const uint32_t lp = static_cast<uint32_t>(n->lp_bytes - lp_size(old) + lp_size(value));
  write_entry(splice(pos.node, pos.offset, old_size, entry_size(value)), value);
  node(pos.node)->lp_bytes = lp;
}

void ListObject::insert(size_t index, std::string_view value) {
  if (index == count_) {
    if (count_ == 0) {
      push(End::kTail, value);
    } else {
      insert_at(index - 1, true, value);
    }
    return;
  }
  insert_at(index, false, value);
}

void ListObject::insert_at(size_t pivot, bool after, std::string_view value) {
  // The cases of _quicklistInsert, in its order.
  const Pos pos = locate(pivot);
  const size_t ni = pos.node;
  const Node* n = node(ni);
  const bool full = !allows_linsert(n, value);
  const bool at_tail = after && pos.rank + 1 == n->count;
  const bool at_head = !after && pos.rank == 0;
  const bool avail_next = at_tail && ni + 1 < nnodes_ && allows_linsert(node(ni + 1), value);
  const bool avail_prev = at_head && ni > 0 && allows_linsert(node(ni - 1), value);
  if (!full) {
    std::string_view s;
    const size_t offset =
        after ? static_cast<size_t>(read_forward(n->data() + pos.offset, &s) - n->data())
              : pos.offset;
    put(ni, offset, value);
    return;
  }
  if (avail_next) {
    put(ni + 1, 0, value);
    return;
  }
  if (avail_prev) {
    put(ni - 1, node(ni - 1)->used, value);
    return;
  }
  // Full, at an end of the node with no room in the neighbour there (or none): a new node, no
  // merging.
  if (at_tail || at_head) {
    const size_t at = after ? ni + 1 : ni;
    insert_node(at, new_node(entry_size(value)));
    put(at, 0, value);
    return;
  }
  // Split the node at the pivot: after, the pivot's node keeps the pivot and the new node after
  // it starts with the value; before, the new node before it ends with the value.
  size_t center = ni;
  if (after) {
    std::string_view s;
    const size_t offset = static_cast<size_t>(read_forward(n->data() + pos.offset, &s) - n->data());
    split_node(ni, offset, pos.rank + 1);
    put(ni + 1, 0, value);
  } else {
    split_node(ni, pos.offset, pos.rank);
    put(ni, node(ni)->used, value);
    center = ni + 1;
  }
  merge_around(center);
}

void ListObject::recount(size_t pos) {
  Node* n = node(pos);
  size_t lp = kListpackEmpty;
  std::string_view s;
  for (const char* p = n->data(); p < n->data() + n->used;) {
    p = read_forward(p, &s);
    lp += lp_size(s);
  }
  n->lp_bytes = static_cast<uint32_t>(lp);
}

void ListObject::split_node(size_t pos, size_t offset, size_t rank) {
  Node* n = node(pos);
  const size_t moved = n->used - offset;
  Node* m = new_node(moved);
  std::memcpy(m->data(), n->data() + offset, moved);
  m->used = static_cast<uint32_t>(moved);
  m->count = n->count - static_cast<uint32_t>(rank);
  n->count = static_cast<uint32_t>(rank);
  splice(pos, offset, moved, 0);
  insert_node(pos + 1, m);
  recount(pos);
  recount(pos + 1);
}

void ListObject::merge_next(size_t pos) {
  const Node* next = node(pos + 1);
  const uint32_t count = next->count;
  const uint32_t lp = next->lp_bytes - kListpackEmpty;
  std::memcpy(splice(pos, node(pos)->used, 0, next->used), next->data(), next->used);
  node(pos)->count += count;
  node(pos)->lp_bytes += lp;
  erase_node(pos + 1);
}

void ListObject::merge_around(size_t center) {
  // _quicklistMergeNodes: the two before the centre, the two after it, the centre with the one
  // before, then the result with the one after.
  if (center >= 2 && allows_merge(node(center - 1), node(center - 2))) {
    merge_next(center - 2);
    --center;
  }
  if (center + 2 < nnodes_ && allows_merge(node(center + 1), node(center + 2))) {
    merge_next(center + 1);
  }
  size_t target = center;
  if (center >= 1 && allows_merge(node(center), node(center - 1))) {
    merge_next(center - 1);
    target = center - 1;
  }
  if (target + 1 < nnodes_ && allows_merge(node(target), node(target + 1))) merge_next(target);
}

void ListObject::erase(size_t index, size_t n) {
  assert(index + n <= count_);
  if (n == 0) return;
  const Pos pos = locate(index);
  count_ -= n;
  size_t ni = pos.node;
  size_t offset = pos.offset;
  size_t rank = pos.rank;
  std::string_view s;
  while (n > 0) {
    Node* nd = node(ni);
    const size_t here = std::min<size_t>(n, nd->count - rank);
    n -= here;
    if (here == nd->count) {
      erase_node(ni);
      continue;
    }
    const char* p = nd->data() + offset;
    size_t lp = 0;
    for (size_t i = 0; i < here; ++i) {
      p = read_forward(p, &s);
      lp += lp_size(s);
    }
    nd->lp_bytes -= static_cast<uint32_t>(lp);
    splice(ni, offset, static_cast<size_t>(p - nd->data()) - offset, 0);
    node(ni)->count -= static_cast<uint32_t>(here);
    ++ni;
    offset = 0;
    rank = 0;
  }
  // Redis's quicklistDelRange merges nothing: the nodes keep their boundaries.
}

size_t ListObject::remove_matches(size_t from, std::string_view value, size_t limit) {
  if (from >= count_) return 0;
  const Pos pos = locate(from);
  size_t removed = 0;
  std::string_view s;
  size_t ni = pos.node;
  size_t offset = pos.offset;
  while (ni < nnodes_ && (limit == 0 || removed < limit)) {
    Node* n = node(ni);
    // Compact the node in place: kept entries slide down over removed ones.
    char* w = n->data() + offset;
    const char* r = w;
    const char* end = n->data() + n->used;
    size_t gone = 0;
    while (r < end && (limit == 0 || removed < limit)) {
      const char* next = read_forward(r, &s);
      if (s == value) {
        ++gone;
        ++removed;
        n->lp_bytes -= static_cast<uint32_t>(lp_size(s));
      } else {
        if (w != r) std::memmove(w, r, static_cast<size_t>(next - r));
        w += next - r;
      }
      r = next;
    }
    if (w != r) std::memmove(w, r, static_cast<size_t>(end - r));
    const size_t new_used = n->used - static_cast<size_t>(r - w);
    n->count -= static_cast<uint32_t>(gone);
    count_ -= gone;
    if (n->count == 0) {
      erase_node(ni);
    } else {
      if (gone > 0) splice(ni, new_used, n->used - new_used, 0);
      ++ni;
    }
    offset = 0;
  }
  // As Redis's quicklistDelIndex, deletions merge no nodes.
  return removed;
}

Result<int64_t> list_push(Store& store, std::string_view key, ListObject::End end,
                          std::span<const std::string_view> values, bool only_existing) {
  auto list = write_object<ListObject>(store, key, !only_existing);
  if (!list) return Error{list.error()};
  auto& o = list.value();
  if (!o) return int64_t{0};
  for (std::string_view v : values) o->push(end, v);
  return static_cast<int64_t>(o->size());
}

Result<std::optional<std::vector<std::string>>> list_pop(Store& store, std::string_view key,
                                                         ListObject::End end, size_t count) {
  auto list = write_object<ListObject>(store, key, false);
  if (!list) return Error{list.error()};
  auto& o = list.value();
  if (!o) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  const size_t n = std::min(count, o->size());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(o->pop(end));
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::optional<std::string>> list_move(Store& store, std::string_view source,
                                             std::string_view destination, ListObject::End from,
                                             ListObject::End to) {
  auto src = write_object<ListObject>(store, source, false);
  if (!src) return Error{src.error()};
  auto& s = src.value();
  if (!s) return std::optional<std::string>();
  if (source == destination) {
    std::string value = s->pop(from);
    s->push(to, value);
    return std::optional<std::string>(std::move(value));
  }
  auto dst = write_object<ListObject>(store, destination, false);
  if (!dst) return Error{dst.error()};
  std::string value = s->pop(from);
  s.finish();
  if (dst.value()) {
    dst.value()->push(to, value);
  } else {
    auto created = write_object<ListObject>(store, destination, true);
    created.value()->push(to, value);
  }
  return std::optional<std::string>(std::move(value));
}

Result<bool> list_set(Store& store, std::string_view key, std::string_view index_arg,
                      std::string_view value) {
  auto list = write_object<ListObject>(store, key, false);
  if (!list) return Error{list.error()};
  auto& o = list.value();
  if (!o) return Error{protocol::err::kNoSuchKey};
  const std::optional<int64_t> parsed = common::parse_integer(index_arg);
  if (!parsed) return Error{protocol::err::kNotInteger};
  int64_t index = *parsed;
  const int64_t len = static_cast<int64_t>(o->size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) return Error{kListIndexOutOfRange};
  o->set(static_cast<size_t>(index), value);
  return true;
}

Result<int64_t> list_insert(Store& store, std::string_view key, bool after, std::string_view pivot,
                            std::string_view value) {
  auto list = write_object<ListObject>(store, key, false);
  if (!list) return Error{list.error()};
  auto& o = list.value();
  if (!o) return int64_t{0};
  std::optional<size_t> found;
  size_t index = 0;
  o->walk(0, false, [&](std::string_view v) {
    if (v == pivot) {
      found = index;
      return false;
    }
    ++index;
    return true;
  });
  if (!found) return int64_t{-1};
  o->insert_at(*found, after, value);
  return static_cast<int64_t>(o->size());
}

Result<int64_t> list_remove(Store& store, std::string_view key, int64_t count,
                            std::string_view value) {
  auto list = write_object<ListObject>(store, key, false);
  if (!list) return Error{list.error()};
  auto& o = list.value();
  if (!o) return int64_t{0};
  if (count >= 0) {
    return static_cast<int64_t>(o->remove_matches(0, value, static_cast<size_t>(count)));
  }
  // From the tail: find where the |count|-th match from the end is, then remove every match from
  // there on (exactly those).
  const uint64_t wanted = 0 - static_cast<uint64_t>(count);
  uint64_t matches = 0;
  std::optional<size_t> from;
  size_t index = o->size();
  o->walk(o->size() - 1, true, [&](std::string_view v) {
    --index;
    if (v == value) {
      from = index;
      if (++matches == wanted) return false;
    }
    return true;
  });
  return static_cast<int64_t>(from ? o->remove_matches(*from, value, 0) : 0);
}

Result<bool> list_trim(Store& store, std::string_view key, int64_t start, int64_t stop) {
  auto list = write_object<ListObject>(store, key, false);
  if (!list) return Error{list.error()};
  auto& o = list.value();
  if (!o) return false;
  const int64_t len = static_cast<int64_t>(o->size());
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) {
    o->erase(0, o->size());
  } else {
    if (stop >= len) stop = len - 1;
    o->erase(static_cast<size_t>(stop + 1), static_cast<size_t>(len - stop - 1));
    o->erase(0, static_cast<size_t>(start));
  }
  return true;
}

}  // namespace ringkv::engine
