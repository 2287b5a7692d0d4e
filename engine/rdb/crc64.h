// CRC-64 as Redis computes it (crc64.c): the Jones polynomial 0xad93d23594c935a9, reflected input
// and output, initial value 0, no final xor. DUMP payloads and RDB files end with it.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::engine {

// Continues the CRC `crc` over `data` (start with 0). crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
uint64_t crc64(uint64_t crc, std::string_view data);

}  // namespace ringkv::engine
