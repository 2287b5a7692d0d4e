// Lists: the ListObject data structure and the pure list operations on the Store that the command
// handlers (commands/list.cpp) build on.
//
// Structure, like Redis's quicklist: an array of nodes kept centred in its allocation (so nodes are
// added and dropped at either end in O(1) amortized), each node one malloc'd block of packed
// entries. An entry is (varint length, bytes, length again as a reversed varint), so a node is
// walked in both directions and a short element costs two bytes of overhead. Pushing and popping
// touch one end node; indexing walks nodes from the nearer end, then entries inside one node.
//
// Node boundaries are Redis 7.0's, decided by the same rules (quicklist.c: which pushes and
// inserts fit a node, when an insert splits a node and which neighbours then merge; deletions never
// merge) on the size each node's listpack would have, under the list-max-listpack-size and
// list-compress-depth the list was created with. So DUMP and RDB write one listpack per node and
// match redis-server byte for byte. OBJECT ENCODING reports "quicklist", as Redis 7.0 does for
// every list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/store.h"
#include "engine/result.h"
#include "engine/types/object.h"

namespace ringkv::engine {

// Redis's packed_threshold: an element this large gets a plain node of its own.
inline constexpr size_t kListPlainThreshold = size_t{1} << 30;

class ListObject final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kList;
  enum class End : uint8_t { kHead, kTail };

  // A list with the node limits in force now (encoding_limits()), kept for its lifetime.
  ListObject();
  // A list with these limits (clamped as Redis's quicklistSetOptions does).
  ListObject(int fill, int compress_depth);
  ~ListObject() override;

  std::string_view encoding_name() const override { return "quicklist"; }
  size_t free_effort() const override { return nnodes_; }
  size_t size() const override { return count_; }
  size_t memory() const override;
  std::unique_ptr<Object> clone() const override;

  // Adds `value` (which must not point into this list) at one end.
  void push(End end, std::string_view value);
  // Removes and returns the element at one end; the list must not be empty.
  std::string pop(End end);
  // The element at `index` (< size()); valid until the list is next written.
  std::string_view at(size_t index) const;
  // Replaces the element at `index` (< size()).
  void set(size_t index, std::string_view value);
  // Inserts `value` before the element at `index` (index == size() appends).
  void insert(size_t index, std::string_view value);
  // LINSERT: inserts `value` after (or before) the element at `pivot` (< size()), placing it in
  // the node Redis's _quicklistInsert would.
  void insert_at(size_t pivot, bool after, std::string_view value);
  // Loading a DUMP/RDB node as it was (quicklistAppendListpack keeps the saved boundaries):
  // appends `element` at the tail, starting a new node when `starts_node`. `listpack_bytes`: the
  // saved node's listpack size when the node was one (0: estimated element by element).
  void append_loaded(std::string_view element, bool starts_node, size_t listpack_bytes = 0);
  // Appends `elements` as one new node at the tail (append_loaded for each).
  void append_node(std::span<const std::string_view> elements);
  // Removes `n` elements starting at `index` (index + n <= size()).
  void erase(size_t index, size_t n);
  // Removes elements equal to `value` at positions `from` and after, at most `limit` of them
  // (0 = all). Returns how many were removed.
  size_t remove_matches(size_t from, std::string_view value, size_t limit);

  // Visits the elements from `index` (< size()) toward the tail, or toward the head when
  // `reverse`, while `visit(element)` returns true. Views are valid during the call only.
  template <typename Visit>
  void walk(size_t index, bool reverse, Visit&& visit) const;

  // Number of nodes (for tests of the node layout).
  size_t node_count() const { return nnodes_; }
  // Elements in node `i` (< node_count()).
  size_t node_size(size_t i) const { return node(i)->count; }
  // Bytes of all the nodes' listpacks (DEBUG OBJECT's ql_uncompressed_size).
  size_t listpack_bytes() const;
  // list-max-listpack-size and list-compress-depth of this list.
  int fill() const { return fill_; }
  int compress_depth() const { return compress_; }

 private:
  struct Node {
    uint32_t used;      // bytes of entries, from data()
    uint32_t cap;       // bytes allocated for raw
    uint32_t count;     // entries
    uint32_t lp_bytes;  // bytes the node's listpack would have (Redis's node->sz)
    uint32_t head;      // bytes of raw before the entries: left by pops at the front
    char raw[];

    char* data() { return raw + head; }
    const char* data() const { return raw + head; }
  };
  // Where an element lives: its node, its byte offset in the node and its rank in the node.
  struct Pos {
    size_t node;
    size_t offset;
    size_t rank;
  };

  // Reads the entry starting at `p` into `out`; returns the position after it.
  static const char* read_forward(const char* p, std::string_view* out);
  // Reads the entry ending at `end` into `out`; returns the position where it starts.
  static const char* read_backward(const char* end, std::string_view* out);

  Node* node(size_t i) const { return nodes_[first_ + i]; }
  Pos locate(size_t index) const;
  Node* new_node(size_t cap);
  void free_node(Node* n);
  void insert_node(size_t pos, Node* n);
  void erase_node(size_t pos);
  // Reallocates node `pos`'s block for `used` bytes of entries (growing by half again, or to an
  // exact fit); the entries stay at their offset from the block's start. Returns the node.
  Node* resize_node(size_t pos, size_t used);
  // Replaces `old_size` bytes at `offset` of node `pos` by a gap of `new_size` bytes (growing or
  // shrinking the node's block); returns the gap.
  char* splice(size_t pos, size_t offset, size_t old_size, size_t new_size);
  // Writes `value` into node `pos` at `offset`.
  void put(size_t pos, size_t offset, std::string_view value);
  // Splits node `pos` at `offset` (the start of its entry of rank `rank`): the entries from there
  // on move to a new node after it.
  void split_node(size_t pos, size_t offset, size_t rank);
  // Merges node `pos + 1` into node `pos`.
  void merge_next(size_t pos);
  // _quicklistMergeNodes: merges the neighbours of node `center` that fit together.
  void merge_around(size_t center);
  // Whether node `n` may grow to `new_size` bytes under this list's fill (Redis's
  // _quicklistNodeAllowInsert once the new size is estimated).
  bool allows_insert(const Node* n, size_t new_size) const;
  // Whether a push adds `value` to end node `n` rather than to a new node.
  bool allows_push(const Node* n, std::string_view value) const;
  // Whether LINSERT adds `value` to node `n` rather than splitting it.
  bool allows_linsert(const Node* n, std::string_view value) const;
  // Whether Redis would merge nodes `a` and `b` (_quicklistNodeAllowMerge).
  bool allows_merge(const Node* a, const Node* b) const;
  // Recounts lp_bytes of node `pos` from its entries.
  void recount(size_t pos);

  Node** nodes_ = nullptr;
  uint32_t cap_ = 0;     // slots in nodes_
  uint32_t first_ = 0;   // slot of the head node
  uint32_t nnodes_ = 0;  // nodes in use
  size_t count_ = 0;
  size_t heap_bytes_ = 0;  // every block above, as heap_footprint counts it
  int fill_ = -2;          // list-max-listpack-size
  int compress_ = 0;       // list-compress-depth
};

template <typename Visit>
void ListObject::walk(size_t index, bool reverse, Visit&& visit) const {
  const Pos pos = locate(index);
  std::string_view s;
  if (!reverse) {
    for (size_t ni = pos.node; ni < nnodes_; ++ni) {
      const Node* n = node(ni);
      const char* p = n->data() + (ni == pos.node ? pos.offset : 0);
      const char* end = n->data() + n->used;
      while (p < end) {
        p = read_forward(p, &s);
        if (!visit(s)) return;
      }
    }
    return;
  }
  // Start just after the element at `index`, then walk back.
  const char* p = read_forward(node(pos.node)->data() + pos.offset, &s);
  for (size_t ni = pos.node + 1; ni-- > 0;) {
    const Node* n = node(ni);
    if (ni != pos.node) p = n->data() + n->used;
    while (p > n->data()) {
      p = read_backward(p, &s);
      if (!visit(s)) return;
    }
  }
}

// Error texts of the list commands (Redis 7.0.15, t_list.c and server.c).
inline constexpr std::string_view kListIndexOutOfRange = "ERR index out of range";

// LPUSH/RPUSH (LPUSHX/RPUSHX with `only_existing`): pushes `values` one by one at `end`. Returns
// the new length (0 when only_existing and the key is absent). Error: kWrongType.
Result<int64_t> list_push(Store& store, std::string_view key, ListObject::End end,
                          std::span<const std::string_view> values, bool only_existing);

// Pops up to `count` elements from `end` of the list at `key` (deleting it when emptied), in pop
// order. nullopt when the key is absent. Error: kWrongType.
Result<std::optional<std::vector<std::string>>> list_pop(Store& store, std::string_view key,
                                                         ListObject::End end, size_t count);

// LMOVE: pops from `from` of `source` and pushes at `to` of `destination` (which may be the same
// key). Returns the moved element, nullopt when the source is absent. Error: kWrongType (either
// key, before anything moves).
Result<std::optional<std::string>> list_move(Store& store, std::string_view source,
                                             std::string_view destination, ListObject::End from,
                                             ListObject::End to);

// LSET: replaces the element at `index`, a decimal integer (negative counts from the end), which
// is read only once the key is known to be a list, as Redis does. Errors: kWrongType, "ERR no
// such key", kNotInteger, kListIndexOutOfRange.
Result<bool> list_set(Store& store, std::string_view key, std::string_view index,
                      std::string_view value);

// LINSERT: inserts `value` before (or `after`) the first element equal to `pivot`. Returns the new
// length, -1 when the pivot is not there, 0 when the key is absent. Error: kWrongType.
Result<int64_t> list_insert(Store& store, std::string_view key, bool after, std::string_view pivot,
                            std::string_view value);

// LREM: removes the first `count` elements equal to `value` from the head (count > 0), from the
// tail (count < 0) or all of them (0). Returns how many were removed. Error: kWrongType.
Result<int64_t> list_remove(Store& store, std::string_view key, int64_t count,
                            std::string_view value);

// LTRIM: keeps the elements from `start` to `stop` (inclusive, negative from the end), deleting
// the key when nothing is left. Returns whether the key existed (Redis reports an existing list
// as changed even when nothing was trimmed). Error: kWrongType.
Result<bool> list_trim(Store& store, std::string_view key, int64_t start, int64_t stop);

}  // namespace ringkv::engine
