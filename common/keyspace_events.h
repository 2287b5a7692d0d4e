// Keyspace notification classes (notify-keyspace-events): the flag bits Redis 7.0 uses, and the
// conversions between them and the configuration string. Shared by conf/ (parsing, CONFIG GET)
// and the engine's handlers and server/ (which events are published).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ringkv::common {

// Redis's NOTIFY_* bits (server.h of 7.0), so the canonical string comes out in Redis's order.
enum KeyspaceEventClass : int {
  kNotifyKeyspace = 1 << 0,  // K: __keyspace@<db>__:<key> channels
  kNotifyKeyevent = 1 << 1,  // E: __keyevent@<db>__:<event> channels
  kNotifyGeneric = 1 << 2,   // g: DEL, EXPIRE, RENAME, ...
  kNotifyString = 1 << 3,    // $
  kNotifyList = 1 << 4,      // l
  kNotifySet = 1 << 5,       // s
  kNotifyHash = 1 << 6,      // h
  kNotifyZset = 1 << 7,      // z
  kNotifyExpired = 1 << 8,   // x
  kNotifyEvicted = 1 << 9,   // e
  kNotifyStream = 1 << 10,   // t
  kNotifyKeyMiss = 1 << 11,  // m (not part of A)
  kNotifyModule = 1 << 13,   // d
  kNotifyNew = 1 << 14,      // n (not part of A)
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// Parses a notify-keyspace-events value as Redis's keyspaceEventsStringToFlags; nullopt when it
// holds a character that names no class.
std::optional<int> parse_keyspace_events(std::string_view text);

// The canonical form CONFIG GET prints (Redis's keyspaceEventsFlagsToString).
std::string format_keyspace_events(int flags);

}  // namespace ringkv::common
