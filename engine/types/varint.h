// The length prefix of packed encodings (entries, listpacks, list nodes): an unsigned LEB128
// varint, 7 bits a byte, low bits first, the high bit marking that another byte follows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ringkv::engine {

// Bytes the varint of `v` takes (1 to 10).
constexpr size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes the varint of `v` at `p` (char or uint8_t); returns the position after it.
template <typename Byte>
Byte* put_varint(Byte* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<Byte>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<Byte>(v);
  return p;
}

// Reads the varint at `p` (char or uint8_t) into `out`; returns the position after it.
template <typename Byte>
const Byte* get_varint(const Byte* p, uint64_t* out) {
  uint64_t v = 0;
  int shift = 0;
  while (static_cast<uint8_t>(*p) & 0x80) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(*p++) & 0x7f) << shift;
    shift += 7;
  }
  v |= static_cast<uint64_t>(static_cast<uint8_t>(*p++)) << shift;
  *out = v;
  return p;
}

// Bytes a length-prefixed string takes: the varint of its length, then its bytes.
constexpr size_t prefixed_size(std::string_view s) { return varint_size(s.size()) + s.size(); }

// Writes `s` length-prefixed at `p`; returns the position after it.
inline char* put_prefixed(char* p, std::string_view s) {
  p = put_varint(p, s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Reads the length-prefixed string at `p` (the view points into the buffer); returns the position
// after it.
inline const char* get_prefixed(const char* p, std::string_view* out) {
  uint64_t len = 0;
  p = get_varint(p, &len);
  *out = std::string_view(p, static_cast<size_t>(len));
  return p + len;
}

}  // namespace ringkv::engine
