// TrackingTable: what client-side caching (CLIENT TRACKING) remembers on this node — for each key
// the clients that read it (default mode), and for each BCAST prefix its clients and the keys
// under it changed since the last broadcast (with who changed each, for NOLOOP).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hashring/hash_ring.h"
#include "server/string_map.h"

namespace ringkv::server {

class TrackingTable {
 public:
  // Client `id` read `key`: a change of the key invalidates it for the client.
  void remember(uint64_t id, std::string_view key);
  // `key` changed: returns the clients that read it (in no particular order) and forgets them,
  // as Redis does (a client learns of one change until it reads the key again).
  std::vector<uint64_t> take_readers(std::string_view key);
  // Every key is forgotten (FLUSHALL, FLUSHDB).
  void forget_all_keys() { readers_.clear(); }
  size_t keys() const { return readers_.size(); }
  // One of the keys remembered (which one is unspecified); the table must not be empty.
  const std::string& some_key() const { return readers_.begin()->first; }
  // The (key, client) pairs remembered (INFO's tracking_total_items).
  size_t items() const;

  // In a cluster, the readers of keys peers own hear of the keys' changes from those owners
  // (RINGKV.INVALIDATE). A peer may have lost the readers it was told of, or dropped what it was
  // to report, when a connection between the two broke (it restarted, or the network failed)
  // or health checks see it down: peer_lost() notes it.
  void peer_lost(std::string_view address) { lost_peers_.emplace(address); }
  // The keys remembered whose owner may not tell of their next change, to invalidate now: those
  // the lost peers own, and those `ring` (the routing ring now, changed whenever `epoch` is)
  // gives another owner than the ring of the last call did (a failover, a join or a leave: the
  // new owner knows nothing of the readers). Keys `self` owns are this node's to report.
  std::vector<std::string> orphans(const hashring::HashRing& ring, uint64_t epoch,
                                   std::string_view self);

  // BCAST: client `id` listens to keys starting with `prefix` (or no longer, with `add` false).
  void set_prefix(uint64_t id, const std::string& prefix, bool add);
  bool has_prefixes() const { return !prefixes_.empty(); }
  size_t prefix_count() const { return prefixes_.size(); }
  // `key` changed, by client `by` (0 when no client of this node did): noted for every prefix
  // it starts with, broadcast at the end of the loop iteration.
  void note_broadcast(std::string_view key, uint64_t by);

  struct Broadcast {
    std::set<uint64_t> clients;
    std::map<std::string, uint64_t> keys;  // changed key → the last client that changed it
  };
  // The prefixes with changed keys; cleared by the caller after sending.
  std::map<std::string, Broadcast>& prefixes() { return prefixes_; }
  bool broadcast_pending() const { return broadcast_pending_; }
  void broadcast_done() { broadcast_pending_ = false; }

 private:
  StringMap<std::set<uint64_t>> readers_;
  std::set<std::string, std::less<>> lost_peers_;
  hashring::HashRing owners_;  // the routing ring at the last orphans(), and its epoch
  uint64_t owners_epoch_ = 0;
  bool owners_known_ = false;
  std::map<std::string, Broadcast> prefixes_;
  bool broadcast_pending_ = false;
};

}  // namespace ringkv::server
