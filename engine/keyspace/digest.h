// DEBUG DIGEST and DEBUG DIGEST-VALUE: SHA1-based digests of the dataset and of single values,
// computed as redis-server 7.0 computes them, so the same data gives the same digest in ringkv
// and in Redis (and digests can be compared across a migration or a restart).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "engine/keyspace/entry.h"
#include "engine/keyspace/store.h"

namespace ringkv::engine {

using Digest = std::array<uint8_t, 20>;

// The digest of one key's value and TTL (not its name): DEBUG DIGEST-VALUE.
Digest value_digest(const Entry& entry);
// The digest of the whole keyspace: DEBUG DIGEST (all zeros when it is empty).
Digest dataset_digest(Store& store);
// The 40 lowercase hex digits.
std::string digest_hex(const Digest& d);

}  // namespace ringkv::engine
