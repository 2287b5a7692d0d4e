// The opcodes of an RDB file (rdb.h in Redis 7.0), between and around its key records.
#pragma once

#include <cstdint>

namespace ringkv::persistence {

inline constexpr uint8_t kOpcodeFunction2 = 245;     // a function library (Redis 7.0)
inline constexpr uint8_t kOpcodeFunction = 246;      // a function library (7.0 release candidates)
inline constexpr uint8_t kOpcodeModuleAux = 247;     // module data outside keys
inline constexpr uint8_t kOpcodeIdle = 248;          // the next key's idle time, seconds
inline constexpr uint8_t kOpcodeFreq = 249;          // the next key's LFU counter
inline constexpr uint8_t kOpcodeAux = 250;           // a field about the file: key, value
inline constexpr uint8_t kOpcodeResizeDb = 251;      // sizes of the database that follows
inline constexpr uint8_t kOpcodeExpireTimeMs = 252;  // the next key's expiry, unix ms (8 bytes LE)
inline constexpr uint8_t kOpcodeExpireTime = 253;    // the next key's expiry, unix s (4 bytes LE)
inline constexpr uint8_t kOpcodeSelectDb = 254;      // the database of the keys that follow
inline constexpr uint8_t kOpcodeEof = 255;           // the end, then the CRC64 (8 bytes LE)

// RDB_VERSION of Redis 7.0: files of a later version are refused.
inline constexpr int kRdbVersion = 10;

}  // namespace ringkv::persistence
