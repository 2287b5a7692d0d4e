// The hash-tag rule of Redis Cluster: keys sharing a tag land on the same node, which is what
// lets a client keep multi-key commands on one owner.
#pragma once

#include <string_view>

namespace ringkv::hashring {

// The part of `key` that is hashed, exactly as Redis's keyHashSlot() picks it: if the key has a
// '{' and a later '}', and the first '}' after the first '{' is not right next to it, only the
// bytes between them; otherwise the whole key. The result views `key`'s bytes.
std::string_view hash_tag(std::string_view key);

}  // namespace ringkv::hashring
