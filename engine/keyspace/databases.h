// Databases: the numbered keyspaces of one node (Redis's `databases`, 16 by default), one Store
// each. Clients SELECT one; SWAPDB exchanges two stores' contents, so a Store& to a number (and
// the listeners set on it) stays that number's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/keyspace/store.h"

namespace ringkv::engine {

class Databases {
 public:
  explicit Databases(int count) {
    stores_.reserve(static_cast<size_t>(count < 1 ? 1 : count));
    for (int i = 0; i < (count < 1 ? 1 : count); ++i) {
      stores_.push_back(std::make_unique<Store>());
      all_.push_back(stores_.back().get());
    }
  }

  int count() const { return static_cast<int>(stores_.size()); }
  Store& operator[](int index) { return *stores_[static_cast<size_t>(index)]; }
  const Store& operator[](int index) const { return *stores_[static_cast<size_t>(index)]; }
  bool valid(int64_t index) const { return index >= 0 && index < count(); }
  // Every database, by number.
  std::span<Store* const> all() const { return all_; }

  // The clock of every database (a command may touch two: MOVE, COPY ... DB, SWAPDB). Set for
  // every command, so the stores are visited only when the millisecond changed.
  void set_now(int64_t now_ms) {
    if (now_ms == now_ms_) return;
    now_ms_ = now_ms;
    for (auto& s : stores_) s->set_now(now_ms);
  }
  void set_loading(bool loading) {
    for (auto& s : stores_) s->set_loading(loading);
  }
  // Keys, bytes and counters of all databases together (INFO, maxmemory, DBSIZE of the node).
  size_t size() const {
    size_t n = 0;
    for (const auto& s : stores_) n += s->size();
    return n;
  }
  size_t used_memory() const {
    size_t n = 0;
    for (const auto& s : stores_) n += s->used_memory();
    return n;
  }
  StoreStats stats() const {
    StoreStats total;
    for (const auto& s : stores_) {
      const StoreStats& x = s->stats();
      total.expired_keys += x.expired_keys;
      total.keyspace_hits += x.keyspace_hits;
      total.keyspace_misses += x.keyspace_misses;
      total.expire_cycle_cpu_us += x.expire_cycle_cpu_us;
      total.evicted_keys += x.evicted_keys;
    }
    return total;
  }
  void reset_stats() {
    for (auto& s : stores_) s->reset_stats();
  }
  void set_access_policy(const AccessPolicy& policy) {
    for (auto& s : stores_) s->set_access_policy(policy);
  }

 private:
  std::vector<std::unique_ptr<Store>> stores_;
  int64_t now_ms_ = -1;  // what set_now gave the stores last
  std::vector<Store*> all_;
};

}  // namespace ringkv::engine
