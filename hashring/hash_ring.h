// The consistent-hash ring: which node owns a key. Pure code, no I/O. Every node builds the same
// ring from the same member list, so routing needs no coordination beyond agreeing on the list
// (compare fingerprint()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hashring/hash_scheme.h"

namespace ringkv::hashring {

// A ring member: its address as written in the config ("host:port") and its weight.
struct Member {
  std::string address;
  uint32_t weight = 1;  // the node gets replicas × weight virtual nodes; at least 1

  bool operator==(const Member&) const = default;
};

// Parses "host:port" or "host:port=weight" (weight a positive integer); nullopt if malformed.
std::optional<Member> parse_member(std::string_view text);

// One virtual node: a point on the 2^32 ring and the index of its node in HashRing::nodes().
struct VirtualNode {
  uint32_t point;
  uint32_t node;
};

class HashRing {
 public:
  static constexpr uint32_t kDefaultReplicas = 100;
  static constexpr size_t kNoNode = static_cast<size_t>(-1);

  // An empty ring placing `replicas` virtual nodes per unit of weight with `scheme`.
  explicit HashRing(HashScheme scheme = balanced_scheme(), uint32_t replicas = kDefaultReplicas);

  // Replaces the member list. Duplicated addresses count once (with the largest weight given, so
  // the result does not depend on the order of the list). Returns whether the ring changed.
  bool set_members(std::span<const Member> members);
  // Adds a node; returns false (and changes nothing) if the address is already a member.
  bool add_node(std::string_view address, uint32_t weight = 1);
  // Removes a node; returns false if the address is not a member.
  bool remove_node(std::string_view address);
  // Changes a member's weight; returns false if it is not a member or already has that weight.
  bool set_weight(std::string_view address, uint32_t weight);

  // Index into points() of the virtual node that owns `key` (after the hash-tag rule), or kNoNode
  // if the ring is empty. Allocation-free: one hash and a binary search per probe.
  size_t point_index_of(std::string_view key) const;
  // Index into nodes() of the node that owns `key`, or kNoNode if the ring is empty.
  size_t owner_index(std::string_view key) const {
    const size_t i = point_index_of(key);
    return i == kNoNode ? kNoNode : points_[i].node;
  }
  // Address of the node that owns `key`; empty if the ring is empty.
  std::string_view owner_of(std::string_view key) const {
    const size_t i = point_index_of(key);
    return i == kNoNode ? std::string_view() : nodes_[points_[i].node].address;
  }

  // Index into points() of the first virtual node at or clockwise after `position` (wrapping to
  // the start); kNoNode if the ring is empty.
  size_t successor(uint32_t position) const;

  // The key's preference list, `n` indexes into nodes() at most (fewer when the ring has fewer
  // nodes): its owner, then the owner it would have without that node, then without both, and
  // so on. With replication the first is the key's primary and the others its replicas; taking
  // a node off the ring makes each key's next node in this list its owner, so a failed-over key
  // lands where its copies already are.
  void preference(std::string_view key, size_t n, std::vector<size_t>& out) const;

  // Index of `address` in nodes(), or kNoNode if it is not a member.
  size_t index_of(std::string_view address) const;
  bool contains(std::string_view address) const { return index_of(address) != kNoNode; }

  // Members sorted by address: their order defines node indexes.
  std::span<const Member> nodes() const { return nodes_; }
  // Virtual nodes sorted by point; equal points are ordered by node index (that is, by address),
  // and a lookup landing on them goes to the first, so ties never depend on insertion order.
  std::span<const VirtualNode> points() const { return points_; }
  const HashScheme& scheme() const { return scheme_; }
  uint32_t replicas() const { return replicas_; }
  size_t size() const { return nodes_.size(); }
  bool empty() const { return nodes_.empty(); }

  // Incremented by every change of members or weights; local bookkeeping, not compared by peers.
  uint64_t version() const { return version_; }
  // A stable 64-bit hash of the hash scheme's name, the replicas and the sorted members with
  // their weights. Two nodes with equal fingerprints route every key the same way.
  uint64_t fingerprint() const { return fingerprint_; }

 private:
  // Recomputes points_ and fingerprint_ from nodes_ and bumps the version.
  void rebuild();

  HashScheme scheme_;
  uint32_t replicas_;
  std::vector<Member> nodes_;
  std::vector<VirtualNode> points_;
  // For each of the 2^kBucketBits slices of the ring, the index in points_ of its first
  // virtual node (points_.size() past the last): successor() looks in one slice instead of
  // searching the whole ring.
  static constexpr int kBucketBits = 12;
  std::vector<uint32_t> buckets_;
  // For each virtual node, the index of the first one clockwise after it that belongs to another
  // node (itself on a ring of one node): preference() skips a taken node's run in one step.
  std::vector<uint32_t> next_other_;
  uint64_t version_ = 0;
  uint64_t fingerprint_ = 0;
};

}  // namespace ringkv::hashring
