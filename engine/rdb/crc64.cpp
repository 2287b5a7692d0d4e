// Table-driven CRC-64/Jones, eight tables (slicing-by-8) so long payloads cost about a byte per
// cycle; zlib has only CRC-32 and Debian packages no CRC-64 library.
#include "engine/rdb/crc64.h"

#include <array>
#include <cstddef>
#include <cstring>

namespace ringkv::engine {
namespace {

// The Jones polynomial, bit-reversed for the reflected algorithm.
constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kReflectedPoly : crc >> 1;
    t[0][i] = crc;
  }
  for (size_t i = 0; i < 256; ++i) {
    for (size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

uint64_t crc64(uint64_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i) word = word << 8 | p[i];  // little-endian load
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace ringkv::engine
