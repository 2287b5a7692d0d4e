// Entry: encoding and decoding of the packed per-key heap block (layout in entry.h).
#include "engine/keyspace/entry.h"

#include <malloc.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include "common/numbers.h"
#include "engine/types/object.h"
#include "engine/types/varint.h"

namespace ringkv::engine {

namespace {

constexpr uint8_t kTypeMask = 0x07;
constexpr int kEncodingShift = 3;
constexpr uint8_t kEncodingMask = 0x07;
constexpr uint8_t kHasExpireBit = 0x40;
constexpr uint8_t kUnsharedBit = 0x80;
constexpr size_t kFixedHeader = 4;  // flags byte + 24-bit LRU
constexpr size_t kExpireSize = 8;
constexpr size_t kEmbstrLimit = 44;  // Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT
// Unused bytes a rewritten block may keep: glibc rounds requests up to 16 bytes anyway.
constexpr size_t kMaxInPlaceSlack = 16;
// Redis's SDS_MAX_PREALLOC: appends double a value's room up to this size, then add this much.
constexpr size_t kAppendDoublingLimit = size_t{1} << 20;

}  // namespace

StringEncoding classify_string(std::string_view value) {
  if (common::parse_integer(value)) return StringEncoding::kInt;  // string2ll's acceptance
  return value.size() <= kEmbstrLimit ? StringEncoding::kEmbstr : StringEncoding::kRaw;
}

ValueType Entry::type() const { return static_cast<ValueType>(bytes()[0] & kTypeMask); }

StringEncoding Entry::encoding() const {
  return static_cast<StringEncoding>((bytes()[0] >> kEncodingShift) & kEncodingMask);
}

bool Entry::has_expire() const { return (bytes()[0] & kHasExpireBit) != 0; }

bool Entry::unshared() const { return (bytes()[0] & kUnsharedBit) != 0; }

void Entry::set_unshared(bool unshared) {
  bytes()[0] =
      static_cast<uint8_t>(unshared ? bytes()[0] | kUnsharedBit : bytes()[0] & ~kUnsharedBit);
}

uint32_t Entry::lru() const {
  const uint8_t* b = bytes();
  return static_cast<uint32_t>(b[1]) | static_cast<uint32_t>(b[2]) << 8 |
         static_cast<uint32_t>(b[3]) << 16;
}

void Entry::set_lru(uint32_t clock) {
  uint8_t* b = bytes();
  b[1] = static_cast<uint8_t>(clock);
  b[2] = static_cast<uint8_t>(clock >> 8);
  b[3] = static_cast<uint8_t>(clock >> 16);
}

Entry::Layout Entry::layout() const {
  Layout l;
  const uint8_t* p = get_varint(bytes() + kFixedHeader, &l.key_size);
  p = get_varint(p, &l.value_size);
  if (has_expire()) p += kExpireSize;
  l.key_offset = static_cast<size_t>(p - bytes());
  l.value_offset = l.key_offset + l.key_size;
  return l;
}

std::string_view Entry::key() const {
  Layout l = layout();
  return {reinterpret_cast<const char*>(bytes()) + l.key_offset, l.key_size};
}

std::string_view Entry::string_value() const {
  assert(type() == ValueType::kString);
  Layout l = layout();
  return {reinterpret_cast<const char*>(bytes()) + l.value_offset, l.value_size};
}

Object* Entry::object() const {
  assert(type() != ValueType::kString);
  Layout l = layout();
  Object* object;
  std::memcpy(&object, bytes() + l.value_offset, sizeof object);
  return object;
}

void Entry::detach_object() {
  assert(type() != ValueType::kString);
  Object* none = nullptr;
  std::memcpy(bytes() + layout().value_offset, &none, sizeof none);
}

int64_t Entry::expire_at() const {
  if (!has_expire()) return -1;
  size_t unused;
  const uint8_t* p = get_varint(get_varint(bytes() + kFixedHeader, &unused), &unused);
  int64_t at;
  std::memcpy(&at, p, sizeof at);
  return at;
}

void Entry::set_expire_at(int64_t at_ms) {
  assert(has_expire());
  size_t unused;
  const uint8_t* p = get_varint(get_varint(bytes() + kFixedHeader, &unused), &unused);
  std::memcpy(bytes() + (p - bytes()), &at_ms, sizeof at_ms);
}

size_t Entry::block_size(size_t key_size, size_t value_size, bool has_expire) {
  return kFixedHeader + varint_size(key_size) + varint_size(value_size) +
         (has_expire ? kExpireSize : 0) + key_size + value_size;
}

Entry* Entry::create(ValueType type, StringEncoding encoding, uint32_t lru, std::string_view key,
                     std::string_view value, int64_t expire_at) {
  const bool has_expire = expire_at >= 0;
  void* mem = std::malloc(block_size(key.size(), value.size(), has_expire));
  if (mem == nullptr) throw std::bad_alloc();
  auto* b = static_cast<uint8_t*>(mem);
  b[0] = static_cast<uint8_t>(static_cast<uint8_t>(type) |
                              static_cast<uint8_t>(encoding) << kEncodingShift |
                              (has_expire ? kHasExpireBit : 0));
  uint8_t* p = put_varint(b + kFixedHeader, key.size());
  p = put_varint(p, value.size());
  if (has_expire) {
    std::memcpy(p, &expire_at, sizeof expire_at);
    p += kExpireSize;
  }
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + key.size(), value.data(), value.size());
  auto* e = static_cast<Entry*>(mem);
  e->set_lru(lru);
  return e;
}

Entry* Entry::create_object(uint32_t lru, std::string_view key, Object* object, int64_t expire_at) {
  assert(object != nullptr && object->type() != ValueType::kString);
  const std::string_view slot(reinterpret_cast<const char*>(&object), sizeof object);
  return create(object->type(), StringEncoding::kInt, lru, key, slot, expire_at);
}

bool Entry::rewrite(StringEncoding encoding, uint32_t lru, std::string_view value,
                    int64_t expire_at) {
  const bool expire = expire_at >= 0;
  Layout l = layout();
  if (expire != has_expire() || varint_size(value.size()) != varint_size(l.value_size)) {
    return false;
  }
  // Reuse the block only if it fits and a fresh one would not be meaningfully smaller, so a
  // big value overwritten by a small one does not pin its old allocation.
  const size_t needed = l.value_offset + value.size();
  const size_t allocated = allocated_size();
  if (needed > allocated || allocated - needed >= std::max(kMaxInPlaceSlack, needed / 4)) {
    return false;
  }
  uint8_t* b = bytes();
  b[0] = static_cast<uint8_t>((b[0] & ~(kEncodingMask << kEncodingShift)) |
                              static_cast<uint8_t>(encoding) << kEncodingShift);
  set_lru(lru);
  if (expire) set_expire_at(expire_at);
  put_varint(b + kFixedHeader + varint_size(l.key_size), value.size());
  // memmove: the caller may pass a view of this very value (APPEND-style rewrites).
  if (!value.empty()) std::memmove(b + l.value_offset, value.data(), value.size());
  return true;
}

Entry* Entry::append(Entry* e, std::string_view suffix) {
  const Layout l = e->layout();
  const bool expire = e->has_expire();
  const int64_t at = e->expire_at();
  const size_t value_size = l.value_size + suffix.size();
  const size_t header =
      kFixedHeader + varint_size(l.key_size) + varint_size(value_size) + (expire ? kExpireSize : 0);
  const size_t needed = header + l.key_size + value_size;
  if (needed > e->allocated_size()) {
    const size_t want = needed < kAppendDoublingLimit ? needed * 2 : needed + kAppendDoublingLimit;
    void* mem = std::realloc(e, want);
    if (mem == nullptr) throw std::bad_alloc();
    e = static_cast<Entry*>(mem);
  }
  uint8_t* b = e->bytes();
  // The value length may need one more varint byte: shift key and value behind the header.
  if (header != l.key_offset) {
    std::memmove(b + header, b + l.key_offset, l.key_size + l.value_size);
  }
  uint8_t* p = put_varint(put_varint(b + kFixedHeader, l.key_size), value_size);
  if (expire) std::memcpy(p, &at, sizeof at);
  if (!suffix.empty()) {
    std::memcpy(b + header + l.key_size + l.value_size, suffix.data(), suffix.size());
  }
  b[0] = static_cast<uint8_t>((b[0] & ~(kEncodingMask << kEncodingShift)) |
                              static_cast<uint8_t>(StringEncoding::kRaw) << kEncodingShift);
  return e;
}

void Entry::destroy(Entry* e) {
  if (e->type() != ValueType::kString) delete e->object();
  std::free(e);
}

size_t Entry::allocated_size() const { return malloc_usable_size(const_cast<Entry*>(this)); }

std::string_view type_name(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kHash:
      return "hash";
    case ValueType::kStream:
      return "stream";
  }
  return "none";
}

std::string_view encoding_name(StringEncoding e) {
  switch (e) {
    case StringEncoding::kInt:
      return "int";
    case StringEncoding::kEmbstr:
      return "embstr";
    case StringEncoding::kRaw:
      return "raw";
  }
  return "unknown";
}

}  // namespace ringkv::engine
