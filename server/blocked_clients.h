// BlockedClients: the clients waiting in a blocking command (BLPOP, BZPOPMIN, ...): for each key
// of each database, who waits on it in the order they blocked, and when each one's timeout ends.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/string_map.h"

namespace ringkv::server {

class BlockedClients {
 public:
  struct Waiter {
    std::vector<std::string> argv;  // the command, run again when one of its keys is ready
    std::vector<std::string> keys;
    uint64_t deadline_ms;  // loop time; 0 = never
    bool resp3 = false;    // the reply's protocol (a relayed RESP3 request on a peer link)
    // Served or not, this waiter says nothing about the next one (BlockRequest::independent).
    bool independent = false;
    int db = 0;  // the database of `keys` (the client's SELECTed one)
  };

  // Registers client `id`, waiting on `keys` until `deadline_ms` (0 = forever).
  void add(uint64_t id, Waiter waiter);
  // Forgets client `id` (served, timed out or disconnected). No-op if it is not waiting.
  void remove(uint64_t id);
  const Waiter* find(uint64_t id) const;

  bool waited_on(int db, std::string_view key) const {
    const auto* keys = keys_of(db);
    return keys != nullptr && keys->find(key) != keys->end();
  }
  // Every key of database `db` some client waits on (in no particular order).
  std::vector<std::string> waited_keys(int db) const {
    std::vector<std::string> out;
    if (const auto* keys = keys_of(db)) {
      out.reserve(keys->size());
      for (const auto& [key, queue] : *keys) out.push_back(key);
    }
    return out;
  }
  // The clients waiting on `key` of database `db`, first blocked first.
  std::vector<uint64_t> waiters(int db, std::string_view key) const;
  // The clients whose deadline is at or before `now_ms`, earliest first.
  std::vector<uint64_t> expired(uint64_t now_ms) const;
  // The earliest deadline, or 0 when no waiter has one.
  uint64_t next_deadline() const;
  size_t size() const { return waiters_.size(); }
  // Every waiting client's id.
  std::vector<uint64_t> ids() const {
    std::vector<uint64_t> out;
    for (const auto& [id, w] : waiters_) out.push_back(id);
    return out;
  }

 private:
  using KeyQueues = StringMap<std::deque<uint64_t>>;
  const KeyQueues* keys_of(int db) const {
    return static_cast<size_t>(db) < by_key_.size() ? &by_key_[static_cast<size_t>(db)] : nullptr;
  }

  std::unordered_map<uint64_t, Waiter> waiters_;
  std::vector<KeyQueues> by_key_;                      // by database number, grown as clients block
  std::set<std::pair<uint64_t, uint64_t>> deadlines_;  // (deadline, id)
};

}  // namespace ringkv::server
