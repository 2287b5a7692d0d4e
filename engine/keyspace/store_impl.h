// The Store's table (Store::Impl) and its helpers: open addressing over tagged slots, incremental
// resizing, probing and the SCAN order (see store.cpp's header for the slot format). Included by
// store.cpp only.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <random>
#include <vector>

#include "common/random.h"
#include "engine/keyspace/access.h"
#include "engine/keyspace/lazy_free.h"
#include "engine/keyspace/slot_arrays.h"
#include "engine/keyspace/store.h"
#include "engine/keyspace/wyhash.h"
#include "engine/types/heap.h"
#include "engine/types/object.h"

namespace ringkv::engine {

namespace {

constexpr size_t kMinCapacity = 16;
constexpr uint64_t kTagMask = 0xFFFF000000000000ull;
constexpr uint64_t kPtrMask = 0x0000FFFFFFFFFFF0ull;
constexpr uint64_t kVolatileBit = 1;
constexpr int kHashBits = 64;
constexpr uint64_t kCursorEnd = uint64_t{1} << Store::kScanCursorBits;
// Grow above 85% load; shrink below 1/8 to a table at most half full.
constexpr size_t kMaxLoadNum = 17;
constexpr size_t kMaxLoadDen = 20;
constexpr size_t kShrinkRatio = 8;
// Old-table slots each operation drains during a resize (scaled up when shrinking, so the small
// new table cannot fill up before the old one is empty).
constexpr size_t kStepSlots = 16;
// Slots a rehash_step / expiry iteration handles between clock reads.
constexpr size_t kTimedStepSlots = 1024;
// Active expiry, as Redis's ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP and acceptable stale percentage.
constexpr size_t kExpireKeysPerLoop = 20;
constexpr size_t kExpireSlotsPerLoop = 400;
constexpr uint64_t kExpireAcceptableStalePct = 10;
// random_entry: tries before giving up, and how many expired keys it may delete meanwhile.
constexpr int kRandomAttempts = 1000;
constexpr int kRandomProbes = 64;
constexpr int kRandomMaxExpiredDeletes = 100;

// One random seed per process, so hash flooding cannot be precomputed.
uint64_t process_seed() {
  static const uint64_t seed = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

inline Entry* slot_entry(uint64_t slot) { return reinterpret_cast<Entry*>(slot & kPtrMask); }
inline bool slot_volatile(uint64_t slot) { return (slot & kVolatileBit) != 0; }
inline uint64_t make_slot(Entry* e, uint64_t hash, bool is_volatile) {
  const auto p = reinterpret_cast<uintptr_t>(e);
  assert((p & ~kPtrMask) == 0);
  return (hash & kTagMask) | p | (is_volatile ? kVolatileBit : 0);
}

int64_t elapsed_us(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

}  // namespace

struct Store::Impl {
  // One open-addressing table; cap is a power of two, home bucket = hash >> (64 - bits).
  struct Table {
    uint64_t* slots = nullptr;
    size_t cap = 0;
    int bits = 0;
    size_t count = 0;

    size_t home(uint64_t hash) const { return static_cast<size_t>(hash >> (kHashBits - bits)); }
    size_t next(size_t i) const { return (i + 1) & (cap - 1); }
    // Probe distance from bucket a forward to bucket b.
    size_t distance(size_t a, size_t b) const { return (b - a) & (cap - 1); }
  };

  struct Found {
    Table* table = nullptr;
    size_t pos = 0;
    Entry* entry = nullptr;
  };

  Store* owner;  // re-pointed when two stores swap their contents (SWAPDB)
  Table main;    // new keys go here
  Table old;     // draining while a resize is in progress (slots == nullptr otherwise)
  size_t migrate_pos = 0;
  size_t migrate_left = 0;  // old-table slots still to visit
  size_t volatile_count = 0;
  size_t used = 0;
  size_t expire_cursor = 0;
  uint64_t seed = process_seed();
  uint64_t rng_state = process_seed() ^ 0x9e3779b97f4a7c15ull;

  explicit Impl(Store& s) : owner(&s) { main = make_table(kMinCapacity); }

  ~Impl() {
    free_all(main);
    free_all(old);
  }

  uint64_t hash(std::string_view key) const { return wyhash(key, seed); }

  // Bytes a key holds: its block plus, for a collection, its object.
  static size_t footprint(const Entry* e) {
    size_t bytes = e->allocated_size() + kMallocChunkOverhead;
    if (e->type() != ValueType::kString && e->object() != nullptr) bytes += e->object()->memory();
    return bytes;
  }

  uint64_t next_random() { return common::splitmix64(rng_state); }

  Table make_table(size_t cap) {
    Table t;
    t.cap = cap;
    t.bits = std::countr_zero(cap);
    t.slots = allocate_slots(cap);
    used += slots_footprint(t.slots, cap);
    return t;
  }

  void release_table(Table& t) {
    if (t.slots != nullptr) used -= slots_footprint(t.slots, t.cap);
    release_slots(t.slots, t.cap);
    t = Table{};
  }

  static void free_entries(uint64_t* slots, size_t cap) {
    for (size_t i = 0; i < cap; ++i) {
      if (slots[i] != 0) Entry::destroy(slot_entry(slots[i]));
    }
  }

  void free_all(Table& t) {
    if (t.slots == nullptr) return;
    free_entries(t.slots, t.cap);
    deallocate_slots(t.slots, t.cap);
    t = Table{};
  }

  bool expired(uint64_t slot) const {
    return !owner->loading_ && slot_volatile(slot) &&
           owner->now_ms_ > slot_entry(slot)->expire_at();
  }

  bool rehashing() const { return old.slots != nullptr; }

  static Found find_in(Table& t, std::string_view key, uint64_t h) {
    const uint64_t tag = h & kTagMask;
    for (size_t i = t.home(h);; i = t.next(i)) {
      const uint64_t s = t.slots[i];
      if (s == 0) return {};
      if ((s & kTagMask) == tag) {
        Entry* e = slot_entry(s);
        if (e->key() == key) return {&t, i, e};
      }
    }
  }

  Found find(std::string_view key, uint64_t h) {
    Found f = find_in(main, key, h);
    if (f.entry == nullptr && rehashing()) f = find_in(old, key, h);
    return f;
  }

  // Finds a key, deleting it (and counting it as expired) when its TTL has passed.
  Found find_live(std::string_view key, uint64_t h) {
    Found f = find(key, h);
    if (f.entry != nullptr && expired(f.table->slots[f.pos])) {
      owner->report_expired(f.entry->key());
      remove_at(*f.table, f.pos, lazy_free_settings().expire);
      ++owner->stats_.expired_keys;
      return {};
    }
    return f;
  }

  // Puts an entry into a table known not to hold its key; no accounting.
  static void place(Table& t, uint64_t slot, uint64_t h) {
    size_t i = t.home(h);
    while (t.slots[i] != 0) i = t.next(i);
    t.slots[i] = slot;
    ++t.count;
  }

  // Adds a new entry (its key is absent from both tables).
  void insert_new(Entry* e, uint64_t h) {
    reserve_one();
    const bool is_volatile = e->has_expire();
    place(main, make_slot(e, h, is_volatile), h);
    used += footprint(e);
    if (is_volatile) ++volatile_count;
  }

  // Replaces the entry in a slot by another block for the same key.
  void replace_at(Table& t, size_t pos, Entry* e) {
    const uint64_t s = t.slots[pos];
    Entry* prev = slot_entry(s);
    if (prev != e) {
      used -= footprint(prev);
      used += footprint(e);
      // A TTL change rebuilds the block around the same object: keep it alive.
      if (prev->type() != ValueType::kString && e->type() != ValueType::kString &&
          prev->object() == e->object()) {
        prev->detach_object();
      }
      // A value a write replaces (SET over a key, RENAME's destination...).
      free_entry(prev, lazy_free_settings().server_del);
    }
    const bool was_volatile = slot_volatile(s);
    const bool is_volatile = e->has_expire();
    volatile_count += static_cast<size_t>(is_volatile) - static_cast<size_t>(was_volatile);
    t.slots[pos] = make_slot(e, s, is_volatile);
  }

  // Deletes the entry at pos and closes the gap by shifting later run members back.
  // `lazy`: a big value may be freed in the background (lazy_free.h).
  void remove_at(Table& t, size_t pos, bool lazy = false) {
    const uint64_t s = t.slots[pos];
    Entry* e = slot_entry(s);
    if (slot_volatile(s)) --volatile_count;
    used -= footprint(e);
    free_entry(e, lazy);
    --t.count;
    size_t hole = pos;
    for (size_t i = t.next(pos);; i = t.next(i)) {
      const uint64_t moving = t.slots[i];
      if (moving == 0) break;
      const size_t home = t.home(hash(slot_entry(moving)->key()));
      if (t.distance(home, i) >= t.distance(hole, i)) {
        t.slots[hole] = moving;
        hole = i;
      }
    }
    t.slots[hole] = 0;
  }

  // Makes room for one more key in main, starting a resize when the load passes the limit.
  void reserve_one() {
    if ((main.count + 1) * kMaxLoadDen <= main.cap * kMaxLoadNum) return;
    if (rehashing()) {
      // Only reachable if inserts outran draining; rebuild once rather than overfill.
      rebuild(capacity_for(main.count + old.count + 1));
      return;
    }
    start_resize(main.cap * 2);
  }

  // Smallest table holding n keys at most half full.
  static size_t capacity_for(size_t n) { return std::max(kMinCapacity, std::bit_ceil(n * 2)); }

  void maybe_shrink() {
    if (rehashing() || main.cap <= kMinCapacity || main.count * kShrinkRatio >= main.cap) return;
    start_resize(capacity_for(main.count));
  }

  void start_resize(size_t new_cap) {
    old = main;
    main = make_table(new_cap);
    if (old.count == 0) {
      release_table(old);
      return;
    }
    // Start draining right after an empty slot so that no probe run straddles the start.
    size_t empty = 0;
    while (old.slots[empty] != 0) ++empty;
    migrate_pos = old.next(empty);
    migrate_left = old.cap;
    expire_cursor = 0;
  }

  // Moves every key of both tables into a fresh table at once.
  void rebuild(size_t new_cap) {
    Table fresh = make_table(new_cap);
    for (Table* t : {&main, &old}) {
      if (t->slots == nullptr) continue;
      for (size_t i = 0; i < t->cap; ++i) {
        const uint64_t s = t->slots[i];
        if (s != 0) place(fresh, s, hash(slot_entry(s)->key()));
      }
    }
    release_table(main);
    release_table(old);
    main = fresh;
    expire_cursor = 0;
  }

  // Drains at least `budget` old-table slots (finishing the probe run it is in). Expired keys
  // are dropped instead of moved.
  void migrate(size_t budget) {
    while (rehashing()) {
      if (migrate_left == 0 || old.count == 0) {
        assert(old.count == 0);
        release_table(old);
        // Keys deleted while draining may leave the new table sparse in turn.
        maybe_shrink();
        continue;
      }
      if (budget == 0) return;
      if (old.slots[migrate_pos] == 0) {
        migrate_pos = old.next(migrate_pos);
        --migrate_left;
        --budget;
        continue;
      }
      // A whole run moves at once, so every run left in the old table stays intact.
      for (uint64_t s; (s = old.slots[migrate_pos]) != 0; migrate_pos = old.next(migrate_pos)) {
        old.slots[migrate_pos] = 0;
        --old.count;
        --migrate_left;
        if (budget > 0) --budget;
        Entry* e = slot_entry(s);
        if (expired(s)) {
          owner->report_expired(e->key());
          --volatile_count;
          used -= footprint(e);
          free_entry(e, lazy_free_settings().expire);
          ++owner->stats_.expired_keys;
        } else {
          place(main, s, hash(e->key()));
        }
      }
    }
  }

  void step() {
    if (rehashing()) migrate(kStepSlots * std::max<size_t>(1, old.cap / main.cap));
  }

  uint32_t lru_clock() const { return lru_clock_at(owner->now_ms_); }

  // Access bits of a key created now (see access.h).
  uint32_t initial_access() const {
    return owner->access_.lfu ? lfu_initial(owner->now_ms_) : lru_clock();
  }

  // Access bits after one more access of a key whose bits were `bits`.
  uint32_t touched_access(uint32_t bits) {
    if (!owner->access_.lfu) return lru_clock();
    const double uniform = static_cast<double>(next_random() >> 11) * 0x1.0p-53;
    return lfu_touched(bits, owner->now_ms_, owner->access_, uniform);
  }

  // Takes a collection's object out of an entry about to be freed (it moved to another entry),
  // so the entry frees and accounts only its block.
  void detach(Entry* e) {
    if (e->type() == ValueType::kString) return;
    used -= e->object()->memory();
    e->detach_object();
  }

  // Copies an entry under a (possibly different) key with the given TTL and LRU. A collection's
  // object is shared, not copied: the caller detaches it from one of the two entries.
  static Entry* clone(const Entry* e, std::string_view key, int64_t expire_at, uint32_t lru) {
    const Entry::Layout l = e->layout();
    std::string_view raw(reinterpret_cast<const char*>(e->bytes()) + l.value_offset, l.value_size);
    Entry* copy = Entry::create(e->type(), e->encoding(), lru, key, raw, expire_at);
    copy->set_unshared(e->unshared());
    return copy;
  }

  // Visits live entries whose kScanCursorBits-bit hash prefix lies in [lo, hi); returns how many.
  size_t scan_range(Table& t, uint64_t lo, uint64_t hi,
                    const std::function<void(const Entry&)>& visit) {
    const int shift = Store::kScanCursorBits - t.bits;
    const size_t first = static_cast<size_t>(lo >> shift);
    const size_t last = static_cast<size_t>((hi - 1) >> shift) + 1;
    size_t visited = 0;
    // Walk the buckets of the range, then on to the end of the run holding the last one, where
    // displaced members of the range live. i is unwrapped so a run may wrap past the end.
    for (size_t i = first, steps = 0; steps < t.cap; ++i, ++steps) {
      const uint64_t s = t.slots[i & (t.cap - 1)];
      if (s == 0) {
        if (i >= last) break;
        continue;
      }
      const Entry* e = slot_entry(s);
      const uint64_t prefix = hash(e->key()) >> (kHashBits - Store::kScanCursorBits);
      if (prefix >= lo && prefix < hi && !expired(s)) {
        visit(*e);
        ++visited;
      }
    }
    return visited;
  }

  // Visits up to `want` entries walking forward from a random slot of `t`; returns how many.
  // Neighbours in the table are neighbours in hash order, unrelated to how keys are used.
  size_t sample_from(Table& t, size_t want, bool volatile_only,
                     const std::function<void(const Entry&)>& visit) {
    if (t.count == 0) return 0;
    size_t pos = next_random() & (t.cap - 1);
    size_t got = 0;
    for (size_t steps = 0; steps < t.cap && got < want; ++steps, pos = t.next(pos)) {
      const uint64_t s = t.slots[pos];
      if (s == 0 || (volatile_only && !slot_volatile(s))) continue;
      visit(*slot_entry(s));
      ++got;
    }
    return got;
  }

  // A slot index of `t` holding an entry, probing random slots first (uniform over entries),
  // then walking forward from a random slot when the table is very sparse.
  size_t random_slot(Table& t) {
    for (int i = 0; i < kRandomProbes; ++i) {
      const size_t pos = next_random() & (t.cap - 1);
      if (t.slots[pos] != 0) return pos;
    }
    size_t pos = next_random() & (t.cap - 1);
    while (t.slots[pos] == 0) pos = t.next(pos);
    return pos;
  }
};

}  // namespace ringkv::engine
