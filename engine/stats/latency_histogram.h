// LatencyHistogram: command durations in nanoseconds, kept as Redis 7.0 keeps them for INFO
// latencystats and LATENCY HISTOGRAM (an HDR histogram from 1 ns to 1 s with 2 significant
// digits), so percentiles and histogram buckets are reported with Redis's exact values.
//
// Debian ships no C HdrHistogram library, so this is the part of one Redis uses: record,
// value at percentile, and the cumulative counts at powers of two from 1024 ns.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ringkv::engine {

class LatencyHistogram {
 public:
  // Redis's bounds: values below 1 ns count as 1 ns, above 1 s as 1 s.
  static constexpr int64_t kLowest = 1;
  static constexpr int64_t kHighest = 1'000'000'000;

  // Counts one duration (nanoseconds). Allocates the buckets on first use.
  void record(int64_t ns);
  int64_t total() const { return total_; }
  // The value (ns) at `percentile` (0-100), as hdr_value_at_percentile: the highest value
  // equivalent to the bucket holding that rank. 0 when empty.
  int64_t value_at_percentile(double percentile) const;
  // LATENCY HISTOGRAM's buckets: (microseconds, cumulative count) at each power of two from
  // 1024 ns where the cumulative count grew.
  std::vector<std::pair<int64_t, int64_t>> cumulative_usec() const;
  void reset();

 private:
  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

}  // namespace ringkv::engine
