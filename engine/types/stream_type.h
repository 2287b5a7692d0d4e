// Streams: the StreamObject data structure (entries and consumer groups) and its pure operations.
//
// Entries live in nodes, each node the logical content of one of Redis's listpacks under its
// radix tree: a master entry (the fields of the node's first entry, live and deleted counts)
// and the entries appended after it, deleted ones staying behind as tombstones until their node
// empties. Nodes fill and split exactly as Redis 7.0.15 fills its listpacks
// (stream-node-max-bytes and stream-node-max-entries, 4096 and 100 by default), each node keeping
// the byte size its listpack would have, so that approximate trimming (which removes whole nodes
// only), XINFO's radix-tree figures and DUMP payloads all come out as Redis's. A node packs its
// entries in one buffer (see StreamNode), fewer bytes than Redis's listpack, trimmed to its size
// once the node is full.
//
// Consumer groups (stream_group.h) hang off the stream by name, in name order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/types/object.h"
#include "engine/types/stream_group.h"
#include "engine/types/stream_id.h"
#include "engine/types/varint.h"

namespace ringkv::engine {

// Redis 7.0.15's defaults for stream-node-max-bytes and stream-node-max-entries.
// The most bytes a node's listpack may reach, whatever stream-node-max-bytes says (1 GB).
inline constexpr size_t kStreamNodeBytesCap = size_t{1} << 30;

// Entry flags as Redis stores them in a node.
inline constexpr uint8_t kStreamItemDeleted = 1;
inline constexpr uint8_t kStreamItemSameFields = 2;

struct StreamNode;

// One entry, as a view into its node (valid until the stream is next written): its ID, flags
// and field/value pairs (fields taken from the master entry when it has the same ones).
class StreamItem {
 public:
  StreamID id;
  uint8_t flags = 0;
  bool deleted() const { return (flags & kStreamItemDeleted) != 0; }
  // How many strings the pairs make (twice the field count).
  size_t size() const { return 2 * static_cast<size_t>(fields_); }
  // Visits field, value, field, value... in order (each view valid during its call only).
  template <typename Visit>
  void for_each_string(Visit&& visit) const;

 private:
  friend struct StreamNode;
  const std::vector<std::string>* master_fields_ = nullptr;  // for kStreamItemSameFields
  const char* strings_ = nullptr;                            // the entry's packed strings
  uint64_t fields_ = 0;
};

// One node: what one listpack of Redis's radix tree holds. Its entries are packed one after the
// other in `data`, each: a flags byte, varint ID deltas from the master ID (the sequence's
// zigzag-encoded: an entry of a later millisecond may have a lower one), for entries with fields
// of their own a varint field count and each field, then each value (packed strings, varint.h:
// integers as integers, as listpacks keep them), then the entry's length backwards (so that
// ranges also walk down). Entries are found by position (the byte offset where one starts,
// data.size() past the last) and walked like a listpack's, a node holding 100 entries at most
// under Redis's default limits. Less than a listpack: about 10 bytes for Redis's 18 for an entry
// of three small fields.
struct StreamNode {
  StreamID master_id;
  std::vector<std::string> master_fields;
  std::string data;
  int64_t live = 0;
  int64_t deleted = 0;
  size_t bytes = 0;  // the listpack's size (lpBytes)

  size_t count() const { return static_cast<size_t>(live + deleted); }
  size_t end() const { return data.size(); }
  // The position after / before the entry at `pos` (before: pos > 0).
  size_t next(size_t pos) const;
  size_t prev(size_t pos) const;
  // The last entry's position (the node has one).
  size_t last() const { return prev(end()); }
  StreamItem item(size_t pos) const;
  StreamID id_at(size_t pos) const;
  uint8_t flags_at(size_t pos) const { return static_cast<uint8_t>(data[pos]); }
  bool deleted_at(size_t pos) const { return (flags_at(pos) & kStreamItemDeleted) != 0; }
  void set_flags(size_t pos, uint8_t flags) { data[pos] = static_cast<char>(flags); }
  // Appends an entry; `fields_values` has every field (a kStreamItemSameFields entry keeps only
  // its values). Returns the listpack bytes the entry adds.
  size_t add(StreamID id, uint8_t flags, std::span<const std::string_view> fields_values);
  // The position of the first live entry whose ID is not below `id` (end() when none is).
  // Only live entries are in order: after XDEL and XSETID to a lower ID, a tombstone may hold a
  // higher ID than entries appended after it, and Redis's iterators pass tombstones over.
  size_t lower_bound(StreamID id) const;
  // Heap bytes of the node (its buffers and map slot).
  size_t memory() const;
};

template <typename Visit>
void StreamItem::for_each_string(Visit&& visit) const {
  const char* p = strings_;
  const bool same = (flags & kStreamItemSameFields) != 0;
  std::string_view field;
  std::string_view value;
  PackedText field_text;
  PackedText value_text;
  for (uint64_t i = 0; i < fields_; ++i) {
    if (same) {
      field = (*master_fields_)[static_cast<size_t>(i)];
    } else {
      p = get_packed(p, &field, field_text);
    }
    p = get_packed(p, &value, value_text);
    visit(field);
    visit(value);
  }
}

// How XADD and XTRIM trim (streamAddTrimArgs).
struct StreamTrim {
  enum class Strategy : uint8_t { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  int64_t maxlen = 0;
  StreamID minid{};
  bool approx = false;
  int64_t limit = 0;  // 0: no limit
};

class StreamObject final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kStream;

  StreamObject();
  ~StreamObject() override;

  std::string_view encoding_name() const override { return "stream"; }
  // Its nodes, and each group with as many pending entries as the first one has.
  size_t free_effort() const override;
  size_t size() const override { return static_cast<size_t>(length_); }
  bool erase_when_empty() const override { return false; }
  size_t memory() const override;
  std::unique_ptr<Object> clone() const override;

  uint64_t length() const { return length_; }
  StreamID last_id() const { return last_id_; }
  StreamID first_id() const { return first_id_; }
  StreamID max_deleted_id() const { return max_deleted_; }
  uint64_t entries_added() const { return entries_added_; }
  const std::map<StreamID, StreamNode>& nodes() const { return nodes_; }

  // Appends an entry with the given ID (which must be above last_id()) and field/value pairs.
  void append(StreamID id, std::span<const std::string_view> fields_values);
  // Trims as `trim` says; returns how many entries were removed (streamTrim).
  int64_t trim(const StreamTrim& trim);
  // Deletes the entry `id` (XDEL); false when there is no such live entry. Keeps first_id and
  // max_deleted_id as Redis does.
  bool remove(StreamID id);
  // Whether a live entry `id` exists; the entry in `out` when non-null.
  bool find(StreamID id, StreamItem* out = nullptr) const;

  // The first / last live entry's ID: kMaxStreamID / kMinStreamID when there is none.
  StreamID first_live_id() const;
  StreamID last_live_id() const;

  // Visits the live entries with IDs in [start, end], ascending (or descending with `reverse`),
  // until `visit` returns false.
  template <typename Visit>
  void for_each(StreamID start, StreamID end, bool reverse, Visit&& visit) const;

  // XSETID's and RESTORE's setters of the stream's metadata.
  void set_last_id(StreamID id) { last_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  void set_max_deleted_id(StreamID id) { max_deleted_ = id; }
  void set_first_id(StreamID id) { first_id_ = id; }

  // XINFO STREAM's radix-tree-nodes: the nodes Redis's rax has for these node keys.
  size_t rax_node_count() const;

  // Consumer groups, by name.
  using Groups = std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>>;
  const Groups& groups() const { return groups_; }
  StreamGroup* group(std::string_view name);
  const StreamGroup* group(std::string_view name) const;
  // Creates a group; nullptr when one of that name exists.
  StreamGroup* create_group(std::string_view name, StreamID last_id, int64_t entries_read);
  bool destroy_group(std::string_view name);

  // The logical read counter of the entry `id` as Redis's streamEstimateDistanceFromFirstEverEntry
  // computes it; -1 (SCG_INVALID_ENTRIES_READ) when it cannot be known.
  int64_t estimate_entries_read(StreamID id) const;
  // Whether some entry was deleted in (start, end] (streamRangeHasTombstones).
  bool range_has_tombstones(StreamID start, StreamID end) const;
  // A group's lag (XINFO), nullopt when it cannot be known (nil).
  std::optional<int64_t> group_lag(const StreamGroup& g) const;

  // RESTORE: adds a whole node as it was saved; false when it is malformed or out of order.
  bool restore_node(StreamNode node);
  void set_length(uint64_t n) { length_ = n; }

 private:
  // The node holding `id` (or where it would be), nodes_.end() when before every node.
  std::map<StreamID, StreamNode>::const_iterator node_of(StreamID id) const;
  void mark_deleted(std::map<StreamID, StreamNode>::iterator node, size_t pos);
  // Drops a whole node and its memory.
  std::map<StreamID, StreamNode>::iterator erase_node(std::map<StreamID, StreamNode>::iterator it);
  void recount_node_bytes(StreamNode& node, int64_t old_live, int64_t old_deleted);

  std::map<StreamID, StreamNode> nodes_;
  uint64_t length_ = 0;
  StreamID last_id_;
  StreamID first_id_;
  StreamID max_deleted_;
  uint64_t entries_added_ = 0;
  Groups groups_;
  size_t entry_memory_ = 0;
};

template <typename Visit>
void StreamObject::for_each(StreamID start, StreamID end, bool reverse, Visit&& visit) const {
  if (start > end || nodes_.empty()) return;
  if (!reverse) {
    auto it = node_of(start);
    if (it == nodes_.end()) it = nodes_.begin();
    for (; it != nodes_.end() && it->first <= end; ++it) {
      const StreamNode& node = it->second;
      for (size_t pos = node.lower_bound(start); pos < node.end(); pos = node.next(pos)) {
        const StreamItem item = node.item(pos);
        if (item.deleted()) continue;
        if (item.id > end) return;
        if (!visit(item)) return;
      }
    }
    return;
  }
  auto it = node_of(end);
  if (it == nodes_.end()) return;
  for (;;) {
    const StreamNode& node = it->second;
    for (size_t pos = node.end(); pos > 0;) {
      pos = node.prev(pos);
      const StreamItem item = node.item(pos);
      if (item.deleted() || item.id > end) continue;
      if (item.id < start) return;
      if (!visit(item)) return;
    }
    if (it == nodes_.begin()) return;
    --it;
  }
}

}  // namespace ringkv::engine
