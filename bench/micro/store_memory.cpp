// store_memory: loads N keys shaped like the Redis comparison ("key:000000123456" -> 16-byte
// value, every third with a TTL) and reports the store's bytes per key, the process RSS growth
// and the slowest single operation in thread CPU time (including resizes), then the slowest
// rehash/expiry step.
//
//   store_memory [keys=1000000]
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "engine/keyspace/store.h"

namespace {

using Clock = std::chrono::steady_clock;

// Resident set size of this process in bytes, from /proc.
size_t rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// CPU time of this thread in microseconds: per-operation maxima on a shared machine would
// otherwise measure preemption, not the store.
double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  constexpr int64_t kNow = 1'700'000'000'000;
  ringkv::engine::Store store;
  store.set_now(kNow);
  const size_t rss_before = rss_bytes();
  const size_t used_before = store.used_memory();
  double worst_set_us = 0;
  long slow_sets = 0;  // over 1 ms: resizes must never cause these
  char key[32];
  char value[32];
  const auto load_start = Clock::now();
  for (long i = 0; i < n; ++i) {
    std::snprintf(key, sizeof key, "key:%012ld", i);
    std::snprintf(value, sizeof value, "value:%010ld", i);
    const auto expiry = i % 3 == 0 ? ringkv::engine::Expiry::at(kNow + 100'000'000)
                                   : ringkv::engine::Expiry::none();
    const double t = thread_cpu_us();
    store.set_string(key, value, expiry);
    const double us = thread_cpu_us() - t;
    worst_set_us = std::max(worst_set_us, us);
    if (us > 1000) ++slow_sets;
  }
  const double load_s = us_since(load_start) / 1e6;
  double worst_step_us = 0;
  while (true) {
    const double t = thread_cpu_us();
    const bool more = store.rehash_step(1000);
    worst_step_us = std::max(worst_step_us, thread_cpu_us() - t);
    if (!more) break;
  }
  malloc_trim(0);
  const size_t used = store.used_memory() - used_before;
  const size_t rss = rss_bytes() - rss_before;
  std::printf("keys                %ld (%zu with TTL)\n", n, store.volatile_size());
  std::printf("load time           %.2f s (%.0f ns/SET)\n", load_s, load_s * 1e9 / n);
  std::printf("store used_memory   %zu bytes, %.1f bytes/key\n", used, double(used) / n);
  std::printf("process RSS growth  %zu bytes, %.1f bytes/key\n", rss, double(rss) / n);
  std::printf("slowest SET         %.1f us (%ld over 1 ms)\n", worst_set_us, slow_sets);
  std::printf("slowest rehash_step %.1f us (budget 1000)\n", worst_step_us);

  // Expire everything and time the active cycles that collect it.
  store.set_now(kNow + 200'000'000);
  double worst_cycle_us = 0;
  size_t expired = 0;
  long cycles = 0;
  long slow_cycles = 0;
  while (store.volatile_size() > 0) {
    const double t = thread_cpu_us();
    expired += store.active_expire_cycle(1000);
    const double us = thread_cpu_us() - t;
    worst_cycle_us = std::max(worst_cycle_us, us);
    ++cycles;
    if (us > 2000) ++slow_cycles;
  }
  std::printf("active expiry       %zu keys in %ld cycles, slowest %.1f us (%ld over 2 ms)\n",
              expired, cycles, worst_cycle_us, slow_cycles);
  const auto t = Clock::now();
  store.clear(true);
  std::printf("clear(async)        %.1f us\n", us_since(t));
  return 0;
}
