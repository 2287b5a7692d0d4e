// Transaction: one client's MULTI/EXEC state — the commands queued since MULTI, whether one was
// refused while queuing, the keys it WATCHes and whether one of them changed since.
#pragma once

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
  std::vector<std::pair<int, std::string>> watched;  // WATCHed keys (database, key)
  bool watched_changed = false;                      // EXEC answers a null array
  // In a cluster: the node (index in the routing ring) whose keys the transaction and its
  // WATCHes touch; kNoNode while it touches none. A command for another node aborts it.
  static constexpr size_t kNoNode = static_cast<size_t>(-1);
  size_t node = kNoNode;
  uint64_t epoch = 0;  // the cluster's routing epoch when `node` was chosen

  // Leaves MULTI state (EXEC, DISCARD, RESET); WATCHes are dropped separately.
  void end() {
    active = false;
    aborted = false;
    queued.clear();
    flags = 0;
    node = kNoNode;
    epoch = 0;
  }
};

}  // namespace ringkv::server
