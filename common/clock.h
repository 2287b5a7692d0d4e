// The monotonic clock in microseconds, for the time budgets of work done a batch per loop turn
// (the loop's own time, uv_now, does not move inside one turn).
#pragma once

#include <chrono>
#include <cstdint>

namespace ringkv::common {

inline int64_t monotonic_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace ringkv::common
