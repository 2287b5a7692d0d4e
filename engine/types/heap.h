// Heap blocks of the collection objects: allocation that reports failure as std::bad_alloc, and
// the byte counts their memory() sums (what glibc's malloc really takes, not what was asked).
#pragma once

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace ringkv::engine {

// glibc's per-chunk header: a block occupies its usable size plus this. Counting it is what
// makes used_memory match the process's growth for datasets of many small blocks.
inline constexpr size_t kMallocChunkOverhead = sizeof(size_t);

// The bytes a malloc'd block occupies on the heap (0 for nullptr): usable size and header.
inline size_t heap_footprint(const void* p) {
  return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p)) + kMallocChunkOverhead;
}

// realloc that throws std::bad_alloc instead of returning nullptr (n must not be 0).
inline void* checked_realloc(void* p, size_t n) {
  void* q = std::realloc(p, n);
  if (q == nullptr) throw std::bad_alloc();
  return q;
}

// What a request of `n` bytes occupies on glibc's heap (16-byte chunks including an 8-byte
// header, 32 at least). Objects count themselves this way wherever they were allocated (the
// store, a test's stack).
constexpr size_t malloc_chunk_footprint(size_t n) {
  return std::max<size_t>(32, (n + kMallocChunkOverhead + 15) & ~size_t{15});
}

}  // namespace ringkv::engine
