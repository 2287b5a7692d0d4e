// Lazy freeing, as Redis's lazyfree: a deleted value whose freeing takes more than 64
// allocations (Object::free_effort) is freed on the reclaimer thread when the deletion may be
// lazy — UNLINK, FLUSHALL/FLUSHDB ASYNC, and the deletions the lazyfree-lazy-* settings name —
// so the event loop never stalls on it. INFO counts what waits and what was freed so.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ringkv::engine {

class Entry;

// Which deletions may free in the background (Redis's lazyfree-lazy-* settings; one set per
// process, as Redis's).
struct LazyFreeSettings {
  bool user_del = false;    // DEL as UNLINK
  bool user_flush = false;  // FLUSHALL / FLUSHDB without SYNC or ASYNC as ASYNC
  bool server_del = false;  // values a write replaces or deletes (SET over a key, RENAME...)
  bool expire = false;      // keys whose TTL passed
  bool eviction = false;    // keys maxmemory evicts
};
LazyFreeSettings& lazy_free_settings();

// INFO's lazyfree_pending_objects and lazyfreed_objects.
struct LazyFreeStats {
  std::atomic<uint64_t> pending{0};
  std::atomic<uint64_t> freed{0};
};
LazyFreeStats& lazy_free_stats();

// Frees the entry (its key and value), on the reclaimer thread when `lazy` and its value's free
// effort passes 64, else now.
void free_entry(Entry* e, bool lazy);
// `count` keys handed to the reclaimer thread in one job (FLUSHALL ASYNC): pending until
// objects_freed(count) is called from that job.
void objects_pending(uint64_t count);
void objects_freed(uint64_t count);

}  // namespace ringkv::engine
