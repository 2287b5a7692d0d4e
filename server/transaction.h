// Transaction: one client's MULTI/EXEC state — the commands queued since MULTI, whether one was
// refused while queuing, the keys it WATCHes and whether one of them changed since.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringkv::server {

struct Transaction {
  bool active = false;   // between MULTI and EXEC/DISCARD
  bool aborted = false;  // a command was refused while queuing: EXEC answers EXECABORT
  std::vector<std::vector<std::string>> queued;      // run at EXEC, in order
  uint32_t flags = 0;                                // union of the queued commands' flags
  std::vector<std::pair<int, std::string>> watched;  // WATCHed keys here (database, key)
  bool watched_changed = false;                      // EXEC answers a null array

  // In a cluster: the nodes (indexes in the routing ring) the transaction touches. One node:
  // the whole block runs there (relayed whole to a peer); several: a cross-node transaction.
  static constexpr size_t kNoNode = static_cast<size_t>(-1);
  // A command split per owner at EXEC (MGET, MSET, DEL... over several nodes).
  static constexpr size_t kSplit = static_cast<size_t>(-2);
  std::vector<size_t> queued_nodes;   // per queued command: its keys' node, kNoNode if keyless
  std::vector<size_t> command_nodes;  // the distinct nodes of the queued commands
  std::vector<size_t> watch_nodes;    // the distinct nodes of the WATCHed keys
  uint64_t epoch = 0;                 // the routing epoch when the first node was noted

  // The distinct nodes of the queued commands and the WATCHes.
  std::vector<size_t> nodes() const {
    std::vector<size_t> all = command_nodes;
    for (size_t n : watch_nodes) add(all, n);
    return all;
  }
  // Notes that a queued command (`watch` false) or a WATCH touches `node` under routing epoch
  // `current`.
  void touch(size_t node, bool watch, uint64_t current) {
    if (node == kNoNode) return;
    if (command_nodes.empty() && watch_nodes.empty()) epoch = current;
    add(watch ? watch_nodes : command_nodes, node);
  }
  // Leaves MULTI state (EXEC, DISCARD, RESET); WATCHes are dropped separately.
  void end() {
    active = false;
    aborted = false;
    queued.clear();
    queued_nodes.clear();
    command_nodes.clear();
    flags = 0;
    if (watch_nodes.empty()) epoch = 0;
  }
  // The WATCHes were dropped (UNWATCH, EXEC, DISCARD, RESET).
  void unwatched() {
    watched.clear();
    watched_changed = false;
    watch_nodes.clear();
    if (command_nodes.empty()) epoch = 0;
  }

 private:
  static void add(std::vector<size_t>& set, size_t node) {
    if (std::find(set.begin(), set.end(), node) == set.end()) set.push_back(node);
  }
};

}  // namespace ringkv::server
