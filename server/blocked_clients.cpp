// BlockedClients: registry of clients waiting in blocking commands.
#include "server/blocked_clients.h"

#include <algorithm>

namespace ringkv::server {

void BlockedClients::add(uint64_t id, Waiter waiter) {
  remove(id);
  const auto db = static_cast<size_t>(waiter.db);
  if (db >= by_key_.size()) by_key_.resize(db + 1);
  for (const std::string& key : waiter.keys) {
    auto& queue = by_key_[db][key];
    // A key named twice (BLPOP k k 0) queues the client once.
    if (std::find(queue.begin(), queue.end(), id) == queue.end()) queue.push_back(id);
  }
  if (waiter.deadline_ms != 0) deadlines_.emplace(waiter.deadline_ms, id);
  waiters_.emplace(id, std::move(waiter));
}

void BlockedClients::remove(uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  KeyQueues& keys = by_key_[static_cast<size_t>(it->second.db)];
  for (const std::string& key : it->second.keys) {
    auto q = keys.find(key);
    if (q == keys.end()) continue;
    std::erase(q->second, id);
    if (q->second.empty()) keys.erase(q);
  }
  if (it->second.deadline_ms != 0) deadlines_.erase({it->second.deadline_ms, id});
  waiters_.erase(it);
}

const BlockedClients::Waiter* BlockedClients::find(uint64_t id) const {
  auto it = waiters_.find(id);
  return it == waiters_.end() ? nullptr : &it->second;
}

std::vector<uint64_t> BlockedClients::waiters(int db, std::string_view key) const {
  const KeyQueues* keys = keys_of(db);
  if (keys == nullptr) return {};
  auto it = keys->find(key);
  if (it == keys->end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::vector<uint64_t> BlockedClients::expired(uint64_t now_ms) const {
  std::vector<uint64_t> out;
  for (const auto& [deadline, id] : deadlines_) {
    if (deadline > now_ms) break;
    out.push_back(id);
  }
  return out;
}

uint64_t BlockedClients::next_deadline() const {
  return deadlines_.empty() ? 0 : deadlines_.begin()->first;
}

}  // namespace ringkv::server
