// Streams: the StreamObject data structure (entries and consumer groups) and its pure operations.
//
// Entries live in nodes, each node the logical content of one of Redis's listpacks under its
// radix tree: a master entry (the fields of the node's first entry, live and deleted counts)
// and the entries appended after it, deleted ones staying behind as tombstones until their node
// empties. Nodes fill and split exactly as Redis 7.0.15 fills its listpacks
// (stream-node-max-bytes 4096, stream-node-max-entries 100), each node keeping the byte size its
// listpack would have, so that approximate trimming (which removes whole nodes only), XINFO's
// radix-tree figures and DUMP payloads all come out as Redis's.
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

namespace ringkv::engine {

// Redis 7.0.15's defaults for stream-node-max-bytes and stream-node-max-entries.
inline constexpr size_t kStreamNodeMaxBytes = 4096;
inline constexpr int64_t kStreamNodeMaxEntries = 100;

// Entry flags as Redis stores them in a node.
inline constexpr uint8_t kStreamItemDeleted = 1;
inline constexpr uint8_t kStreamItemSameFields = 2;

// One entry of a node: its ID, flags and field/value pairs (fields included even when they are
// the master entry's).
struct StreamItem {
  StreamID id;
  uint8_t flags = 0;
  std::vector<std::string> fields_values;  // field, value, field, value...
  bool deleted() const { return (flags & kStreamItemDeleted) != 0; }
};

// One node: what one listpack of Redis's radix tree holds.
struct StreamNode {
  StreamID master_id;
  std::vector<std::string> master_fields;
  std::vector<StreamItem> items;  // ascending IDs, tombstones included
  int64_t live = 0;
  int64_t deleted = 0;
  size_t bytes = 0;  // the listpack's size (lpBytes)
};

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
  // Whether a live entry `id` exists; its pairs in `out` when non-null.
  bool find(StreamID id, const StreamItem** out = nullptr) const;

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
  void mark_deleted(std::map<StreamID, StreamNode>::iterator node, size_t index);
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
      const auto& items = it->second.items;
      auto pos = std::lower_bound(items.begin(), items.end(), start,
                                  [](const StreamItem& i, StreamID id) { return i.id < id; });
      for (; pos != items.end(); ++pos) {
        if (pos->id > end) return;
        if (!pos->deleted() && !visit(*pos)) return;
      }
    }
    return;
  }
  auto it = node_of(end);
  if (it == nodes_.end()) return;
  for (;;) {
    const auto& items = it->second.items;
    auto pos = std::upper_bound(items.begin(), items.end(), end,
                                [](StreamID id, const StreamItem& i) { return id < i.id; });
    while (pos != items.begin()) {
      --pos;
      if (pos->id < start) return;
      if (!pos->deleted() && !visit(*pos)) return;
    }
    if (it == nodes_.begin()) return;
    --it;
  }
}

}  // namespace ringkv::engine
