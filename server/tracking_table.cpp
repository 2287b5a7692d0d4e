// TrackingTable: the keys tracking clients read and the BCAST prefixes they listen to.
#include "server/tracking_table.h"

namespace ringkv::server {

void TrackingTable::remember(uint64_t id, std::string_view key) {
  auto it = readers_.find(key);
  if (it == readers_.end()) it = readers_.emplace(std::string(key), std::set<uint64_t>{}).first;
  it->second.insert(id);
}

std::vector<uint64_t> TrackingTable::take_readers(std::string_view key) {
  auto it = readers_.find(key);
  if (it == readers_.end()) return {};
  std::vector<uint64_t> ids(it->second.begin(), it->second.end());
  readers_.erase(it);
  return ids;
}

std::vector<std::string> TrackingTable::orphans(const hashring::HashRing& ring, uint64_t epoch,
                                                std::string_view self) {
  const bool moved = owners_known_ && epoch != owners_epoch_;
  std::vector<std::string> keys;
  if (moved || !lost_peers_.empty()) {
    for (const auto& [key, ids] : readers_) {
      const std::string_view owner = ring.owner_of(key);
      if (moved && owners_.owner_of(key) != owner) {
        keys.push_back(key);
      } else if (owner != self && lost_peers_.contains(owner)) {
        keys.push_back(key);
      }
    }
  }
  lost_peers_.clear();
  if (!owners_known_ || epoch != owners_epoch_) {
    owners_ = ring;
    owners_epoch_ = epoch;
    owners_known_ = true;
  }
  return keys;
}

size_t TrackingTable::items() const {
  size_t n = 0;
  for (const auto& [key, ids] : readers_) n += ids.size();
  return n;
}

void TrackingTable::set_prefix(uint64_t id, const std::string& prefix, bool add) {
  if (add) {
    prefixes_[prefix].clients.insert(id);
    return;
  }
  auto it = prefixes_.find(prefix);
  if (it == prefixes_.end()) return;
  it->second.clients.erase(id);
  if (it->second.clients.empty()) prefixes_.erase(it);
}

void TrackingTable::note_broadcast(std::string_view key, uint64_t by) {
  for (auto& [prefix, broadcast] : prefixes_) {
    if (!key.starts_with(prefix)) continue;
    broadcast.keys[std::string(key)] = by;
    broadcast_pending_ = true;
  }
}

}  // namespace ringkv::server
