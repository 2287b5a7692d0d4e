// DEBUG DIGEST and DEBUG DIGEST-VALUE: SHA1-based digests of the dataset and of single values,
// computed as redis-server 7.0 computes them, so the same data gives the same digest in ringkv
// and in Redis (and digests can be compared across a migration or a restart).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyspace/entry.h"
#include "engine/keyspace/store.h"

namespace ringkv::engine {

using Digest = std::array<uint8_t, 20>;

// The digest of one key's value and TTL (not its name): DEBUG DIGEST-VALUE.
Digest value_digest(const Entry& entry);
// The digest of the whole keyspace: DEBUG DIGEST (all zeros when it is empty), of one store as
// database 0, or of numbered databases.
Digest dataset_digest(Store& store);
Digest dataset_digest(std::span<Store* const> dbs);
// The 40 lowercase hex digits.
std::string digest_hex(const Digest& d);

// The digest one redis-server holding all their keys would give, from several stores' dataset
// digests (40 hex digits each, as digest_hex writes them): a store's digest is the database's
// mark mixed into zeros, xored with its keys' digests, so the keys' part of each is recovered
// and the mark applied once. Empty when one is not 40 hex digits.
std::string combine_digests(const std::vector<std::string_view>& hex_digests);

}  // namespace ringkv::engine
