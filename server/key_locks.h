// KeyLocks: the per-key locks cross-node transactions hold on the nodes that own their keys
// (README: Transactions across nodes). An owner — the connection a transaction's frames arrive on,
// or the client whose transaction this node coordinates — takes all the keys of its part at once
// or none, so two transactions never wait for each other at one node, and the coordinator takes
// the nodes in one global order (by address), so they never wait for each other across nodes.
// While a key is locked, commands of other owners that touch it wait
// (server/cross_transaction.cpp). Pure bookkeeping: no I/O, no clock.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/string_map.h"

namespace ringkv::server {

class KeyLocks {
 public:
  using Owner = uint64_t;  // a connection id; 0 is no owner
  static constexpr Owner kNone = 0;

  // No key is locked: the check every keyed command makes costs this one test.
  bool empty() const { return locks_.empty(); }
  // The owner of `key`'s lock, or kNone.
  Owner holder(std::string_view key) const;
  // Whether some key of `keys` is locked by an owner other than `owner`.
  bool blocked(Owner owner, std::span<const std::string_view> keys) const;
  // Locks every key of `keys` for `owner` if none is locked by another owner (keys it already
  // holds stay held); otherwise locks nothing and returns false.
  bool try_lock(Owner owner, std::span<const std::string> keys);
  // Releases every lock of `owner`; returns whether it held any.
  bool release(Owner owner);
  // Whether `owner` holds any lock.
  bool holds(Owner owner) const { return held_.count(owner) != 0; }
  size_t size() const { return locks_.size(); }

 private:
  StringMap<Owner> locks_;
  std::unordered_map<Owner, std::vector<std::string>> held_;
};

}  // namespace ringkv::server
