// PackedBuffer: the single malloc'd block of a listpack encoding (hash fields and values, sorted
// set entries), always exactly as long as its contents, as Redis's listpacks are. Its callers
// lay the entries out (varint.h); the buffer only grows, shrinks and copies, reporting every
// allocation to the owner's `heap_bytes` counter so memory() stays exact.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "engine/types/heap.h"

namespace ringkv::engine {

class PackedBuffer {
 public:
  PackedBuffer() = default;
  PackedBuffer(const PackedBuffer&) = delete;
  PackedBuffer& operator=(const PackedBuffer&) = delete;
  // Takes the block (the owner's heap count does not change hands; see heap_size).
  PackedBuffer(PackedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  ~PackedBuffer() { std::free(data_); }

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  const char* end() const { return data_ + size_; }
  // The bytes the block occupies on the heap.
  size_t heap_size() const { return heap_footprint(data_); }

  // Replaces the `old_size` bytes at `offset` by a gap of `new_size` bytes (moving what follows)
  // and returns the gap, for the caller to fill.
  char* splice(size_t offset, size_t old_size, size_t new_size, size_t& heap_bytes) {
    const size_t tail = size_ - offset - old_size;
    const size_t size = size_ - old_size + new_size;
    if (new_size > old_size) reallocate(size, heap_bytes);
    if (tail > 0) std::memmove(data_ + offset + new_size, data_ + offset + old_size, tail);
    if (new_size < old_size) reallocate(size, heap_bytes);
    size_ = size;
    return data_ + offset;
  }

  // Makes this (empty) buffer a copy of `other`.
  void copy_from(const PackedBuffer& other, size_t& heap_bytes) {
    if (other.size_ == 0) return;
    reallocate(other.size_, heap_bytes);
    std::memcpy(data_, other.data_, other.size_);
    size_ = other.size_;
  }

 private:
  void reallocate(size_t size, size_t& heap_bytes) {
    heap_bytes -= heap_footprint(data_);
    if (size == 0) {
      std::free(data_);
      data_ = nullptr;
    } else {
      data_ = static_cast<char*>(checked_realloc(data_, size));
    }
    heap_bytes += heap_footprint(data_);
  }

  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ringkv::engine
