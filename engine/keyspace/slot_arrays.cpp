// Allocation and release of the store's slot arrays (see slot_arrays.h).
#include "engine/keyspace/slot_arrays.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "engine/types/heap.h"

namespace ringkv::engine {

namespace {

// Slot arrays this big are mapped directly: fresh pages come zeroed on first touch, where a
// calloc served from the heap would memset megabytes inside one operation.
constexpr size_t kMmapBytes = size_t{1} << 18;
// Tables at least this big are freed in the background (unmapping them takes milliseconds).
constexpr size_t kAsyncFreeBytes = size_t{1} << 22;

bool slots_mapped(size_t cap) { return cap * sizeof(uint64_t) >= kMmapBytes; }

}  // namespace

common::BackgroundJobs& reclaimer() {
  static common::BackgroundJobs jobs;
  return jobs;
}

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

size_t slots_footprint(const uint64_t* /*slots*/, size_t cap) {
  // A heap array counts as glibc sizes the request, not by the chunk it got: calloc may hand
  // out a reused chunk a little bigger, and the empty table's size would then depend on what
  // the process allocated before (used_memory of an emptied store would drift from its
  // baseline).
  return slots_mapped(cap) ? cap * sizeof(uint64_t)
                           : malloc_chunk_footprint(cap * sizeof(uint64_t));
}

void deallocate_slots(uint64_t* slots, size_t cap) {
  if (slots_mapped(cap)) {
    munmap(slots, cap * sizeof(uint64_t));
  } else {
    std::free(slots);
  }
}

void release_slots(uint64_t* slots, size_t cap) {
  if (slots == nullptr) return;
  if (cap * sizeof(uint64_t) >= kAsyncFreeBytes) {
    reclaimer().submit([slots, cap] { deallocate_slots(slots, cap); });
  } else {
    deallocate_slots(slots, cap);
  }
}

}  // namespace ringkv::engine
