// notify-keyspace-events: the configuration string <-> class bits, as Redis 7.0's notify.c.
#include "common/keyspace_events.h"

#include <utility>

namespace ringkv::common {

std::optional<int> parse_keyspace_events(std::string_view text) {
  int flags = 0;
  for (char c : text) {
    switch (c) {
      case 'A':
        flags |= kNotifyAll;
        break;
      case 'g':
        flags |= kNotifyGeneric;
        break;
      case '$':
        flags |= kNotifyString;
        break;
      case 'l':
        flags |= kNotifyList;
        break;
      case 's':
        flags |= kNotifySet;
        break;
      case 'h':
        flags |= kNotifyHash;
        break;
      case 'z':
        flags |= kNotifyZset;
        break;
      case 'x':
        flags |= kNotifyExpired;
        break;
      case 'e':
        flags |= kNotifyEvicted;
        break;
      case 'K':
        flags |= kNotifyKeyspace;
        break;
      case 'E':
        flags |= kNotifyKeyevent;
        break;
      case 't':
        flags |= kNotifyStream;
        break;
      case 'm':
        flags |= kNotifyKeyMiss;
        break;
      case 'd':
        flags |= kNotifyModule;
        break;
      case 'n':
        flags |= kNotifyNew;
        break;
      default:
        return std::nullopt;
    }
  }
  return flags;
}

std::string format_keyspace_events(int flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    // As Redis 7.0: 'A' stands for the classes it covers, and 'n' (outside A) is not printed.
    out += 'A';
  } else {
    constexpr std::pair<int, char> kClasses[] = {
        {kNotifyGeneric, 'g'}, {kNotifyString, '$'}, {kNotifyList, 'l'},    {kNotifySet, 's'},
        {kNotifyHash, 'h'},    {kNotifyZset, 'z'},   {kNotifyExpired, 'x'}, {kNotifyEvicted, 'e'},
        {kNotifyStream, 't'},  {kNotifyModule, 'd'}, {kNotifyNew, 'n'}};
    for (const auto& [bit, c] : kClasses) {
      if (flags & bit) out += c;
    }
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

}  // namespace ringkv::common
