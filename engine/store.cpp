// Store: open-addressing keyspace of tagged entry pointers with incremental resizing, lazy and
// active expiry and a resize-proof SCAN cursor.
//
// Slot format (8 bytes): bits 63-48 hold the low 16 bits of the key's hash (a tag that rejects
// most mismatches without touching the entry), bits 47-4 the entry pointer (malloc returns
// 16-byte aligned blocks below 2^48 on x86-64), bit 0 says the key has a TTL (so the expiry walk
// skips persistent keys without a cache miss). 0 is an empty slot.
//
// A key's home bucket is the TOP bits of its hash, so bucket order is hash order at every table
// size: SCAN's cursor is simply a hash prefix, and a resize between two SCAN calls cannot make it
// skip anything. Collisions use linear probing with backward-shift deletion (no tombstones).
//
// Resizing keeps the old table live and drains it whole probe runs at a time, starting just
// after an empty slot: every run still in the old table is intact, so lookups and backward-shift
// deletions there stay correct while it drains, and nothing is ever inserted into it.
#include "engine/store.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <utility>
#include <vector>

#include "engine/access.h"
#include "engine/background_jobs.h"
#include "engine/heap.h"
#include "engine/object.h"
#include "engine/random.h"

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
// FLUSHALL ASYNC frees small keyspaces at once, as Redis's lazyfree effort threshold does.
constexpr size_t kAsyncClearMinKeys = 64;
constexpr size_t kMmapBytes = size_t{1} << 18;
// Tables at least this big are freed in the background (unmapping them takes milliseconds).
constexpr size_t kAsyncFreeBytes = size_t{1} << 22;

// wyhash (final version): fast on short keys and passes SMHasher; seeded per process.
constexpr uint64_t kWyp0 = 0x2d358dccaa6c78a5ull;
constexpr uint64_t kWyp1 = 0x8bb84b93962eacc9ull;
constexpr uint64_t kWyp2 = 0x4b33a62ed433d4a3ull;
constexpr uint64_t kWyp3 = 0x4d5a2da51de1aa47ull;

inline void wymum(uint64_t* a, uint64_t* b) {
  __uint128_t r = static_cast<__uint128_t>(*a) * *b;
  *a = static_cast<uint64_t>(r);
  *b = static_cast<uint64_t>(r >> 64);
}
inline uint64_t wymix(uint64_t a, uint64_t b) {
  wymum(&a, &b);
  return a ^ b;
}
inline uint64_t wyr8(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t wyr4(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t wyr3(const uint8_t* p, size_t k) {
  return static_cast<uint64_t>(p[0]) << 16 | static_cast<uint64_t>(p[k >> 1]) << 8 | p[k - 1];
}

uint64_t wyhash(std::string_view key, uint64_t seed) {
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  const size_t len = key.size();
  seed ^= wymix(seed ^ kWyp0, kWyp1);
  uint64_t a;
  uint64_t b;
  if (len <= 16) {
    if (len >= 4) {
      a = wyr4(p) << 32 | wyr4(p + ((len >> 3) << 2));
      b = wyr4(p + len - 4) << 32 | wyr4(p + len - 4 - ((len >> 3) << 2));
    } else if (len > 0) {
      a = wyr3(p, len);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    size_t i = len;
    if (i > 48) {
      uint64_t see1 = seed;
      uint64_t see2 = seed;
      do {
        seed = wymix(wyr8(p) ^ kWyp1, wyr8(p + 8) ^ seed);
        see1 = wymix(wyr8(p + 16) ^ kWyp2, wyr8(p + 24) ^ see1);
        see2 = wymix(wyr8(p + 32) ^ kWyp3, wyr8(p + 40) ^ see2);
        p += 48;
        i -= 48;
      } while (i > 48);
      seed ^= see1 ^ see2;
    }
    while (i > 16) {
      seed = wymix(wyr8(p) ^ kWyp1, wyr8(p + 8) ^ seed);
      i -= 16;
      p += 16;
    }
    a = wyr8(p + i - 16);
    b = wyr8(p + i - 8);
  }
  a ^= kWyp1;
  b ^= seed;
  wymum(&a, &b);
  return wymix(a ^ kWyp0 ^ len, b ^ kWyp1);
}

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

// One background thread frees memory handed over by stores (FLUSHALL ASYNC, big tables left by
// a resize), so the event loop never stalls on millions of free() calls. It drains its queue
// before the process exits.
BackgroundJobs& reclaimer() {
  static BackgroundJobs jobs;
  return jobs;
}

// Slot arrays this big are mapped directly: fresh pages come zeroed on first touch, where a
// calloc served from the heap would memset megabytes inside one operation.
bool slots_mapped(size_t cap) { return cap * sizeof(uint64_t) >= kMmapBytes; }

// A zeroed slot array.
uint64_t* allocate_slots(size_t cap) {
  void* p;
  if (slots_mapped(cap)) {
    p = mmap(nullptr, cap * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED) p = nullptr;
  } else {
    p = std::calloc(cap, sizeof(uint64_t));
  }
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint64_t*>(p);
}

// Bytes a slot array holds, as used_memory counts them.
size_t slots_footprint(const uint64_t* slots, size_t cap) {
  return slots_mapped(cap) ? cap * sizeof(uint64_t) : heap_footprint(slots);
}

void deallocate_slots(uint64_t* slots, size_t cap) {
  if (slots_mapped(cap)) {
    munmap(slots, cap * sizeof(uint64_t));
  } else {
    std::free(slots);
  }
}

// Releases a slot array, in the background when unmapping it could stall the caller.
void release_slots(uint64_t* slots, size_t cap) {
  if (slots == nullptr) return;
  if (cap * sizeof(uint64_t) >= kAsyncFreeBytes) {
    reclaimer().submit([slots, cap] { deallocate_slots(slots, cap); });
  } else {
    deallocate_slots(slots, cap);
  }
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

  Store& store;
  Table main;  // new keys go here
  Table old;   // draining while a resize is in progress (slots == nullptr otherwise)
  size_t migrate_pos = 0;
  size_t migrate_left = 0;  // old-table slots still to visit
  size_t volatile_count = 0;
  size_t used = 0;
  size_t expire_cursor = 0;
  uint64_t seed = process_seed();
  uint64_t rng_state = process_seed() ^ 0x9e3779b97f4a7c15ull;

  explicit Impl(Store& s) : store(s) { main = make_table(kMinCapacity); }

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

  uint64_t next_random() { return splitmix64(rng_state); }

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
    return !store.loading_ && slot_volatile(slot) && store.now_ms_ > slot_entry(slot)->expire_at();
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
      store.report_expired(f.entry->key());
      remove_at(*f.table, f.pos);
      ++store.stats_.expired_keys;
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
      Entry::destroy(prev);
    }
    const bool was_volatile = slot_volatile(s);
    const bool is_volatile = e->has_expire();
    volatile_count += static_cast<size_t>(is_volatile) - static_cast<size_t>(was_volatile);
    t.slots[pos] = make_slot(e, s, is_volatile);
  }

  // Deletes the entry at pos and closes the gap by shifting later run members back.
  void remove_at(Table& t, size_t pos) {
    const uint64_t s = t.slots[pos];
    Entry* e = slot_entry(s);
    if (slot_volatile(s)) --volatile_count;
    used -= footprint(e);
    Entry::destroy(e);
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
          store.report_expired(e->key());
          --volatile_count;
          used -= footprint(e);
          Entry::destroy(e);
          ++store.stats_.expired_keys;
        } else {
          place(main, s, hash(e->key()));
        }
      }
    }
  }

  void step() {
    if (rehashing()) migrate(kStepSlots * std::max<size_t>(1, old.cap / main.cap));
  }

  uint32_t lru_clock() const { return lru_clock_at(store.now_ms_); }

  // Access bits of a key created now (see access.h).
  uint32_t initial_access() const {
    return store.access_.lfu ? lfu_initial(store.now_ms_) : lru_clock();
  }

  // Access bits after one more access of a key whose bits were `bits`.
  uint32_t touched_access(uint32_t bits) {
    if (!store.access_.lfu) return lru_clock();
    const double uniform = static_cast<double>(next_random() >> 11) * 0x1.0p-53;
    return lfu_touched(bits, store.now_ms_, store.access_, uniform);
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
    return Entry::create(e->type(), e->encoding(), lru, key, raw, expire_at);
  }

  // Visits live entries whose 48-bit hash prefix lies in [lo, hi); returns how many.
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

Store::Store() : impl_(std::make_unique<Impl>(*this)) {}

Store::~Store() = default;

const Entry* Store::lookup(std::string_view key) {
  impl_->step();
  Impl::Found f = impl_->find(key, impl_->hash(key));
  if (f.entry != nullptr && impl_->expired(f.table->slots[f.pos])) {
    report_expired(f.entry->key());
    impl_->remove_at(*f.table, f.pos);
    ++stats_.expired_keys;
    impl_->maybe_shrink();
    f = {};
  }
  if (f.entry == nullptr) {
    ++stats_.keyspace_misses;
    return nullptr;
  }
  f.entry->set_lru(impl_->touched_access(f.entry->lru()));
  ++stats_.keyspace_hits;
  return f.entry;
}

const Entry* Store::lookup_notouch(std::string_view key) {
  const Entry* e = peek(key);
  if (e == nullptr) {
    ++stats_.keyspace_misses;
  } else {
    ++stats_.keyspace_hits;
  }
  return e;
}

const Entry* Store::peek(std::string_view key) {
  impl_->step();
  const size_t before = size();
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (size() != before) impl_->maybe_shrink();
  return f.entry;
}

const Entry* Store::set_string(std::string_view key, std::string_view value, Expiry expiry,
                               StringEncoding encoding) {
  impl_->step();
  const uint64_t h = impl_->hash(key);
  Impl::Found f = impl_->find_live(key, h);
  // An overwrite counts as an access of the key (Redis looks it up for writing first).
  const uint32_t lru =
      f.entry == nullptr ? impl_->initial_access() : impl_->touched_access(f.entry->lru());
  int64_t at = -1;
  if (expiry.kind == Expiry::kAt) {
    at = expiry.at_ms;
  } else if (expiry.kind == Expiry::kKeep && f.entry != nullptr) {
    at = f.entry->expire_at();
  }
  if (f.entry == nullptr) {
    Entry* e = Entry::create(ValueType::kString, encoding, lru, key, value, at);
    impl_->insert_new(e, h);
    return e;
  }
  Entry* e = f.entry;
  if (e->type() != ValueType::kString || !e->rewrite(encoding, lru, value, at)) {
    e = Entry::create(ValueType::kString, encoding, lru, key, value, at);
  }
  impl_->replace_at(*f.table, f.pos, e);
  return e;
}

const Entry* Store::append_string(std::string_view key, std::string_view suffix) {
  impl_->step();
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry == nullptr) {
    impl_->maybe_shrink();
    return nullptr;
  }
  assert(f.entry->type() == ValueType::kString);
  // A suffix taken from this very entry would move with the block: copy it out first.
  const auto* block = f.entry->bytes();
  std::string own;
  if (suffix.data() >= reinterpret_cast<const char*>(block) &&
      suffix.data() < reinterpret_cast<const char*>(block) + f.entry->allocated_size()) {
    own.assign(suffix);
    suffix = own;
  }
  const size_t before = f.entry->allocated_size();
  Entry* e = Entry::append(f.entry, suffix);
  impl_->used += e->allocated_size() - before;
  e->set_lru(impl_->touched_access(e->lru()));
  const uint64_t s = f.table->slots[f.pos];
  f.table->slots[f.pos] = make_slot(e, s, slot_volatile(s));
  return e;
}

const Entry* Store::add_object(std::string_view key, std::unique_ptr<Object> object) {
  impl_->step();
  const uint64_t h = impl_->hash(key);
  assert(impl_->find(key, h).entry == nullptr);
  Entry* e = Entry::create_object(impl_->initial_access(), key, object.release(), -1);
  impl_->insert_new(e, h);
  return e;
}

void Store::object_resized(size_t before, size_t after) { impl_->used += after - before; }

bool Store::erase(std::string_view key) {
  impl_->step();
  const size_t before = size();
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry != nullptr) impl_->remove_at(*f.table, f.pos);
  if (size() != before) impl_->maybe_shrink();
  return f.entry != nullptr;
}

bool Store::set_expire(std::string_view key, int64_t at_ms) {
  impl_->step();
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry == nullptr) {
    impl_->maybe_shrink();
    return false;
  }
  if (already_expired(at_ms)) {
    impl_->remove_at(*f.table, f.pos);
    impl_->maybe_shrink();
    return true;
  }
  if (f.entry->has_expire()) {
    f.entry->set_expire_at(at_ms);
  } else {
    impl_->replace_at(*f.table, f.pos, Impl::clone(f.entry, f.entry->key(), at_ms, f.entry->lru()));
  }
  return true;
}

bool Store::set_access_bits(std::string_view key, uint32_t bits) {
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry == nullptr) return false;
  f.entry->set_lru(bits & kLruClockMax);
  return true;
}

bool Store::persist(std::string_view key) {
  impl_->step();
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry == nullptr || !f.entry->has_expire()) return false;
  impl_->replace_at(*f.table, f.pos, Impl::clone(f.entry, f.entry->key(), -1, f.entry->lru()));
  return true;
}

bool Store::rename(std::string_view from, std::string_view to) {
  impl_->step();
  Impl::Found f = impl_->find_live(from, impl_->hash(from));
  if (f.entry == nullptr) return false;
  if (from == to) return true;
  // Build the moved entry first: `to` may point into an entry about to be freed.
  Entry* moved = Impl::clone(f.entry, to, f.entry->expire_at(), f.entry->lru());
  impl_->detach(f.entry);
  impl_->remove_at(*f.table, f.pos);
  const uint64_t h = impl_->hash(moved->key());
  Impl::Found dst = impl_->find(moved->key(), h);
  if (dst.entry != nullptr) {
    impl_->replace_at(*dst.table, dst.pos, moved);
  } else {
    impl_->insert_new(moved, h);
  }
  return true;
}

bool Store::copy(std::string_view from, std::string_view to, bool replace) {
  impl_->step();
  Impl::Found src = impl_->find_live(from, impl_->hash(from));
  if (src.entry == nullptr) return false;
  const uint64_t h = impl_->hash(to);
  Impl::Found dst = impl_->find_live(to, h);
  if (dst.entry != nullptr && !replace) return false;
  if (from == to) return true;
  // find_live on `to` may have shifted `from`; look it up again before copying.
  src = impl_->find(from, impl_->hash(from));
  Entry* e =
      src.entry->type() == ValueType::kString
          ? Impl::clone(src.entry, to, src.entry->expire_at(), impl_->initial_access())
          : Entry::create_object(impl_->initial_access(), to,
                                 src.entry->object()->clone().release(), src.entry->expire_at());
  if (dst.entry != nullptr) {
    impl_->replace_at(*dst.table, dst.pos, e);
  } else {
    impl_->insert_new(e, h);
  }
  return true;
}

size_t Store::size() const { return impl_->main.count + impl_->old.count; }

size_t Store::volatile_size() const { return impl_->volatile_count; }

uint64_t Store::scan(uint64_t cursor, size_t count,
                     const std::function<void(const Entry&)>& visit) {
  if (cursor >= kCursorEnd) return 0;
  impl_->step();
  Impl::Table* driver = &impl_->main;
  if (impl_->rehashing() && impl_->old.cap > driver->cap) driver = &impl_->old;
  const int shift = kScanCursorBits - driver->bits;
  const size_t want = std::max<size_t>(count, 1);
  size_t emitted = 0;
  size_t buckets = 0;
  uint64_t lo = cursor;
  while (true) {
    const uint64_t first = lo >> shift;
    const uint64_t end = std::min<uint64_t>(driver->cap, first + want);
    const uint64_t hi = end == driver->cap ? kCursorEnd : end << shift;
    emitted += impl_->scan_range(impl_->main, lo, hi, visit);
    if (impl_->rehashing()) emitted += impl_->scan_range(impl_->old, lo, hi, visit);
    buckets += end - first;
    if (hi == kCursorEnd) return 0;
    lo = hi;
    // Like Redis, give up after ten times `count` empty-ish buckets and let the client return.
    if (emitted >= want || buckets >= 10 * want) return lo;
  }
}

void Store::for_each(const std::function<void(const Entry&)>& visit) {
  for (Impl::Table* t : {&impl_->main, &impl_->old}) {
    for (size_t i = 0; i < t->cap; ++i) {
      const uint64_t s = t->slots[i];
      if (s != 0 && !impl_->expired(s)) visit(*slot_entry(s));
    }
  }
}

const Entry* Store::random_entry() {
  impl_->step();
  int deleted = 0;
  const Entry* found = nullptr;
  for (int attempt = 0; attempt < kRandomAttempts && size() > 0; ++attempt) {
    Impl::Table* t = &impl_->main;
    if (impl_->rehashing() && impl_->next_random() % size() < impl_->old.count) t = &impl_->old;
    if (t->count == 0) continue;
    const size_t pos = impl_->random_slot(*t);
    const uint64_t s = t->slots[pos];
    if (!impl_->expired(s)) {
      found = slot_entry(s);
      break;
    }
    if (deleted < kRandomMaxExpiredDeletes) {
      report_expired(slot_entry(s)->key());
      impl_->remove_at(*t, pos);
      ++stats_.expired_keys;
      ++deleted;
    }
  }
  if (deleted > 0) impl_->maybe_shrink();
  return found;
}

void Store::clear(bool async) {
  const size_t keys = size();
  Impl::Table tables[2] = {impl_->main, impl_->old};
  impl_->main = Impl::Table{};
  impl_->old = Impl::Table{};
  if (async && keys >= kAsyncClearMinKeys) {
    reclaimer().submit([tables] {
      for (const Impl::Table& t : tables) {
        if (t.slots == nullptr) continue;
        Impl::free_entries(t.slots, t.cap);
        deallocate_slots(t.slots, t.cap);
      }
      // Give the freed pages back to the system: glibc keeps them otherwise.
      malloc_trim(0);
    });
  } else {
    for (Impl::Table& t : tables) impl_->free_all(t);
  }
  impl_->used = 0;
  impl_->volatile_count = 0;
  impl_->expire_cursor = 0;
  impl_->main = impl_->make_table(kMinCapacity);
  avg_ttl_ms_ = 0;
}

size_t Store::active_expire_cycle(int64_t budget_us) {
  if (loading_) return 0;
  const auto start = std::chrono::steady_clock::now();
  Impl& im = *impl_;
  const uint64_t expired_before = stats_.expired_keys;
  size_t walked = 0;
  // Keys in a draining table are expired as they move, so draining helps here too.
  if (im.rehashing()) im.migrate(kTimedStepSlots);
  while (true) {
    if (im.volatile_count == 0) {
      avg_ttl_ms_ = 0;
      break;
    }
    Impl::Table& t = im.main;
    size_t sampled = 0;
    size_t expired = 0;
    size_t checked = 0;
    int64_t ttl_sum = 0;
    int64_t ttl_samples = 0;
    while (sampled < kExpireKeysPerLoop && checked < kExpireSlotsPerLoop) {
      if (im.expire_cursor >= t.cap) im.expire_cursor = 0;
      const uint64_t s = t.slots[im.expire_cursor];
      ++checked;
      if (s != 0 && slot_volatile(s)) {
        ++sampled;
        const int64_t at = slot_entry(s)->expire_at();
        if (now_ms_ > at) {
          // The backward shift may pull a later key into this slot: look at it again.
          report_expired(slot_entry(s)->key());
          im.remove_at(t, im.expire_cursor);
          ++expired;
          continue;
        }
        ttl_sum += at - now_ms_;
        ++ttl_samples;
      }
      ++im.expire_cursor;
    }
    walked += checked;
    stats_.expired_keys += expired;
    if (ttl_samples > 0) {
      // Redis's running estimate: 2% weight for each new sample average.
      const int64_t avg = ttl_sum / ttl_samples;
      if (avg_ttl_ms_ == 0) avg_ttl_ms_ = avg;
      avg_ttl_ms_ = (avg_ttl_ms_ / 50) * 49 + (avg / 50);
    }
    if (elapsed_us(start) >= budget_us) break;
    const bool few_expired = sampled > 0 && expired * 100 <= kExpireAcceptableStalePct * sampled;
    if (few_expired || walked >= t.cap) break;
  }
  im.maybe_shrink();
  stats_.expire_cycle_cpu_us += static_cast<uint64_t>(elapsed_us(start));
  return static_cast<size_t>(stats_.expired_keys - expired_before);
}

bool Store::rehash_step(int64_t budget_us) {
  const auto start = std::chrono::steady_clock::now();
  while (impl_->rehashing()) {
    impl_->migrate(kTimedStepSlots);
    if (elapsed_us(start) >= budget_us) break;
  }
  return impl_->rehashing();
}

bool Store::rehashing() const { return impl_->rehashing(); }

size_t Store::capacity() const { return impl_->main.cap; }

size_t Store::used_memory() const { return impl_->used; }

uint32_t Store::lru_clock() const { return impl_->lru_clock(); }

void Store::sample(size_t count, bool volatile_only,
                   const std::function<void(const Entry&)>& visit) {
  if (volatile_only && impl_->volatile_count == 0) return;
  const size_t got = impl_->sample_from(impl_->main, count, volatile_only, visit);
  if (got < count && impl_->rehashing()) {
    impl_->sample_from(impl_->old, count - got, volatile_only, visit);
  }
}

bool Store::evict(std::string_view key, bool volatile_only) {
  impl_->step();
  Impl::Found f = impl_->find(key, impl_->hash(key));
  if (f.entry == nullptr || (volatile_only && !f.entry->has_expire())) return false;
  if (eviction_listener_) eviction_listener_(f.entry->key());
  impl_->remove_at(*f.table, f.pos);
  ++stats_.evicted_keys;
  impl_->maybe_shrink();
  return true;
}

}  // namespace ringkv::engine
