// Balance and movement statistics of a ring: how much of the key space each node owns, how a key
// set spreads over the nodes, and which keys move when the membership changes. Used by the
// ringkv-ring tool and the tests; never on the request path.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hashring/hash_ring.h"

namespace ringkv::hashring {

// Fraction of the 2^32 ring covered by each node's arcs (an arc runs from the previous virtual
// node, exclusive, to the node's virtual node, inclusive), indexed like ring.nodes(); sums to 1.
std::vector<double> arc_shares(const HashRing& ring);

// Probability that a uniformly hashed key is owned by each node under the ring's lookup rule,
// indexed like ring.nodes(). Equals arc_shares() for one probe; with k probes a node's share is
// the sum over its arcs of P(the closest probe falls in that arc), computed exactly from the arc
// lengths assuming independent uniform probes.
std::vector<double> effective_shares(const HashRing& ring);

// How evenly a quantity (a share or a key count) is spread over the nodes, weight-aware.
struct Balance {
  double mean = 0;                     // mean value per node
  double stddev = 0;                   // population standard deviation of the values
  double busiest_over_mean = 0;        // max over nodes of value / (total × weight / total weight)
  size_t busiest = HashRing::kNoNode;  // node index attaining busiest_over_mean
};

// Balance of per-node `values` (indexed like ring.nodes()). With equal weights,
// busiest_over_mean is max / mean; with weights, each node is compared with its fair part.
Balance balance_of(const HashRing& ring, std::span<const double> values);

// The sample keys "key:0" … "key:<count-1>".
std::vector<std::string> sample_keys(size_t count);

// Keys owned by each node, indexed like ring.nodes().
std::vector<uint64_t> keys_per_node(const HashRing& ring, std::span<const std::string> keys);

// Keys that changed owner from one ring to another.
struct Transfer {
  std::string from;  // owner in the first ring
  std::string to;    // owner in the second ring
  uint64_t keys = 0;
};
struct Movement {
  uint64_t total = 0;               // keys examined
  uint64_t moved = 0;               // keys whose owner differs
  std::vector<Transfer> transfers;  // one entry per (from, to) pair with moves, sorted
  // Keys that moved between two nodes neither of which is `node`. Consistent hashing promises
  // zero when `node` is the only member added or removed.
  uint64_t moved_not_involving(std::string_view node) const;
};

// Compares the owners of `keys` in `before` and `after`. Both rings must be non-empty.
Movement movement(const HashRing& before, const HashRing& after, std::span<const std::string> keys);

}  // namespace ringkv::hashring
