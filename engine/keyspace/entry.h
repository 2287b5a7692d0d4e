// Entry: one key of the store, stored as a single packed heap block.
//
//   byte 0      type (3 bits) | encoding (3 bits) | has_expire (1 bit) | unshared (1 bit)
//   bytes 1-3   LRU clock, seconds, 24 bits (OBJECT IDLETIME)
//   varint      key length
//   varint      value length (strings; 8 for the other types, whose value is an Object*)
//   [8 bytes]   absolute expiry, unix ms (only when has_expire)
//   key bytes, then value bytes
//
// A 16-byte key with a 16-byte value needs 38 bytes, which glibc serves from a 48-byte chunk.
// Entries are created, resized and freed only by the Store. An entry owns its Object (see
// object.h): destroying the entry destroys the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ringkv::engine {

class Object;

enum class ValueType : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZSet = 3,
  kHash = 4,
  kStream = 5
};

// What OBJECT ENCODING reports for a string.
enum class StringEncoding : uint8_t { kInt = 0, kEmbstr = 1, kRaw = 2 };

// Redis's choice for a value arriving from a client: "int" when it is the canonical decimal form
// of a 64-bit integer (at most 20 chars), "embstr" up to 44 bytes, "raw" above.
StringEncoding classify_string(std::string_view value);

class Entry {
 public:
  Entry() = delete;

  ValueType type() const;
  StringEncoding encoding() const;
  std::string_view key() const;
  std::string_view string_value() const;  // type() == kString
  // The collection value (type() != kString). Writes to it go through ObjectWrite (object.h)
  // so that the store's memory accounting and empty-key deletion stay right.
  Object* object() const;
  bool has_expire() const;
  // An integer string Redis would hold in an object of its own rather than one of its shared
  // integers 0..9999 (a COPY of it, or one written under an LRU/LFU maxmemory policy): OBJECT
  // REFCOUNT then says 1.
  bool unshared() const;
  void set_unshared(bool unshared);
  int64_t expire_at() const;  // unix ms; -1 when the key has no TTL
  uint32_t lru() const;       // 24-bit LRU clock at last access

 private:
  friend class Store;
  friend void free_entry(Entry* e, bool lazy);  // lazy_free.h

  // Where the variable parts of a block live.
  struct Layout {
    size_t key_offset;
    size_t key_size;
    size_t value_offset;
    size_t value_size;
  };

  // Bytes a block with these parts needs.
  static size_t block_size(size_t key_size, size_t value_size, bool has_expire);
  // Allocates and fills a block; `expire_at` < 0 means no TTL. Never returns nullptr.
  static Entry* create(ValueType type, StringEncoding encoding, uint32_t lru, std::string_view key,
                       std::string_view value, int64_t expire_at);
  // Allocates a block for a collection key that takes ownership of `object`.
  static Entry* create_object(uint32_t lru, std::string_view key, Object* object,
                              int64_t expire_at);
  // Gives up the object without freeing it (it moved to another entry).
  void detach_object();
  // Rewrites the value (and encoding, TTL, LRU) in place when the block's layout is unchanged
  // and its allocation is big enough; false when a new block is needed.
  bool rewrite(StringEncoding encoding, uint32_t lru, std::string_view value, int64_t expire_at);
  // Appends to a string value, growing the block with slack like Redis's sds (double below
  // 1 MB, then 1 MB more) so repeated appends cost amortised linear time; the encoding becomes
  // raw. `suffix` must not point into `e`. Returns the block, which may have moved.
  static Entry* append(Entry* e, std::string_view suffix);
  // Frees a block created by create() or create_object(), with its object.
  static void destroy(Entry* e);
  // Bytes the allocator reserved for this block.
  size_t allocated_size() const;

  Layout layout() const;
  void set_lru(uint32_t clock);
  // Changes an existing TTL (has_expire() must be true).
  void set_expire_at(int64_t at_ms);

  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(this); }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(this); }
};

// Name of a type as TYPE prints it ("string", "list", ...).
std::string_view type_name(ValueType t);
// Name of an encoding as OBJECT ENCODING prints it.
std::string_view encoding_name(StringEncoding e);

}  // namespace ringkv::engine
