// Router: decides where a command runs, from its command-table row and the ring. Pure code.
//
//   all keys on this node ............................ kLocal
//   all keys on one peer .............................. kRemote (relayed whole)
//   MGET/MSET/DEL/UNLINK/EXISTS/TOUCH over several .... kSplit (one fragment per owner)
//   any other command with keys on several nodes ...... kCrossSlot
//   keyspace-wide command (DBSIZE, KEYS, SCAN, ...) ... kFanOut (every node)
//   cluster-wide command (PUBLISH, PUBSUB ...) ........ kFanOut (every node)
//   keyless command ................................... kLocal
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "hashring/hash_ring.h"

namespace ringkv::cluster {

enum class RouteKind { kLocal, kRemote, kSplit, kCrossSlot, kFanOut };

// The part of a split command that one node runs: argv[0] plus the key groups (a key and, for
// MSET, its value) at the listed positions, in their original order.
struct Fragment {
  size_t node;                 // index in HashRing::nodes()
  std::vector<size_t> groups;  // argv index of each key group's key
};

struct Route {
  // Whether the command's keys live on several nodes (split, refused or every node).
  bool spans_nodes() const {
    return kind == RouteKind::kSplit || kind == RouteKind::kCrossSlot || kind == RouteKind::kFanOut;
  }

  RouteKind kind = RouteKind::kLocal;
  // kRemote: the owner; kLocal: this node when the command has keys, kNoNode when keyless.
  size_t node = hashring::HashRing::kNoNode;
  std::vector<Fragment> fragments;  // kSplit
  size_t key_step = 1;              // kSplit: arguments per key group
};

class Router {
 public:
  // `self` is this node's index in ring.nodes().
  Router(const hashring::HashRing& ring, size_t self) : ring_(&ring), self_(self) {}

  // The route of argv, already resolved to `spec` and arity-checked.
  Route route(const engine::CommandSpec& spec, std::span<const std::string_view> argv) const;

  size_t self() const { return self_; }
  const hashring::HashRing& ring() const { return *ring_; }

 private:
  // Route of a command with movable keys at these argv positions.
  Route route_keys(const std::vector<size_t>& keys, std::span<const std::string_view> argv) const;

  const hashring::HashRing* ring_;
  size_t self_;
};

// A kSplit fragment's command: argv[0], then each of its key groups.
std::vector<std::string> fragment_command(std::span<const std::string_view> argv,
                                          const Route& route, const Fragment& fragment);

// Where a kSplit fragment's keys stand among the command's keys (0 for the first key): the
// positions of its values in a merged MGET reply (ReplyMerge::set_positions).
std::vector<size_t> fragment_positions(const engine::CommandSpec& spec, const Route& route,
                                       const Fragment& fragment);

}  // namespace ringkv::cluster
