// One key as the commands that recreate it: the snapshot format of an append-only file rewrite
// (and of any other copy of a key as commands). Reads the key only, so it is safe in a forked
// child walking the store.
#pragma once

#include <cstddef>
#include <string>

#include "engine/keyspace/entry.h"

namespace ringkv::engine {

// Largest number of elements one rewrite command carries (Redis's AOF_REWRITE_ITEMS_PER_CMD).
inline constexpr size_t kItemsPerCommand = 64;

// Appends to `out`, as RESP requests (protocol/request_writer.h), the commands that recreate
// `entry` from nothing: SET for a string; RPUSH / SADD / ZADD / HSET in batches of at most
// kItemsPerCommand elements for collections; XADD, XSETID, XGROUP and XCLAIM for a stream;
// then PEXPIREAT key <ms> when it has a TTL.
void append_key_commands(const Entry& entry, std::string& out);

}  // namespace ringkv::engine
