// KeyLocks: all-or-nothing locking of a transaction part's keys.
#include "server/key_locks.h"

namespace ringkv::server {

KeyLocks::Owner KeyLocks::holder(std::string_view key) const {
  auto it = locks_.find(key);
  return it == locks_.end() ? kNone : it->second;
}

bool KeyLocks::blocked(Owner owner, std::span<const std::string_view> keys) const {
  if (locks_.empty()) return false;
  for (std::string_view key : keys) {
    const Owner h = holder(key);
    if (h != kNone && h != owner) return true;
  }
  return false;
}

bool KeyLocks::try_lock(Owner owner, std::span<const std::string> keys) {
  for (const std::string& key : keys) {
    const Owner h = holder(key);
    if (h != kNone && h != owner) return false;
  }
  std::vector<std::string>& mine = held_[owner];
  for (const std::string& key : keys) {
    auto [it, added] = locks_.emplace(key, owner);
    if (added) mine.push_back(key);
  }
  if (mine.empty()) held_.erase(owner);
  return true;
}

bool KeyLocks::release(Owner owner) {
  auto it = held_.find(owner);
  if (it == held_.end()) return false;
  for (const std::string& key : it->second) locks_.erase(key);
  held_.erase(it);
  return true;
}

}  // namespace ringkv::server
