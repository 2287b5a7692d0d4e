// Hash-tag extraction (Redis's keyHashSlot rule).
#include "hashring/hash_tag.h"

namespace ringkv::hashring {

std::string_view hash_tag(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  // An empty tag ("{}") hashes the whole key, as in Redis, so "{}" cannot pin unrelated keys.
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

}  // namespace ringkv::hashring
