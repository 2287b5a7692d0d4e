// Entry: one key of the store, stored as a single packed heap block.
//
//   byte 0      type (3 bits) | encoding (3 bits) | has_expire (1 bit)
//   bytes 1-3   LRU clock, seconds, 24 bits (OBJECT IDLETIME)
//   varint      key length
//   varint      value length (strings)
//   [8 bytes]   absolute expiry, unix ms (only when has_expire)
//   key bytes, then value bytes
//
// Entries are created, resized and freed only by the Store.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::engine {

enum class ValueType : uint8_t { kString = 0, kList = 1, kSet = 2, kZSet = 3, kHash = 4 };

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
  bool has_expire() const;
  int64_t expire_at() const;  // unix ms; -1 when the key has no TTL
  uint32_t lru() const;       // 24-bit LRU clock at last access
};

// Name of a type as TYPE prints it ("string", "list", ...).
std::string_view type_name(ValueType t);
// Name of an encoding as OBJECT ENCODING prints it.
std::string_view encoding_name(StringEncoding e);

}  // namespace ringkv::engine
