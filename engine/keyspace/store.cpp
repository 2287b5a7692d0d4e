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
#include "engine/keyspace/store.h"

#include <malloc.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <random>
#include <vector>

#include "common/random.h"
#include "engine/keyspace/access.h"
#include "engine/keyspace/slot_arrays.h"
#include "engine/keyspace/store_impl.h"
#include "engine/keyspace/wyhash.h"
#include "engine/types/heap.h"
#include "engine/types/object.h"

namespace ringkv::engine {

Store::Store() : impl_(std::make_unique<Impl>(*this)) {}

Store::~Store() = default;

void Store::swap_contents(Store& other) {
  std::swap(impl_, other.impl_);
  impl_->owner = this;
  other.impl_->owner = &other;
  std::swap(avg_ttl_ms_, other.avg_ttl_ms_);
}

const Entry* Store::lookup(std::string_view key) {
  impl_->step();
  Impl::Found f = impl_->find(key, impl_->hash(key));
  if (f.entry != nullptr && impl_->expired(f.table->slots[f.pos])) {
    report_expired(f.entry->key());
    impl_->remove_at(*f.table, f.pos, lazy_free_settings().expire);
    ++stats_.expired_keys;
    impl_->maybe_shrink();
    f = {};
  }
  if (f.entry == nullptr) {
    ++stats_.keyspace_misses;
    report_miss(key);
    return nullptr;
  }
  f.entry->set_lru(impl_->touched_access(f.entry->lru()));
  ++stats_.keyspace_hits;
  return f.entry;
}

const Entry* Store::lookup_notouch(std::string_view key, bool notify_miss) {
  const Entry* e = peek(key);
  if (e == nullptr) {
    ++stats_.keyspace_misses;
    if (notify_miss) report_miss(key);
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

void Store::prefetch(std::span<const Lookahead> requests) const {
  constexpr size_t kMaxKeys = 32;
  const Impl::Table& t = impl_->main;
  uint64_t hashes[kMaxKeys];
  const size_t n = std::min(requests.size(), kMaxKeys);
  // Every home slot first, so their loads overlap; then the entries of the slots whose tag
  // matches (most of those loads have landed by then).
  for (size_t i = 0; i < n; ++i) {
    hashes[i] = impl_->hash(requests[i].key);
    __builtin_prefetch(&t.slots[t.home(hashes[i])]);
  }
  // The entry each request's home slot points to, when its tag matches.
  const Entry* entries[kMaxKeys];
  size_t collections = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t s = t.slots[t.home(hashes[i])];
    entries[i] = s != 0 && (s & kTagMask) == (hashes[i] & kTagMask) ? slot_entry(s) : nullptr;
    if (entries[i] == nullptr) continue;
    __builtin_prefetch(entries[i]);
    if (!requests[i].members[0].empty()) collections++;
  }
  if (collections == 0) return;
  // Requests with members: the entries of those (waited for now, as running them would) that
  // hold a collection, then the members' buckets in it, then the buckets' first nodes.
  const Object* objects[kMaxKeys];
  for (size_t i = 0; i < n; ++i) {
    const Entry* e = entries[i];
    objects[i] = e != nullptr && !requests[i].members[0].empty() &&
                         e->type() != ValueType::kString && e->key() == requests[i].key
                     ? e->object()
                     : nullptr;
  }
  for (const bool chain : {false, true}) {
    for (size_t i = 0; i < n; ++i) {
      if (objects[i] == nullptr) continue;
      const auto& m = requests[i].members;
      size_t given = 0;
      while (given < m.size() && !m[given].empty()) ++given;
      objects[i]->prefetch_members(std::span(m.data(), given), chain);
    }
  }
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
    e->set_unshared(!access_.shared_integers);
    impl_->insert_new(e, h);
    report_new(e->key());
    return e;
  }
  Entry* e = f.entry;
  if (e->type() != ValueType::kString || !e->rewrite(encoding, lru, value, at)) {
    e = Entry::create(ValueType::kString, encoding, lru, key, value, at);
  }
  e->set_unshared(!access_.shared_integers);
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
  report_new(e->key());
  return e;
}

const Entry* Store::put_object(std::string_view key, std::unique_ptr<Object> object) {
  const uint64_t h = impl_->hash(key);
  Impl::Found f = impl_->find_live(key, h);
  if (f.entry == nullptr) return add_object(key, std::move(object));
  Entry* e = Entry::create_object(impl_->initial_access(), key, object.release(), -1);
  impl_->replace_at(*f.table, f.pos, e);
  return e;
}

void Store::object_resized(size_t before, size_t after) { impl_->used += after - before; }

bool Store::erase(std::string_view key, bool lazy) {
  impl_->step();
  const size_t before = size();
  Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry != nullptr) impl_->remove_at(*f.table, f.pos, lazy);
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
  report_new(moved->key());
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
  e->set_unshared(true);  // COPY duplicates a string into an object of its own
  if (dst.entry != nullptr) {
    impl_->replace_at(*dst.table, dst.pos, e);
  } else {
    impl_->insert_new(e, h);
  }
  report_new(e->key());
  return true;
}

bool Store::copy_to(Store& dst, std::string_view from, std::string_view to, bool replace) {
  if (&dst == this) return copy(from, to, replace);
  impl_->step();
  dst.impl_->step();
  const Impl::Found src = impl_->find_live(from, impl_->hash(from));
  if (src.entry == nullptr) return false;
  const uint64_t h = dst.impl_->hash(to);
  const Impl::Found existing = dst.impl_->find_live(to, h);
  if (existing.entry != nullptr && !replace) return false;
  const uint32_t access = dst.impl_->initial_access();
  Entry* e = src.entry->type() == ValueType::kString
                 ? Impl::clone(src.entry, to, src.entry->expire_at(), access)
                 : Entry::create_object(access, to, src.entry->object()->clone().release(),
                                        src.entry->expire_at());
  e->set_unshared(true);  // COPY duplicates a string into an object of its own
  if (existing.entry != nullptr) {
    dst.impl_->replace_at(*existing.table, existing.pos, e);
  } else {
    dst.impl_->insert_new(e, h);
  }
  dst.report_new(e->key());
  return true;
}

bool Store::move_to(Store& dst, std::string_view key) {
  if (&dst == this) return false;
  impl_->step();
  dst.impl_->step();
  const Impl::Found f = impl_->find_live(key, impl_->hash(key));
  if (f.entry == nullptr) return false;
  const uint64_t h = dst.impl_->hash(key);
  if (dst.impl_->find_live(key, h).entry != nullptr) return false;
  // The value moves as it is (Redis moves the object): its access bits and TTL go with it.
  Entry* moved = Impl::clone(f.entry, key, f.entry->expire_at(), f.entry->lru());
  impl_->detach(f.entry);
  impl_->remove_at(*f.table, f.pos);
  dst.impl_->insert_new(moved, h);
  dst.report_new(moved->key());
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
      impl_->remove_at(*t, pos, lazy_free_settings().expire);
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
  if (async) {
    // Every key counts as freed lazily, however few (as Redis counts a database's).
    objects_pending(keys);
    reclaimer().submit([tables, keys] {
      for (const Impl::Table& t : tables) {
        if (t.slots == nullptr) continue;
        Impl::free_entries(t.slots, t.cap);
        deallocate_slots(t.slots, t.cap);
      }
      // Give the freed pages back to the system: glibc keeps them otherwise.
      malloc_trim(0);
      objects_freed(keys);
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

Store::ExpireCycle Store::active_expire_cycle(int64_t budget_us) {
  ExpireCycle cycle;
  if (loading_) return cycle;
  const auto start = std::chrono::steady_clock::now();
  Impl& im = *impl_;
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
          im.remove_at(t, im.expire_cursor, lazy_free_settings().expire);
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
    cycle.expired += expired;
    cycle.sampled += sampled;
    if (ttl_samples > 0) {
      // Redis's running estimate: 2% weight for each new sample average.
      const int64_t avg = ttl_sum / ttl_samples;
      if (avg_ttl_ms_ == 0) avg_ttl_ms_ = avg;
      avg_ttl_ms_ = (avg_ttl_ms_ / 50) * 49 + (avg / 50);
    }
    if (elapsed_us(start) >= budget_us) {
      cycle.time_cap = true;
      break;
    }
    const bool few_expired = sampled > 0 && expired * 100 <= kExpireAcceptableStalePct * sampled;
    if (few_expired || walked >= t.cap) break;
  }
  im.maybe_shrink();
  stats_.expire_cycle_cpu_us += static_cast<uint64_t>(elapsed_us(start));
  return cycle;
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

size_t Store::key_memory(const Entry& entry) const {
  return Impl::footprint(&entry) + sizeof(void*);
}

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
  impl_->remove_at(*f.table, f.pos, lazy_free_settings().eviction);
  ++stats_.evicted_keys;
  impl_->maybe_shrink();
  return true;
}

}  // namespace ringkv::engine
