// Store: the in-memory keyspace of one node (one logical database).
//
// Memory layout: an open-addressing table of tagged pointers (8 bytes a slot); each key is one
// heap block holding a small header, the optional absolute expiry, the key bytes and, for strings,
// the value bytes (see entry.h); a collection's block holds a pointer to its Object (object.h),
// which the store owns and counts in used_memory. The table grows and shrinks incrementally: while
// a resize is in progress both tables are live and every operation (plus a timer step) migrates a
// few slots, so no single operation pays for rehashing millions of keys.
//
// Expiry is lazy (an expired key is deleted the moment it is looked up) plus an active cycle that
// walks the table and deletes expired keys within a time budget. The store never reads the clock:
// the caller sets `now` (milliseconds since the epoch) before each command.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/keyspace/access.h"
#include "engine/keyspace/entry.h"

namespace ringkv::engine {

// What happens to a key's TTL when its value is replaced.
struct Expiry {
  enum Kind : uint8_t { kNone, kKeep, kAt } kind = kNone;
  int64_t at_ms = 0;  // absolute unix time in ms, for kAt
  static Expiry none() { return {kNone, 0}; }
  static Expiry keep() { return {kKeep, 0}; }
  static Expiry at(int64_t ms) { return {kAt, ms}; }
};

struct StoreStats {
  uint64_t expired_keys = 0;  // deleted because their TTL passed (lazy or active)
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t expire_cycle_cpu_us = 0;  // time spent in active expiry
  uint64_t evicted_keys = 0;         // deleted to stay under maxmemory
};

class Store {
 public:
  Store();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Exchanges the keys (and their tables) with `other` (SWAPDB); each store keeps its clock,
  // counters, listeners and access policy, which belong to its database number.
  void swap_contents(Store& other);

  // The time (unix ms) that expiry decisions use until the next call.
  void set_now(int64_t now_ms) { now_ms_ = now_ms; }
  int64_t now() const { return now_ms_; }

  // While loading an append-only file nothing expires, as in Redis: a TTL that passed while the
  // server was down still holds for the commands that follow it in the file (an APPEND after a
  // SET ... PXAT must extend that key, not create a new one), and the key expires once loading
  // ends.
  void set_loading(bool loading) { loading_ = loading; }
  bool loading() const { return loading_; }
  // Whether a TTL ending at `at_ms` deletes the key at once (EXPIRE and friends with a time that
  // has passed): it is in the past and the store is not loading.
  bool already_expired(int64_t at_ms) const { return !loading_ && at_ms <= now_ms_; }

  // Looks a key up for a command: deletes it if expired, updates its access time and the
  // hit/miss counters. nullptr when absent.
  // Entry pointers returned by the store stay valid until that key is written, renamed, deleted
  // or expired, or the store is cleared; resizes never move entries.
  const Entry* lookup(std::string_view key);
  // Like lookup but leaves the access time alone (EXISTS, TYPE, TTL, OBJECT count hits and
  // misses without making a key look recently used). Without `notify_miss` a miss is counted but
  // reports no keymiss event (Redis's LOOKUP_NONOTIFY, as OBJECT looks keys up).
  const Entry* lookup_notouch(std::string_view key, bool notify_miss = true);
  // Like lookup but leaves access time and hit/miss counters alone (writes' existence checks).
  // Still deletes an expired key.
  const Entry* peek(std::string_view key);
  bool contains(std::string_view key) { return peek(key) != nullptr; }
  // A pipelined request seen before it runs: its first key and the arguments after it (up to
  // three, which covers the member of ZADD and GEOADD; empty where it has fewer), which a set,
  // hash or sorted set key looks up as members or fields.
  struct Lookahead {
    std::string_view key;
    std::array<std::string_view, 3> members;
  };
  // Starts loading the memory the lookups of `requests` read first (each key's home slot, the
  // entry it points to, then in a set, hash or sorted set the members' buckets and their first
  // nodes), so that a batch of requests waits for memory once rather than once per lookup.
  // Changes nothing; keys absent, or in a table being resized away, are simply not helped.
  void prefetch(std::span<const Lookahead> requests) const;

  // Inserts or replaces `key` with a string value; `encoding` is what OBJECT ENCODING reports
  // (see classify_string). Returns the stored entry.
  const Entry* set_string(std::string_view key, std::string_view value, Expiry expiry,
                          StringEncoding encoding);
  // Same, choosing the encoding as Redis does for a value that arrives from a client.
  const Entry* set_string(std::string_view key, std::string_view value, Expiry expiry) {
    return set_string(key, value, expiry, classify_string(value));
  }

  // Appends `suffix` to an existing string key (APPEND), keeping its TTL; the encoding becomes
  // "raw". The block grows with slack like Redis's sds, so repeated appends stay linear.
  // nullptr when the key is absent; the caller checks the type and the size limit first.
  const Entry* append_string(std::string_view key, std::string_view suffix);

  // Adds a collection key that does not exist yet (peek returned nullptr), taking ownership of
  // `object`. Commands use write_object (object.h), which calls this. Returns the entry.
  const Entry* add_object(std::string_view key, std::unique_ptr<Object> object);
  // Stores a collection at `key`, replacing any value and dropping its TTL (Redis's setKey: the
  // STORE variants). Only a key that did not exist is reported new.
  const Entry* put_object(std::string_view key, std::unique_ptr<Object> object);
  // Accounts a change of an object's memory() during a write (called by ObjectWrite).
  void object_resized(size_t before, size_t after);

  // Removes a key. Returns true if it existed (and was not expired). `lazy`: a big value is
  // freed in the background (UNLINK; lazy_free.h).
  bool erase(std::string_view key, bool lazy = false);

  // Sets an absolute expiry on an existing key (a time in the past deletes it, as Redis does
  // for EXPIRE with a past time). Returns false when the key does not exist.
  bool set_expire(std::string_view key, int64_t at_ms);
  // Removes a key's TTL. Returns true when it had one.
  bool persist(std::string_view key);

  // Moves `from` to `to`, replacing `to`, keeping the value and TTL (a collection's object moves
  // with it). false if `from` is absent.
  bool rename(std::string_view from, std::string_view to);
  // Copies `from` to `to` (value and TTL; a collection is deep-copied). false if `from` is absent.
  // Replaces `to` only when `replace`; returns false if `to` exists and !replace.
  bool copy(std::string_view from, std::string_view to, bool replace);

  // COPY ... DB: copies `from` here to `to` in `dst` (another database; this one: as copy).
  bool copy_to(Store& dst, std::string_view from, std::string_view to, bool replace);
  // MOVE: moves `key` with its value, TTL and access bits to `dst`. false when it is absent here
  // or exists there (nothing moves).
  bool move_to(Store& dst, std::string_view key);

  size_t size() const;           // keys, including expired ones not yet collected
  size_t volatile_size() const;  // keys with a TTL

  // SCAN: visits the entries of the buckets at `cursor` and returns the next cursor (0 = done).
  // Guarantees as Redis: every key present for the whole scan is returned at least once, across
  // resizes. Visits roughly `count` keys. Expired keys are skipped, not reported.
  // A cursor is a position in hash order below 2^kScanCursorBits, so a router may keep a node
  // index in the bits above; a larger cursor ends the scan (returns 0, visits nothing).
  // `visit` must not modify the store.
  uint64_t scan(uint64_t cursor, size_t count, const std::function<void(const Entry&)>& visit);
  static constexpr int kScanCursorBits = 40;
  // Visits every live key (KEYS). `visit` must not modify the store.
  void for_each(const std::function<void(const Entry&)>& visit);
  // A random live key, or nullptr when empty.
  const Entry* random_entry();

  // Drops every key (FLUSHALL/FLUSHDB). With `async`, memory is released on another thread.
  void clear(bool async);

  // Active expiry: deletes expired keys, sampling like Redis, until `budget_us` of CPU is used or
  // few expired keys remain. Called from a timer.
  struct ExpireCycle {
    size_t expired = 0;     // keys deleted
    size_t sampled = 0;     // keys with a TTL looked at (the deleted ones among them)
    bool time_cap = false;  // stopped because the budget ran out
  };
  ExpireCycle active_expire_cycle(int64_t budget_us);
  // Advances an in-progress resize by roughly `budget_us` of work (timer step). true if more
  // work remains.
  bool rehash_step(int64_t budget_us);
  // True while two tables are live (a resize is in progress).
  bool rehashing() const;
  // Slots of the table new keys go to (tests, DEBUG-style introspection).
  size_t capacity() const;

  // Bytes the store holds (entries, their objects and tables), as the allocator accounts them.
  size_t used_memory() const;
  // Bytes one key holds (MEMORY USAGE): its block, its collection and its slot in the table.
  size_t key_memory(const Entry& entry) const;
  // Sum of TTLs (ms remaining) of a sample, for INFO's avg_ttl estimate.
  int64_t avg_ttl_ms() const { return avg_ttl_ms_; }

  const StoreStats& stats() const { return stats_; }
  void reset_stats() { stats_ = StoreStats{}; }

  // Called with each key the store deletes because its TTL passed (lazily or actively), just
  // before it goes: WATCH treats an expiry as a change. The listener must not look the store
  // up (the key is still there, expired: the lookup would report it again).
  void set_expiry_listener(std::function<void(std::string_view key)> listener) {
    expiry_listener_ = std::move(listener);
  }

  // Called with each key the store adds (Redis's dbAdd: a new key, RENAME's, COPY's and MOVE's
  // destination even when it replaced one), once it is in: the "new" keyspace event.
  void set_new_key_listener(std::function<void(std::string_view key)> listener) {
    new_key_listener_ = std::move(listener);
  }
  // Called with each key a read looked up and did not find (counted in keyspace_misses): the
  // "keymiss" keyspace event.
  void set_miss_listener(std::function<void(std::string_view key)> listener) {
    miss_listener_ = std::move(listener);
  }

  // Called with each key the store deletes to free memory (evict), just before it goes; as the
  // expiry listener, it must not look the store up.
  void set_eviction_listener(std::function<void(std::string_view key)> listener) {
    eviction_listener_ = std::move(listener);
  }

  // Eviction (see evict.h): visits up to `count` entries from a random place of the keyspace
  // (keys with a TTL only, with `volatile_only`), expired ones included. `visit` must not modify
  // the store.
  void sample(size_t count, bool volatile_only, const std::function<void(const Entry&)>& visit);
  // Deletes `key` to free memory, counting it in evicted_keys. With `volatile_only`, only when
  // it has a TTL. Returns whether it was deleted.
  bool evict(std::string_view key, bool volatile_only);

  // How entries' access bits are kept: LRU clock or LFU counter (see access.h).
  void set_access_policy(const AccessPolicy& policy) { access_ = policy; }
  const AccessPolicy& access_policy() const { return access_; }

  // Sets a key's 24 access bits (RESTORE's IDLETIME and FREQ); see access.h. Returns false when
  // the key does not exist.
  bool set_access_bits(std::string_view key, uint32_t bits);

  // LRU clock (seconds, 24 bits) used for OBJECT IDLETIME.
  uint32_t lru_clock() const;

 private:
  void report_expired(std::string_view key) const {
    if (expiry_listener_) expiry_listener_(key);
  }
  void report_new(std::string_view key) const {
    if (new_key_listener_) new_key_listener_(key);
  }
  void report_miss(std::string_view key) const {
    if (miss_listener_) miss_listener_(key);
  }

  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t now_ms_ = 0;
  bool loading_ = false;
  int64_t avg_ttl_ms_ = 0;
  StoreStats stats_;
  std::function<void(std::string_view)> expiry_listener_;
  std::function<void(std::string_view)> eviction_listener_;
  std::function<void(std::string_view)> new_key_listener_;
  std::function<void(std::string_view)> miss_listener_;
  AccessPolicy access_;
};

}  // namespace ringkv::engine
