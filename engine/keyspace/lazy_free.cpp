// Lazy freeing (lazy_free.h).
#include "engine/keyspace/lazy_free.h"

#include "engine/keyspace/entry.h"
#include "engine/keyspace/slot_arrays.h"
#include "engine/types/object.h"

namespace ringkv::engine {
namespace {

// Redis's LAZYFREE_THRESHOLD.
constexpr size_t kLazyFreeThreshold = 64;

}  // namespace

LazyFreeSettings& lazy_free_settings() {
  static LazyFreeSettings settings;
  return settings;
}

LazyFreeStats& lazy_free_stats() {
  static LazyFreeStats stats;
  return stats;
}

void objects_pending(uint64_t count) { lazy_free_stats().pending += count; }

void objects_freed(uint64_t count) {
  lazy_free_stats().pending -= count;
  lazy_free_stats().freed += count;
}

void free_entry(Entry* e, bool lazy) {
  // A value kept by the caller (detached, as a TTL change does) is not freed here at all.
  const Object* value = e->type() == ValueType::kString ? nullptr : e->object();
  if (!lazy || value == nullptr || value->free_effort() <= kLazyFreeThreshold) {
    Entry::destroy(e);
    return;
  }
  objects_pending(1);
  reclaimer().submit([e] {
    Entry::destroy(e);
    objects_freed(1);
  });
}

}  // namespace ringkv::engine
