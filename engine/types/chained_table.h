// ChainedTable: the string-keyed chained hash table behind the hashtable encodings (hash fields,
// set members, a sorted set's member index), with Redis's dict policies: a power-of-two bucket
// array of at least kMinBuckets, doubled when it holds more nodes than buckets, shrunk below 10%
// fill, and SCAN's reverse-binary cursor.
//
// The nodes are intrusive and owned by the caller (each object lays its node out as one block);
// the table owns only its bucket array. A Node needs a `Node* chain` member (the next node of the
// bucket) and a `std::string_view key() const`. Allocations are reported to the caller's
// `heap_bytes` counter, so the objects' memory() stays exact and O(1).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <span>
#include <string_view>
#include <utility>

#include "engine/types/heap.h"

namespace ringkv::engine {

template <typename Node>
class ChainedTable {
 public:
  // Smallest bucket array, as Redis's DICT_HT_INITIAL_SIZE.
  static constexpr size_t kMinBuckets = 4;
  // Shrink when fewer than 1 in kShrinkFill buckets' worth of nodes remain (HASHTABLE_MIN_FILL).
  static constexpr size_t kShrinkFill = 10;
  // A scan step gives up after this many buckets per requested element, like Redis.
  static constexpr size_t kScanBucketsPerCount = 10;

  ChainedTable() = default;
  ChainedTable(const ChainedTable&) = delete;
  ChainedTable& operator=(const ChainedTable&) = delete;
  // Frees the bucket array only; the caller frees the nodes (see for_each).
  ~ChainedTable() { std::free(buckets_); }

  size_t bucket_count() const { return bucket_count_; }

  // The link pointing at the node with `key` (for unlink), or nullptr.
  Node** find(std::string_view key) const {
    for (Node** link = &buckets_[bucket_of(key)]; *link != nullptr; link = &(*link)->chain) {
      if ((*link)->key() == key) return link;
    }
    return nullptr;
  }

  // Starts loading what find() of each of `keys` reads first: its bucket, or with `chain` (once
  // the buckets have landed) each bucket's first node. A hint only; changes nothing.
  void prefetch(std::span<const std::string_view> keys, bool chain) const {
    if (buckets_ == nullptr) return;
    for (std::string_view key : keys) {
      Node* const* bucket = &buckets_[bucket_of(key)];
      if (!chain) {
        __builtin_prefetch(bucket);
      } else if (*bucket != nullptr) {
        __builtin_prefetch(*bucket);
      }
    }
  }

  // Puts `node` at the head of its bucket's chain (its key must not be in the table).
  void insert(Node* node) {
    Node** head = &buckets_[bucket_of(node->key())];
    node->chain = *head;
    *head = node;
  }

  // Takes the node `link` points at (from find) out of its chain.
  static void unlink(Node** link) { *link = (*link)->chain; }

  // Rehashes into `buckets` buckets (a power of two). Each old bucket's chain is walked in order
  // and pushed onto the new heads, as every encoding did before sharing this table, so the
  // bucket order (and hence SCAN and iteration order) is unchanged.
  void resize(size_t buckets, size_t& heap_bytes) {
    Node** old = buckets_;
    const size_t old_count = bucket_count_;
    buckets_ = static_cast<Node**>(std::calloc(buckets, sizeof(Node*)));
    if (buckets_ == nullptr) throw std::bad_alloc();
    bucket_count_ = buckets;
    heap_bytes += heap_footprint(buckets_);
    for (size_t i = 0; i < old_count; ++i) {
      for (Node* n = old[i]; n != nullptr;) {
        Node* next = n->chain;
        insert(n);
        n = next;
      }
    }
    heap_bytes -= heap_footprint(old);
    std::free(old);
  }

  // Resizes to the smallest size that holds `count` nodes (converting an encoding to this one).
  void fit(size_t count, size_t& heap_bytes) {
    resize(std::max(kMinBuckets, std::bit_ceil(std::max<size_t>(count, 1))), heap_bytes);
  }

  // After an insert: doubles the buckets when the table holds more nodes than buckets.
  void grow_if_needed(size_t count, size_t& heap_bytes) {
    if (count > bucket_count_) resize(bucket_count_ * 2, heap_bytes);
  }

  // After a removal: shrinks to fit once fewer than 10% of the buckets' worth of nodes remain.
  void shrink_if_needed(size_t count, size_t& heap_bytes) {
    if (bucket_count_ > kMinBuckets && count * kShrinkFill < bucket_count_) fit(count, heap_bytes);
  }

  // Calls visit(Node*) for every node in bucket order, then chain order. The next node is read
  // before the call, so `visit` may free the node (destructors).
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (size_t i = 0; i < bucket_count_; ++i) {
      for (Node* n = buckets_[i]; n != nullptr;) {
        Node* next = n->chain;
        visit(n);
        n = next;
      }
    }
  }

  // Makes this (empty) table a copy of `other` with the same buckets and chain order, so it
  // iterates and scans like the original; `copy(const Node&)` returns the new node.
  template <typename Copy>
  void copy_from(const ChainedTable& other, Copy&& copy, size_t& heap_bytes) {
    resize(other.bucket_count_, heap_bytes);
    for (size_t i = 0; i < other.bucket_count_; ++i) {
      Node** tail = &buckets_[i];
      for (const Node* n = other.buckets_[i]; n != nullptr; n = n->chain) {
        *tail = copy(*n);
        (*tail)->chain = nullptr;
        tail = &(*tail)->chain;
      }
    }
  }

  // One SCAN step: calls visit(const Node&) for the nodes of the buckets from `cursor` on (about
  // `count` nodes) and returns the next cursor, 0 when done. The cursor counts in reversed-bit
  // order, so every node present for the whole scan is visited at least once however the table
  // grows or shrinks between calls.
  template <typename Visit>
  uint64_t scan(uint64_t cursor, size_t count, Visit&& visit) const {
    const uint64_t mask = bucket_count_ - 1;
    const size_t want = std::max<size_t>(count, 1);
    size_t emitted = 0;
    size_t buckets = 0;
    uint64_t v = cursor;
    do {
      for (const Node* n = buckets_[v & mask]; n != nullptr; n = n->chain) {
        visit(*n);
        ++emitted;
      }
      ++buckets;
      // Increment the reversed cursor: the high bits of the bucket index count first, so a
      // table that doubled or halved since the last call continues without skipping a bucket.
      v |= ~mask;
      v = reverse_bits(v);
      ++v;
      v = reverse_bits(v);
    } while (v != 0 && emitted < want && buckets < want * kScanBucketsPerCount);
    return v;
  }

  // A node of a random non-empty bucket, at a random place in its chain, as Redis's
  // dictGetRandomKey. The table must not be empty; `rng()` returns 64 random bits.
  template <typename Random>
  const Node* random_node(Random&& rng) const {
    const Node* bucket = nullptr;
    while (bucket == nullptr) bucket = buckets_[rng() & (bucket_count_ - 1)];
    size_t length = 0;
    for (const Node* n = bucket; n != nullptr; n = n->chain) ++length;
    for (size_t skip = rng() % length; skip > 0; --skip) bucket = bucket->chain;
    return bucket;
  }

  void swap(ChainedTable& other) noexcept {
    std::swap(buckets_, other.buckets_);
    std::swap(bucket_count_, other.bucket_count_);
  }

 private:
  static uint64_t reverse_bits(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
    return __builtin_bswap64(v);
  }

  size_t bucket_of(std::string_view key) const {
    return std::hash<std::string_view>{}(key) & (bucket_count_ - 1);
  }

  Node** buckets_ = nullptr;
  size_t bucket_count_ = 0;  // a power of two (0 before the first resize)
};

}  // namespace ringkv::engine
