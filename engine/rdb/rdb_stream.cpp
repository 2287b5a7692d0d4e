// A stream's RDB encoding (see rdb_stream.h): each node becomes the listpack Redis keeps for it,
// element by element (master entry, then each entry with its flags and ID deltas), and is read
// back the same way, every count, delta and back-count checked.
#include "engine/rdb/rdb_stream.h"

#include <charconv>
#include <string_view>
#include <vector>

#include "engine/commands/string_ops.h"

namespace ringkv::engine {

namespace {

using rdb::ListpackWriter;
using rdb::Reader;

void add_int(ListpackWriter& lp, int64_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  lp.add(std::string_view(buf, static_cast<size_t>(end - buf)));
}

void put_raw_id(std::string& out, StreamID id) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((id.ms >> (8 * i)) & 0xff));
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((id.seq >> (8 * i)) & 0xff));
}

void put_ms(std::string& out, int64_t ms) {
  const auto u = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

std::string node_listpack(const StreamNode& node) {
  ListpackWriter lp;
  add_int(lp, node.live);
  add_int(lp, node.deleted);
  add_int(lp, static_cast<int64_t>(node.master_fields.size()));
  for (const std::string& f : node.master_fields) lp.add(f);
  add_int(lp, 0);
  for (size_t pos = 0; pos < node.end(); pos = node.next(pos)) {
    const StreamItem item = node.item(pos);
    const bool same = (item.flags & kStreamItemSameFields) != 0;
    const auto numfields = static_cast<int64_t>(item.size() / 2);
    add_int(lp, item.flags);
    add_int(lp, static_cast<int64_t>(item.id.ms - node.master_id.ms));
    add_int(lp, static_cast<int64_t>(item.id.seq - node.master_id.seq));
    if (!same) add_int(lp, numfields);
    size_t i = 0;
    item.for_each_string([&](std::string_view s) {
      if (!same || i % 2 == 1) lp.add(s);
      ++i;
    });
    add_int(lp, numfields + 3 + (same ? 0 : numfields + 1));
  }
  return lp.finish();
}

void write_pel_ids(std::string& out, const std::set<StreamID>& ids) {
  rdb::write_len(out, ids.size());
  for (StreamID id : ids) put_raw_id(out, id);
}

bool read_raw_id(Reader& r, StreamID& id) {
  std::string_view raw;
  if (!r.read_raw(16, raw)) return false;
  id = {};
  for (int i = 0; i < 8; ++i) {
    id.ms = id.ms << 8 | static_cast<uint8_t>(raw[i]);
    id.seq = id.seq << 8 | static_cast<uint8_t>(raw[8 + i]);
  }
  return true;
}

bool read_ms(Reader& r, int64_t& ms) {
  std::string_view raw;
  if (!r.read_raw(8, raw)) return false;
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = u << 8 | static_cast<uint8_t>(raw[i]);
  ms = static_cast<int64_t>(u);
  return true;
}

bool read_id(Reader& r, StreamID& id) { return r.read_len(id.ms) && r.read_len(id.seq); }

// Walks a node's listpack elements in order.
class Elements {
 public:
  explicit Elements(std::vector<std::string> e) : e_(std::move(e)) {}
  bool done() const { return pos_ == e_.size(); }
  bool next(std::string& out) {
    if (done()) return false;
    out = std::move(e_[pos_++]);
    return true;
  }
  bool next_int(int64_t& v) { return !done() && parse_int64(e_[pos_], v) && (++pos_, true); }

 private:
  std::vector<std::string> e_;
  size_t pos_ = 0;
};

bool decode_node(std::string_view key, std::string_view lp, StreamNode& node) {
  if (key.size() != 16) return false;
  Reader kr(key);
  if (!read_raw_id(kr, node.master_id)) return false;
  std::vector<std::string> elements;
  if (!rdb::listpack_for_each(lp, [&](std::string_view e) {
        elements.emplace_back(e);
        return true;
      })) {
    return false;
  }
  Elements it(std::move(elements));
  int64_t live = 0;
  int64_t deleted = 0;
  int64_t nfields = 0;
  int64_t zero = -1;
  if (!it.next_int(live) || !it.next_int(deleted) || !it.next_int(nfields) || live < 0 ||
      deleted < 0 || nfields < 0) {
    return false;
  }
  for (int64_t i = 0; i < nfields; ++i) {
    std::string f;
    if (!it.next(f)) return false;
    node.master_fields.push_back(std::move(f));
  }
  if (!it.next_int(zero) || zero != 0) return false;
  int64_t seen_live = 0;
  int64_t seen_deleted = 0;
  StreamID last_live;  // every entry lies above the live ones before it (not the tombstones)
  std::vector<std::string> strings;
  std::vector<std::string_view> views;
  while (!it.done()) {
    int64_t flags = 0;
    int64_t ms_diff = 0;
    int64_t seq_diff = 0;
    if (!it.next_int(flags) || flags < 0 || flags > 3 || !it.next_int(ms_diff) ||
        !it.next_int(seq_diff)) {
      return false;
    }
    const StreamID id{node.master_id.ms + static_cast<uint64_t>(ms_diff),
                      node.master_id.seq + static_cast<uint64_t>(seq_diff)};
    const bool same = (flags & kStreamItemSameFields) != 0;
    int64_t count = nfields;
    if (!same && (!it.next_int(count) || count < 0)) return false;
    strings.clear();
    for (int64_t i = 0; i < count; ++i) {
      std::string f;
      std::string v;
      if (same) {
        f = node.master_fields[static_cast<size_t>(i)];
      } else if (!it.next(f)) {
        return false;
      }
      if (!it.next(v)) return false;
      strings.push_back(std::move(f));
      strings.push_back(std::move(v));
    }
    int64_t lp_count = 0;
    if (!it.next_int(lp_count) || lp_count != count + 3 + (same ? 0 : count + 1)) return false;
    if (id < node.master_id) return false;
    if (seen_live > 0 && id <= last_live) return false;
    if ((flags & kStreamItemDeleted) != 0) {
      ++seen_deleted;
    } else {
      ++seen_live;
      last_live = id;
    }
    views.assign(strings.begin(), strings.end());
    node.add(id, static_cast<uint8_t>(flags), views);
  }
  if (seen_live + seen_deleted == 0 || seen_live != live || seen_deleted != deleted) return false;
  node.live = live;
  node.deleted = deleted;
  node.bytes = lp.size();
  return true;
}

bool decode_group(Reader& r, bool v2, StreamObject& stream) {
  std::string name;
  StreamID last_id;
  if (!r.read_string(name) || !read_id(r, last_id)) return false;
  int64_t entries_read = 0;
  if (v2) {
    uint64_t raw = 0;
    if (!r.read_len(raw)) return false;
    entries_read = static_cast<int64_t>(raw);
  } else {
    entries_read = stream.estimate_entries_read(last_id);
  }
  StreamGroup* group = stream.create_group(name, last_id, entries_read);
  if (group == nullptr) return false;  // a duplicated group name
  uint64_t pel_size = 0;
  if (!r.read_len(pel_size)) return false;
  struct Pending {
    StreamID id;
    int64_t time;
    uint64_t count;
    bool owned = false;
  };
  std::map<StreamID, Pending> pel;
  for (uint64_t i = 0; i < pel_size; ++i) {
    Pending p;
    if (!read_raw_id(r, p.id) || !read_ms(r, p.time) || !r.read_len(p.count)) return false;
    if (!pel.emplace(p.id, p).second) return false;
  }
  uint64_t consumers = 0;
  if (!r.read_len(consumers)) return false;
  for (uint64_t i = 0; i < consumers; ++i) {
    std::string cname;
    int64_t seen = 0;
    uint64_t owned = 0;
    if (!r.read_string(cname) || !read_ms(r, seen) || !r.read_len(owned)) return false;
    if (group->consumer(cname) != nullptr) return false;
    StreamConsumer* c = group->get_or_create_consumer(cname, seen, nullptr);
    for (uint64_t j = 0; j < owned; ++j) {
      StreamID id;
      if (!read_raw_id(r, id)) return false;
      auto p = pel.find(id);
      if (p == pel.end() || p->second.owned) return false;
      p->second.owned = true;
      group->set_pending(id, c, p->second.time, p->second.count);
    }
  }
  // Every pending entry must have an owner.
  for (const auto& [id, p] : pel) {
    if (!p.owned) return false;
  }
  return true;
}

}  // namespace

void encode_stream(const StreamObject& stream, std::string& out) {
  out.push_back(static_cast<char>(rdb::kTypeStreamListpacks2));
  rdb::write_len(out, stream.nodes().size());
  for (const auto& [master, node] : stream.nodes()) {
    std::string key;
    put_raw_id(key, master);
    rdb::write_string(out, key);
    rdb::write_string(out, node_listpack(node));
  }
  rdb::write_len(out, stream.length());
  rdb::write_len(out, stream.last_id().ms);
  rdb::write_len(out, stream.last_id().seq);
  rdb::write_len(out, stream.first_id().ms);
  rdb::write_len(out, stream.first_id().seq);
  rdb::write_len(out, stream.max_deleted_id().ms);
  rdb::write_len(out, stream.max_deleted_id().seq);
  rdb::write_len(out, stream.entries_added());
  rdb::write_len(out, stream.groups().size());
  for (const auto& [name, group] : stream.groups()) {
    rdb::write_string(out, name);
    rdb::write_len(out, group->last_id.ms);
    rdb::write_len(out, group->last_id.seq);
    rdb::write_len(out, static_cast<uint64_t>(group->entries_read));
    rdb::write_len(out, group->pel().size());
    for (const auto& [id, nack] : group->pel()) {
      put_raw_id(out, id);
      put_ms(out, nack.delivery_time);
      rdb::write_len(out, nack.delivery_count);
    }
    rdb::write_len(out, group->consumers().size());
    for (const auto& [cname, consumer] : group->consumers()) {
      rdb::write_string(out, cname);
      put_ms(out, consumer->seen_time);
      write_pel_ids(out, consumer->pending);
    }
  }
}

std::unique_ptr<StreamObject> decode_stream(uint8_t type, Reader& r) {
  const bool v2 = type == rdb::kTypeStreamListpacks2;
  auto stream = std::make_unique<StreamObject>();
  uint64_t nodes = 0;
  if (!r.read_len(nodes)) return nullptr;
  uint64_t live = 0;
  for (uint64_t i = 0; i < nodes; ++i) {
    std::string key;
    std::string lp;
    if (!r.read_string(key) || !r.read_string(lp)) return nullptr;
    StreamNode node;
    if (!decode_node(key, lp, node)) return nullptr;
    live += static_cast<uint64_t>(node.live);
    if (!stream->restore_node(std::move(node))) return nullptr;
  }
  uint64_t length = 0;
  StreamID last_id;
  if (!r.read_len(length) || !read_id(r, last_id) || length != live) return nullptr;
  stream->set_length(length);
  stream->set_last_id(last_id);
  // A tombstone may lie above the last ID (XDEL, then XSETID lower): only live entries must not.
  if (stream->length() != 0 && stream->last_live_id() > last_id) return nullptr;
  if (v2) {
    StreamID first_id;
    StreamID max_deleted;
    uint64_t added = 0;
    if (!read_id(r, first_id) || !read_id(r, max_deleted) || !r.read_len(added)) return nullptr;
    stream->set_first_id(first_id);
    stream->set_max_deleted_id(max_deleted);
    stream->set_entries_added(added);
  } else {
    stream->set_entries_added(length);
    stream->set_first_id(stream->first_live_id());
  }
  uint64_t groups = 0;
  if (!r.read_len(groups)) return nullptr;
  for (uint64_t i = 0; i < groups; ++i) {
    if (!decode_group(r, v2, *stream)) return nullptr;
  }
  return stream;
}

}  // namespace ringkv::engine
