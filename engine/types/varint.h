// The length prefix of packed encodings (entries, listpacks, list nodes): an unsigned LEB128
// varint, 7 bits a byte, low bits first, the high bit marking that another byte follows; zigzag
// for signed values, and packed strings that keep integers as integers (stream nodes).
#pragma once

#include <charconv>
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

// Signed integers as varints: zigzag maps 0, -1, 1, -2... to 0, 1, 2, 3..., so that small
// negative values take one byte as small positive ones do.
constexpr uint64_t zigzag_encode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t zigzag_decode(uint64_t z) {
  return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
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

// --- Strings that may be integers ---------------------------------------------------------------
// A packed string is the varint of a header, then for text its bytes: header = length << 1 for
// text, zigzag(value) << 1 | 1 for the canonical decimal form of an integer in [-2^62, 2^62) (the
// text is given back exactly, as Redis's listpacks give back their integer entries). "123456"
// takes 3 bytes instead of 7.

// The integer `s` is when it is the canonical text of one in [-2^62, 2^62): no sign but '-', no
// leading zeros, not "-0".
inline bool packed_integer(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size() || s[i] < '0' || s[i] > '9' || (s[i] == '0' && s.size() != 1)) return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');  // 19 digits cannot overflow 64 bits
  }
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  if (s[0] == '-' ? v > kLimit : v >= kLimit) return false;
  *out = s[0] == '-' ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

inline uint64_t packed_header(std::string_view s) {
  int64_t v = 0;
  if (packed_integer(s, &v)) {
    return zigzag_encode(v) << 1 | 1;
  }
  return static_cast<uint64_t>(s.size()) << 1;
}

// Bytes the packed form of `s` takes.
inline size_t packed_size(std::string_view s) {
  const uint64_t h = packed_header(s);
  return varint_size(h) + ((h & 1) != 0 ? 0 : s.size());
}

// Writes the packed form of `s` at `p`; returns the position after it.
inline char* put_packed(char* p, std::string_view s) {
  const uint64_t h = packed_header(s);
  p = put_varint(p, h);
  if ((h & 1) != 0 || s.empty()) return p;
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Room for the text of a packed integer.
using PackedText = char[24];

// Reads the packed string at `p` into `out`, which points into the buffer for text and into
// `text` for an integer; returns the position after it.
inline const char* get_packed(const char* p, std::string_view* out, PackedText& text) {
  uint64_t h = 0;
  p = get_varint(p, &h);
  if ((h & 1) == 0) {
    *out = std::string_view(p, static_cast<size_t>(h >> 1));
    return p + (h >> 1);
  }
  const int64_t v = zigzag_decode(h >> 1);
  const auto end = std::to_chars(text, text + sizeof(PackedText), v).ptr;
  *out = std::string_view(text, static_cast<size_t>(end - text));
  return p;
}

// Skips the packed string at `p`; returns the position after it.
inline const char* skip_packed(const char* p) {
  uint64_t h = 0;
  p = get_varint(p, &h);
  return (h & 1) != 0 ? p : p + (h >> 1);
}

}  // namespace ringkv::engine
