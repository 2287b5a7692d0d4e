// StreamObject (see stream_type.h): appends, trims and deletions that fill, mark and drop nodes
// as Redis 7.0.15's t_stream.c does with its listpacks, and the group bookkeeping around them.
#include "engine/types/stream_type.h"

#include <algorithm>
#include <array>

#include "engine/rdb/rdb_format.h"
#include "engine/types/encoding_limits.h"

namespace ringkv::engine {

namespace {

// Listpack bytes of an integer element (Redis appends integers as their decimal text, which
// the listpack stores in its integer encodings).
size_t int_size(int64_t v) { return rdb::listpack_int_element_size(v); }

size_t string_heap(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }

// The listpack bytes an entry takes after the master entry.
size_t item_bytes(StreamID master, StreamID id, uint8_t flags,
                  std::span<const std::string_view> fields_values) {
  const bool same = (flags & kStreamItemSameFields) != 0;
  const auto numfields = static_cast<int64_t>(fields_values.size() / 2);
  size_t n = int_size(flags) + int_size(static_cast<int64_t>(id.ms - master.ms)) +
             int_size(static_cast<int64_t>(id.seq - master.seq));
  if (!same) n += int_size(numfields);
  for (size_t i = 0; i < fields_values.size(); ++i) {
    if (same && i % 2 == 0) continue;
    n += rdb::listpack_element_size(fields_values[i]);
  }
  return n + int_size(numfields + 3 + (same ? 0 : numfields + 1));
}

// The 16-byte big-endian key of a node in Redis's radix tree.
using RaxKey = std::array<uint8_t, 16>;

RaxKey rax_key(StreamID id) {
  RaxKey k;
  for (int i = 0; i < 8; ++i) {
    k[i] = static_cast<uint8_t>(id.ms >> (56 - 8 * i));
    k[8 + i] = static_cast<uint8_t>(id.seq >> (56 - 8 * i));
  }
  return k;
}

// Nodes of a compressed radix tree (rax.c) holding keys[lo, hi), which share their first
// `depth` bytes, below that shared prefix: a chain of single-child bytes is one compressed
// node, a branching point one node with a child node per byte, each key ends in a leaf.
size_t rax_nodes(const std::vector<RaxKey>& keys, size_t lo, size_t hi, size_t depth) {
  if (depth == 16) return 1;
  if (keys[lo][depth] == keys[hi - 1][depth]) {
    size_t end = depth;
    while (end < 16 && keys[lo][end] == keys[hi - 1][end]) ++end;
    return 1 + rax_nodes(keys, lo, hi, end);
  }
  size_t total = 1;
  for (size_t i = lo; i < hi;) {
    size_t j = i;
    while (j < hi && keys[j][depth] == keys[i][depth]) ++j;
    total += rax_nodes(keys, i, j, depth + 1);
    i = j;
  }
  return total;
}

// The entry's length (without this field), written so that it reads from its last byte
// backwards: 7 bits a byte, low bits last, the high bit set on every byte but the first.
char* put_backlen(char* p, size_t len) {
  const size_t n = varint_size(len);
  for (size_t i = n; i-- > 0;) {
    p[i] = static_cast<char>((len & 0x7f) | (i > 0 ? 0x80 : 0));
    len >>= 7;
  }
  return p + n;
}

}  // namespace

StreamItem StreamNode::item(size_t pos) const {
  StreamItem item;
  const char* p = data.data() + pos;
  item.flags = static_cast<uint8_t>(*p++);
  uint64_t ms_delta = 0;
  uint64_t seq_delta = 0;
  p = get_varint(p, &ms_delta);
  p = get_varint(p, &seq_delta);
  item.id = {master_id.ms + ms_delta,
             master_id.seq + static_cast<uint64_t>(zigzag_decode(seq_delta))};
  if ((item.flags & kStreamItemSameFields) != 0) {
    item.fields_ = master_fields.size();
  } else {
    p = get_varint(p, &item.fields_);
  }
  item.master_fields_ = &master_fields;
  item.strings_ = p;
  return item;
}

StreamID StreamNode::id_at(size_t pos) const {
  const char* p = data.data() + pos + 1;
  uint64_t ms_delta = 0;
  uint64_t seq_delta = 0;
  p = get_varint(p, &ms_delta);
  get_varint(p, &seq_delta);
  return {master_id.ms + ms_delta, master_id.seq + static_cast<uint64_t>(zigzag_decode(seq_delta))};
}

size_t StreamNode::next(size_t pos) const {
  const char* start = data.data() + pos;
  const uint8_t flags = static_cast<uint8_t>(*start);
  const char* p = start + 1;
  uint64_t v = 0;
  p = get_varint(p, &v);
  p = get_varint(p, &v);
  uint64_t strings = master_fields.size();
  if ((flags & kStreamItemSameFields) == 0) {
    p = get_varint(p, &v);
    strings = 2 * v;
  }
  for (uint64_t i = 0; i < strings; ++i) p = skip_packed(p);
  const auto len = static_cast<size_t>(p - start);
  return pos + len + varint_size(len);
}

size_t StreamNode::prev(size_t pos) const {
  const char* p = data.data() + pos;
  size_t len = 0;
  int shift = 0;
  uint8_t b = 0;
  do {
    b = static_cast<uint8_t>(*--p);
    len |= static_cast<size_t>(b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) != 0);
  return static_cast<size_t>(p - data.data()) - len;
}

size_t StreamNode::add(StreamID id, uint8_t flags,
                       std::span<const std::string_view> fields_values) {
  const bool same = (flags & kStreamItemSameFields) != 0;
  const uint64_t ms_delta = id.ms - master_id.ms;
  // An entry of a later millisecond than the master entry often has a lower sequence number.
  const uint64_t seq_delta = zigzag_encode(static_cast<int64_t>(id.seq - master_id.seq));
  size_t len = 1 + varint_size(ms_delta) + varint_size(seq_delta);
  if (!same) len += varint_size(fields_values.size() / 2);
  for (size_t i = same ? 1 : 0; i < fields_values.size(); i += same ? 2 : 1) {
    len += packed_size(fields_values[i]);
  }
  const size_t at = data.size();
  data.resize(at + len + varint_size(len));
  char* p = data.data() + at;
  *p++ = static_cast<char>(flags);
  p = put_varint(p, ms_delta);
  p = put_varint(p, seq_delta);
  if (!same) p = put_varint(p, fields_values.size() / 2);
  for (size_t i = same ? 1 : 0; i < fields_values.size(); i += same ? 2 : 1) {
    p = put_packed(p, fields_values[i]);
  }
  put_backlen(p, len);
  return item_bytes(master_id, id, flags, fields_values);
}

size_t StreamNode::lower_bound(StreamID id) const {
  // Appends make reads past the last entry (XREAD $, XREADGROUP >) the common case. Every entry
  // is above the live ones before it, so past the last entry no live one is at or above `id`.
  if (data.empty() || id_at(last()) < id) return end();
  size_t pos = 0;
  while (pos < end() && (deleted_at(pos) || id_at(pos) < id)) pos = next(pos);
  return pos;
}

size_t StreamNode::memory() const {
  size_t n = sizeof(StreamNode) + 48 + (data.capacity() > 15 ? data.capacity() + 1 : 0) +
             master_fields.capacity() * sizeof(std::string);
  for (const std::string& f : master_fields) n += string_heap(f);
  return n;
}

StreamObject::StreamObject() : Object(ValueType::kStream) {}

StreamObject::~StreamObject() = default;

size_t StreamObject::memory() const {
  size_t n = sizeof(StreamObject) + entry_memory_;
  for (const auto& [name, g] : groups_) n += 48 + 2 * name.size() + g->memory();
  return n;
}

std::unique_ptr<Object> StreamObject::clone() const {
  auto copy = std::make_unique<StreamObject>();
  copy->nodes_ = nodes_;
  copy->length_ = length_;
  copy->last_id_ = last_id_;
  copy->first_id_ = first_id_;
  copy->max_deleted_ = max_deleted_;
  copy->entries_added_ = entries_added_;
  // The copies' buffers have capacities of their own.
  for (const auto& [id, node] : copy->nodes_) copy->entry_memory_ += node.memory();
  for (const auto& [name, g] : groups_) copy->groups_.emplace(name, g->clone());
  return copy;
}

std::map<StreamID, StreamNode>::const_iterator StreamObject::node_of(StreamID id) const {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return nodes_.end();
  return std::prev(it);
}

void StreamObject::append(StreamID id, std::span<const std::string_view> fields_values) {
  const auto numfields = static_cast<int64_t>(fields_values.size() / 2);
  size_t total_len = 0;
  for (std::string_view s : fields_values) total_len += s.size();

  StreamNode* node = nullptr;
  if (!nodes_.empty()) {
    StreamNode& tail = std::prev(nodes_.end())->second;
    const EncodingLimits& limits = encoding_limits();
    const size_t max_bytes =
        limits.stream_node_max_bytes == 0 || limits.stream_node_max_bytes > kStreamNodeBytesCap
            ? kStreamNodeBytesCap
            : limits.stream_node_max_bytes;
    const bool full = tail.bytes + total_len >= max_bytes ||
                      (limits.stream_node_max_entries != 0 &&
                       tail.live + tail.deleted >= limits.stream_node_max_entries);
    if (!full) {
      node = &tail;
    } else {
      // The tail will not grow again: give its buffer's unused room back.
      entry_memory_ -= tail.memory();
      tail.data.shrink_to_fit();
      entry_memory_ += tail.memory();
    }
  }
  uint8_t flags = 0;
  if (node == nullptr) {
    node = &nodes_[id];
    node->master_id = id;
    for (int64_t i = 0; i < numfields; ++i) node->master_fields.emplace_back(fields_values[2 * i]);
    node->live = 1;
    node->bytes = 7 + int_size(1) + int_size(0) + int_size(numfields) + int_size(0);
    for (const std::string& f : node->master_fields) node->bytes += rdb::listpack_element_size(f);
    flags = kStreamItemSameFields;
  } else {
    entry_memory_ -= node->memory();
    node->bytes += int_size(node->live + 1) - int_size(node->live);
    ++node->live;
    bool same = static_cast<size_t>(numfields) == node->master_fields.size();
    for (int64_t i = 0; same && i < numfields; ++i) {
      same = node->master_fields[i] == fields_values[2 * i];
    }
    if (same) flags = kStreamItemSameFields;
  }
  node->bytes += node->add(id, flags, fields_values);
  entry_memory_ += node->memory();
  ++length_;
  ++entries_added_;
  last_id_ = id;
  if (length_ == 1) first_id_ = id;
}

void StreamObject::recount_node_bytes(StreamNode& node, int64_t old_live, int64_t old_deleted) {
  node.bytes = node.bytes + int_size(node.live) + int_size(node.deleted) - int_size(old_live) -
               int_size(old_deleted);
}

std::map<StreamID, StreamNode>::iterator StreamObject::erase_node(
    std::map<StreamID, StreamNode>::iterator it) {
  entry_memory_ -= it->second.memory();
  return nodes_.erase(it);
}

void StreamObject::mark_deleted(std::map<StreamID, StreamNode>::iterator node, size_t pos) {
  StreamNode& n = node->second;
  n.set_flags(pos, n.flags_at(pos) | kStreamItemDeleted);
  --length_;
  if (n.live == 1) {
    // The node's last live entry: the whole listpack goes.
    erase_node(node);
    return;
  }
  const int64_t live = n.live;
  const int64_t deleted = n.deleted;
  --n.live;
  ++n.deleted;
  recount_node_bytes(n, live, deleted);
}

bool StreamObject::remove(StreamID id) {
  auto cit = node_of(id);
  if (cit == nodes_.end()) return false;
  auto it = nodes_.erase(cit, cit);  // a mutable iterator to the same node
  const StreamNode& node = it->second;
  const size_t pos = node.lower_bound(id);
  if (pos == node.end() || node.id_at(pos) != id) return false;
  mark_deleted(it, pos);
  if (id == first_id_) first_id_ = length_ == 0 ? kMinStreamID : first_live_id();
  if (length_ == 0) first_id_ = kMinStreamID;
  if (id > max_deleted_) max_deleted_ = id;
  return true;
}

bool StreamObject::find(StreamID id, StreamItem* out) const {
  auto it = node_of(id);
  if (it == nodes_.end()) return false;
  const StreamNode& node = it->second;
  const size_t pos = node.lower_bound(id);
  if (pos == node.end() || node.id_at(pos) != id) return false;
  if (out != nullptr) *out = node.item(pos);
  return true;
}

StreamID StreamObject::first_live_id() const {
  StreamID found = kMaxStreamID;
  for_each(kMinStreamID, kMaxStreamID, false, [&](const StreamItem& item) {
    found = item.id;
    return false;
  });
  return found;
}

StreamID StreamObject::last_live_id() const {
  StreamID found = kMinStreamID;
  for_each(kMinStreamID, kMaxStreamID, true, [&](const StreamItem& item) {
    found = item.id;
    return false;
  });
  return found;
}

int64_t StreamObject::trim(const StreamTrim& t) {
  using Strategy = StreamTrim::Strategy;
  if (t.strategy == Strategy::kNone) return 0;
  int64_t deleted = 0;
  auto it = nodes_.begin();
  while (it != nodes_.end()) {
    if (t.strategy == Strategy::kMaxLen && length_ <= static_cast<uint64_t>(t.maxlen)) break;
    StreamNode& node = it->second;
    const int64_t entries = node.live;
    if (t.limit != 0 && deleted + entries > t.limit) break;
    const bool whole = t.strategy == Strategy::kMaxLen ? length_ - static_cast<uint64_t>(entries) >=
                                                             static_cast<uint64_t>(t.maxlen)
                                                       : node.id_at(node.last()) < t.minid;
    if (whole) {
      length_ -= static_cast<uint64_t>(entries);
      deleted += entries;
      it = erase_node(it);
      continue;
    }
    if (t.approx) break;
    // Tombstones inside the first node that cannot go whole.
    int64_t marked = 0;
    for (size_t pos = 0; pos < node.end(); pos = node.next(pos)) {
      const bool stop = t.strategy == Strategy::kMaxLen ? length_ <= static_cast<uint64_t>(t.maxlen)
                                                        : node.id_at(pos) >= t.minid;
      if (stop) break;
      const uint8_t flags = node.flags_at(pos);
      if ((flags & kStreamItemDeleted) == 0) {
        node.set_flags(pos, flags | kStreamItemDeleted);
        ++marked;
        --length_;
      }
    }
    deleted += marked;
    const int64_t live = node.live;
    const int64_t dead = node.deleted;
    node.live -= marked;
    node.deleted += marked;
    recount_node_bytes(node, live, dead);
    break;
  }
  if (deleted != 0) first_id_ = length_ == 0 ? kMinStreamID : first_live_id();
  return deleted;
}

size_t StreamObject::free_effort() const {
  size_t effort = rax_node_count();
  if (!groups_.empty()) effort += groups_.size() * (1 + groups_.begin()->second->pel().size());
  return effort;
}

size_t StreamObject::rax_node_count() const {
  if (nodes_.empty()) return 1;
  std::vector<RaxKey> keys;
  keys.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) keys.push_back(rax_key(id));
  return rax_nodes(keys, 0, keys.size(), 0);
}

StreamGroup* StreamObject::group(std::string_view name) {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

const StreamGroup* StreamObject::group(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

StreamGroup* StreamObject::create_group(std::string_view name, StreamID last_id,
                                        int64_t entries_read) {
  if (groups_.find(name) != groups_.end()) return nullptr;
  auto g = std::make_unique<StreamGroup>(last_id, entries_read);
  StreamGroup* raw = g.get();
  groups_.emplace(std::string(name), std::move(g));
  return raw;
}

bool StreamObject::destroy_group(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) return false;
  groups_.erase(it);
  return true;
}

int64_t StreamObject::estimate_entries_read(StreamID id) const {
  if (entries_added_ == 0) return 0;
  const auto added = static_cast<int64_t>(entries_added_);
  if (length_ == 0 && id <= last_id_) return added;
  if (id == last_id_) return added;
  if (id > last_id_) return kInvalidEntriesRead;
  if (max_deleted_ == kMinStreamID || max_deleted_ < first_id_) {
    if (id < first_id_) return added - static_cast<int64_t>(length_);
    if (id == first_id_) return added - static_cast<int64_t>(length_) + 1;
  }
  return kInvalidEntriesRead;
}

bool StreamObject::range_has_tombstones(StreamID start, StreamID end) const {
  if (length_ == 0 || max_deleted_ == kMinStreamID) return false;
  if (first_id_ > max_deleted_) return false;
  return start <= max_deleted_ && max_deleted_ <= end;
}

std::optional<int64_t> StreamObject::group_lag(const StreamGroup& g) const {
  if (entries_added_ == 0) return 0;
  const auto added = static_cast<int64_t>(entries_added_);
  if (g.entries_read != kInvalidEntriesRead && !range_has_tombstones(g.last_id, kMaxStreamID)) {
    return added - g.entries_read;
  }
  const int64_t read = estimate_entries_read(g.last_id);
  if (read == kInvalidEntriesRead) return std::nullopt;
  return added - read;
}

bool StreamObject::restore_node(StreamNode node) {
  if (!nodes_.empty() && node.master_id <= std::prev(nodes_.end())->first) return false;
  if (node.count() == 0) return false;
  node.data.shrink_to_fit();
  entry_memory_ += node.memory();
  const StreamID key = node.master_id;
  nodes_.emplace(key, std::move(node));
  return true;
}

}  // namespace ringkv::engine
