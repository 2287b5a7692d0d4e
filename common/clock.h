// Clocks. The monotonic clock in microseconds, for the time budgets of work done a batch per loop
// turn (the loop's own time, uv_now, does not move inside one turn).
#pragma once

#include <chrono>
#include <cstdint>

namespace ringkv::common {

inline int64_t monotonic_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

// Wall-clock time in milliseconds since the Unix epoch.
inline int64_t unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace ringkv::common
