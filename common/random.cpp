// The process's random generator (see random.h).
#include "common/random.h"

#include <random>

namespace ringkv::common {

uint64_t next_random() {
  static uint64_t state = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return splitmix64(state);
}

}  // namespace ringkv::common
