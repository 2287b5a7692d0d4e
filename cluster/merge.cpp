// ReplyMerge: merging the replies of a command's parts, and the cluster SCAN cursor.
#include "cluster/merge.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <random>
#include <unordered_set>

#include "engine/keyspace/digest.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_reader.h"

namespace ringkv::cluster {

std::string error_reply(std::string_view text) {
  std::string out = "-";
  out.append(text);
  out += "\r\n";
  return out;
}

ReplyMerge::Kind ReplyMerge::kind_for(std::string_view command) {
  const size_t bar = command.find('|');
  const engine::CommandSpec* spec = engine::find_command(command.substr(0, bar));
  if (spec != nullptr && bar != std::string_view::npos) {
    spec = engine::find_subcommand(*spec, command.substr(bar + 1));
  }
  return spec != nullptr ? spec->merge : Kind::kSum;
}

ReplyMerge::ReplyMerge(Kind kind, bool write, protocol::RespVersion resp, size_t parts,
                       ReplyDone done)
    : kind_(kind),
      write_(write),
      resp_(resp),
      done_(std::move(done)),
      remaining_(parts),
      replies_(parts),
      positions_(parts) {}

void ReplyMerge::set_positions(size_t part, std::vector<size_t> positions) {
  total_values_ += positions.size();
  positions_[part] = std::move(positions);
}

void ReplyMerge::part_done(size_t part, bool ok, std::string_view reply) {
  if (ok) {
    replies_[part].assign(reply);
  } else {
    failed_parts_++;
    if (link_error_.empty()) link_error_.assign(reply);
  }
  if (--remaining_ == 0) done_(merge());
}

std::string ReplyMerge::merge() const {
  const bool best_effort =
      kind_ == Kind::kSumReachable || kind_ == Kind::kUnion || kind_ == Kind::kPairSums;
  if (!link_error_.empty() && !best_effort) {
    std::string text = link_error_;
    if (write_ && failed_parts_ < replies_.size()) text += " (the other nodes' parts were applied)";
    return error_reply(text);
  }
  for (const auto& r : replies_) {
    if (!r.empty() && r[0] == '-') return r;
  }
  // Parts that failed (best-effort kinds only get here with some) have no reply.
  std::vector<protocol::ReplyValue> values;
  values.reserve(replies_.size());
  for (const auto& r : replies_) {
    if (r.empty()) continue;
    if (!protocol::decode_reply(r, values.emplace_back())) {
      return error_reply("ERR malformed reply from a peer");
    }
  }
  std::string out;
  protocol::ReplyWriter w(out, resp_);
  switch (kind_) {
    case Kind::kValues: {
      // A failed part fails the whole command, so values[i] is part i's reply.
      std::vector<const protocol::ReplyValue*> merged(total_values_, nullptr);
      for (size_t i = 0; i < values.size(); ++i) {
        for (size_t j = 0; j < positions_[i].size() && j < values[i].elements.size(); ++j) {
          merged[positions_[i][j]] = &values[i].elements[j];
        }
      }
      w.array(merged.size());
      for (const auto* v : merged) {
        if (v == nullptr || v->null) {
          w.null();
        } else {
          w.bulk(v->text);
        }
      }
      break;
    }
    case Kind::kSum:
    case Kind::kSumReachable: {
      int64_t sum = 0;
      for (const auto& v : values) sum += v.integer;
      w.integer(sum);
      break;
    }
    case Kind::kAllOk:
      w.ok();
      break;
    case Kind::kConcat: {
      size_t n = 0;
      for (const auto& v : values) n += v.elements.size();
      w.array(n);
      for (const auto& v : values) {
        for (const auto& e : v.elements) w.bulk(e.text);
      }
      break;
    }
    case Kind::kRandom: {
      std::vector<std::string_view> found;
      for (const auto& v : values) {
        if (!v.null) found.push_back(v.text);
      }
      if (found.empty()) {
        w.null();
      } else {
        static std::minstd_rand rng(std::random_device{}());
        w.bulk(found[rng() % found.size()]);
      }
      break;
    }
    case Kind::kUnion: {
      std::vector<std::string_view> names;
      std::unordered_set<std::string_view> seen;
      for (const auto& v : values) {
        for (const auto& e : v.elements) {
          if (seen.insert(e.text).second) names.push_back(e.text);
        }
      }
      w.array(names.size());
      for (std::string_view n : names) w.bulk(n);
      break;
    }
    case Kind::kPairSums: {
      // Every node answers for the same names in the same order; the first reply gives them.
      const size_t n = values.empty() ? 0 : values[0].elements.size();
      w.array(n);
      for (size_t i = 0; i + 1 < n; i += 2) {
        int64_t sum = 0;
        for (const auto& v : values) {
          if (i + 1 < v.elements.size()) sum += v.elements[i + 1].integer;
        }
        w.bulk(values[0].elements[i].text);
        w.integer(sum);
      }
      break;
    }
    case Kind::kSame:
      return replies_.empty() ? out : replies_[0];
    case Kind::kDigest: {
      std::vector<std::string_view> digests;
      for (const auto& v : values) digests.push_back(v.text);
      const std::string combined = engine::combine_digests(digests);
      if (combined.empty()) return error_reply("ERR malformed digest from a peer");
      w.simple(combined);
      break;
    }
    case Kind::kAllTrue: {
      const size_t n = values.empty() ? 0 : values[0].elements.size();
      w.array(n);
      for (size_t i = 0; i < n; ++i) {
        bool all = true;
        for (const auto& v : values) all = all && i < v.elements.size() && v.elements[i].integer;
        w.integer(all ? 1 : 0);
      }
      break;
    }
  }
  return out;
}

namespace {

// The bits of a cursor below its position that hold the tag: what the position leaves of 64 bits
// (a node's own cursor is below 2^Store::kScanCursorBits), at most 16 (a ring of up to 256
// members; one of thousands gets fewer).
int scan_tag_bits(size_t nodes) {
  const int position_bits = engine::Store::kScanCursorBits + std::bit_width(nodes);
  return std::clamp(64 - position_bits, 0, 16);
}

uint64_t tag_mask(size_t nodes) { return (uint64_t{1} << scan_tag_bits(nodes)) - 1; }

}  // namespace

uint16_t scan_tag(uint64_t ring_fingerprint) {
  const uint64_t f = ring_fingerprint ^ (ring_fingerprint >> 32);
  return static_cast<uint16_t>(f ^ (f >> 16));
}

ScanStep scan_step(uint64_t cursor, size_t nodes, uint16_t tag) {
  // 0, or a cursor of another ring: from the start.
  if ((cursor & tag_mask(nodes)) != (tag & tag_mask(nodes))) return ScanStep{0, 0};
  const uint64_t position = cursor >> scan_tag_bits(nodes);
  return ScanStep{static_cast<size_t>(position % nodes), position / nodes};
}

std::string cluster_scan_reply(std::string_view node_reply, size_t node, size_t nodes, uint16_t tag,
                               protocol::RespVersion resp) {
  protocol::ReplyValue v;
  if (node_reply.empty() || node_reply[0] == '-' || !protocol::decode_reply(node_reply, v) ||
      v.elements.size() != 2) {
    return std::string(node_reply);
  }
  // The node prints its unsigned cursor as a signed 64-bit integer, like Redis.
  int64_t printed = 0;
  std::from_chars(v.elements[0].text.data(), v.elements[0].text.data() + v.elements[0].text.size(),
                  printed);
  const uint64_t next = static_cast<uint64_t>(printed);
  const uint64_t position = next != 0 ? next * nodes + node : (node + 1 < nodes ? node + 1 : 0);
  const uint64_t cluster_cursor =
      position == 0 ? 0 : position << scan_tag_bits(nodes) | (tag & tag_mask(nodes));
  std::string out;
  protocol::ReplyWriter w(out, resp);
  w.array(2);
  w.bulk_integer(static_cast<int64_t>(cluster_cursor));
  w.array(v.elements[1].elements.size());
  for (const auto& k : v.elements[1].elements) w.bulk(k.text);
  return out;
}

}  // namespace ringkv::cluster
