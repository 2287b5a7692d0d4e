// The Redis version ringkv answers as: INFO's redis_version, HELLO's version, Lua's
// redis.REDIS_VERSION, the RDB files' redis-ver field and LOLWUT's signature. Every reply is
// redis-server 7.0.15's, so clients that check the version see the one they would see there.
#pragma once

#include <string_view>

namespace ringkv::common {

inline constexpr std::string_view kRedisVersion = "7.0.15";
// The same as Redis's REDIS_VERSION_NUM: 0x00MMmmpp.
inline constexpr int kRedisVersionNum = 0x07000f;

}  // namespace ringkv::common
