// Heap blocks of the collection objects: allocation that reports failure as std::bad_alloc, and
// the byte counts their memory() sums (what glibc's malloc really hands out, not what was asked).
#pragma once

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace ringkv::engine {

// The usable size of a malloc'd block (0 for nullptr): the bytes it really occupies.
inline size_t usable_size(const void* p) {
  return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p));
}

// realloc that throws std::bad_alloc instead of returning nullptr (n must not be 0).
inline void* checked_realloc(void* p, size_t n) {
  void* q = std::realloc(p, n);
  if (q == nullptr) throw std::bad_alloc();
  return q;
}

// What glibc gives a request of `n` bytes (16-byte chunks with an 8-byte header, 24 at least).
// Objects count themselves this way wherever they were allocated (the store, a test's stack).
constexpr size_t malloc_chunk_usable(size_t n) {
  return std::max<size_t>(24, ((n + 8 + 15) & ~size_t{15}) - 8);
}

}  // namespace ringkv::engine
