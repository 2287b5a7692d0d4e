// One key as the commands that recreate it: the snapshot format of an append-only file rewrite
// (and of any other copy of a key as commands). Reads the key only, so it is safe in a forked
// child walking the store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/keyspace/entry.h"

namespace ringkv::engine {

// Largest number of elements one rewrite command carries (Redis's AOF_REWRITE_ITEMS_PER_CMD).
inline constexpr size_t kItemsPerCommand = 64;

// Appends to `out`, as RESP requests (protocol/request_writer.h), the commands that recreate
// `entry` from nothing: SET for a string; RPUSH / SADD / ZADD / HSET in batches of at most
// kItemsPerCommand elements for collections; XADD, XSETID, XGROUP and XCLAIM for a stream;
// then PEXPIREAT key <ms> when it has a TTL.
void append_key_commands(const Entry& entry, std::string& out);

// A key copied as commands a slice at a time (a big collection moving to another node over
// several event-loop turns, so that no turn serialises a million elements): where the copy
// stands between slices. A write to the key between slices leaves a copy to redo whole.
struct KeySliceCursor {
  bool begun = false;     // the DEL that clears the destination's copy was written
  uint64_t position = 0;  // list and sorted set: elements written; set and hash: scan cursor
  bool done = false;      // the last slice was written
};

// Appends the next slice of the commands that recreate `entry` (a list, set, sorted set or
// hash; strings and streams are copied whole), each request behind the arguments of `prefix`:
// first DEL key, then RPUSH / SADD / ZADD / HSET batches of about `elements` elements in all,
// and with the last one PEXPIREAT when the key has a TTL. Returns how many requests it appended;
// sets cursor.done with the last slice.
size_t append_key_slice(const Entry& entry, KeySliceCursor& cursor, size_t elements,
                        std::span<const std::string_view> prefix, std::string& out);

}  // namespace ringkv::engine
