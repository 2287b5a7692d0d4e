// The consistent-hash ring: membership changes rebuild a flat sorted array of virtual nodes, so
// lookups are a hash and binary searches with no allocation and no pointer chasing.
#include "hashring/hash_ring.h"

#include <algorithm>
#include <cassert>
#include <charconv>

#include "hashring/hash_tag.h"

namespace ringkv::hashring {

namespace {

bool by_address(const Member& m, std::string_view address) { return m.address < address; }

}  // namespace

std::optional<Member> parse_member(std::string_view text) {
  Member member;
  const size_t eq = text.rfind('=');
  if (eq != std::string_view::npos) {
    const std::string_view digits = text.substr(eq + 1);
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), member.weight);
    if (ec != std::errc() || end != digits.data() + digits.size() || member.weight == 0) {
      return std::nullopt;
    }
    text = text.substr(0, eq);
  }
  if (text.empty()) return std::nullopt;
  member.address = std::string(text);
  return member;
}

HashRing::HashRing(HashScheme scheme, uint32_t replicas)
    : scheme_(std::move(scheme)), replicas_(replicas) {
  assert(replicas_ >= 1 && scheme_.probes >= 1 && scheme_.probes <= 16);
  rebuild();
  version_ = 0;
}

bool HashRing::set_members(std::span<const Member> members) {
  std::vector<Member> sorted(members.begin(), members.end());
  // Sorting by address then descending weight keeps the largest weight of a duplicate first.
  std::sort(sorted.begin(), sorted.end(), [](const Member& a, const Member& b) {
    return a.address != b.address ? a.address < b.address : a.weight > b.weight;
  });
  sorted.erase(std::unique(sorted.begin(), sorted.end(),
                           [](const Member& a, const Member& b) { return a.address == b.address; }),
               sorted.end());
  for ([[maybe_unused]] const Member& m : sorted) assert(m.weight >= 1);
  if (sorted == nodes_) return false;
  nodes_ = std::move(sorted);
  rebuild();
  return true;
}

bool HashRing::add_node(std::string_view address, uint32_t weight) {
  assert(weight >= 1);
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), address, by_address);
  if (it != nodes_.end() && it->address == address) return false;
  nodes_.insert(it, Member{std::string(address), weight});
  rebuild();
  return true;
}

bool HashRing::remove_node(std::string_view address) {
  const size_t i = index_of(address);
  if (i == kNoNode) return false;
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(i));
  rebuild();
  return true;
}

bool HashRing::set_weight(std::string_view address, uint32_t weight) {
  assert(weight >= 1);
  const size_t i = index_of(address);
  if (i == kNoNode || nodes_[i].weight == weight) return false;
  nodes_[i].weight = weight;
  rebuild();
  return true;
}

size_t HashRing::index_of(std::string_view address) const {
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), address, by_address);
  if (it == nodes_.end() || it->address != address) return kNoNode;
  return static_cast<size_t>(it - nodes_.begin());
}

size_t HashRing::successor(uint32_t position) const {
  if (points_.empty()) return kNoNode;
  // The slice `position` falls in holds a point or two on average: a short scan from its first.
  const uint32_t slice = position >> (32 - kBucketBits);
  size_t i = buckets_[slice];
  const size_t end = buckets_[slice + 1];
  while (i < end && points_[i].point < position) ++i;
  return i == points_.size() ? 0 : i;
}

void HashRing::preference(std::string_view key, size_t n, std::vector<size_t>& out) const {
  out.clear();
  if (points_.empty()) return;
  n = std::min(n, nodes_.size());
  // Each probe's position and the first virtual node at or after it whose node is not taken
  // yet: each round takes the node of the closest one (the earlier probe on a tie) — the
  // point_index_of of the ring without the nodes taken before — and moves the probes at it past
  // the nodes taken.
  constexpr uint32_t kMaxProbes = 16;
  const uint32_t probes = std::min(scheme_.probes, kMaxProbes);
  uint32_t positions[kMaxProbes];
  size_t at[kMaxProbes];
  positions[0] = scheme_.key_hash(hash_tag(key));
  for (uint32_t probe = 0; probe < probes; ++probe) {
    if (probe > 0) positions[probe] = probe_position(positions[0], probe);
    at[probe] = successor(positions[probe]);
  }
  for (;;) {
    size_t best = at[0];
    uint32_t best_distance = points_[best].point - positions[0];
    for (uint32_t probe = 1; probe < probes; ++probe) {
      const uint32_t distance = points_[at[probe]].point - positions[probe];
      if (distance < best_distance) {
        best = at[probe];
        best_distance = distance;
      }
    }
    const uint32_t taken = points_[best].node;
    out.push_back(taken);
    if (out.size() >= n) return;
    // Only the probes at the node just taken move (the others are at nodes not taken).
    for (uint32_t probe = 0; probe < probes; ++probe) {
      size_t i = at[probe];
      if (points_[i].node != taken) continue;
      for (size_t step = 0; step < points_.size(); ++step) {
        i = next_other_[i];
        if (std::find(out.begin(), out.end(), points_[i].node) == out.end()) break;
      }
      at[probe] = i;
    }
  }
}

size_t HashRing::point_index_of(std::string_view key) const {
  if (points_.empty()) return kNoNode;
  const uint32_t first = scheme_.key_hash(hash_tag(key));
  size_t best = successor(first);
  if (scheme_.probes == 1) return best;
  // Multi-probe: of all probes, the one closest (clockwise) to its virtual node decides. Unsigned
  // subtraction measures the distance across the wrap; on equal distances the earlier probe wins.
  uint32_t best_distance = points_[best].point - first;
  for (uint32_t probe = 1; probe < scheme_.probes; ++probe) {
    const uint32_t position = probe_position(first, probe);
    const size_t i = successor(position);
    const uint32_t distance = points_[i].point - position;
    if (distance < best_distance) {
      best = i;
      best_distance = distance;
    }
  }
  return best;
}

void HashRing::rebuild() {
  size_t total = 0;
  for (const Member& m : nodes_) total += static_cast<size_t>(replicas_) * m.weight;
  points_.clear();
  points_.reserve(total);
  std::string label;
  std::string canonical = "hash=" + scheme_.name + "\nreplicas=" + std::to_string(replicas_) + "\n";
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Member& m = nodes_[n];
    const uint64_t count = static_cast<uint64_t>(replicas_) * m.weight;
    for (uint64_t i = 0; i < count; ++i) {
      label = std::to_string(i);
      label += m.address;
      points_.push_back(VirtualNode{scheme_.point_hash(label), static_cast<uint32_t>(n)});
    }
    canonical += m.address + "=" + std::to_string(m.weight) + "\n";
  }
  std::sort(points_.begin(), points_.end(), [](const VirtualNode& a, const VirtualNode& b) {
    return a.point != b.point ? a.point < b.point : a.node < b.node;
  });
  buckets_.assign((size_t{1} << kBucketBits) + 1, 0);
  size_t i = 0;
  for (size_t slice = 0; slice <= (size_t{1} << kBucketBits); ++slice) {
    while (i < points_.size() && (points_[i].point >> (32 - kBucketBits)) < slice) ++i;
    buckets_[slice] = static_cast<uint32_t>(i);
  }
  // next_other_[k] is k + 1 when that is another node's, else next_other_[k + 1]: computed
  // counterclockwise, twice round so that the last ones see the first ones' values.
  next_other_.resize(points_.size());
  for (size_t k = 0; k < points_.size(); ++k) next_other_[k] = static_cast<uint32_t>(k);
  for (size_t lap = 0; lap < 2; ++lap) {
    for (size_t k = points_.size(); k-- > 0;) {
      const size_t after = k + 1 == points_.size() ? 0 : k + 1;
      next_other_[k] = points_[after].node != points_[k].node ? static_cast<uint32_t>(after)
                                                              : next_other_[after];
    }
  }
  fingerprint_ = hash64(canonical);
  ++version_;
}

}  // namespace ringkv::hashring
