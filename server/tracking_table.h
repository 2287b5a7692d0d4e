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
  std::map<std::string, Broadcast> prefixes_;
  bool broadcast_pending_ = false;
};

}  // namespace ringkv::server
