// LatencyHistogram: command durations in nanoseconds, kept as Redis 7.0 keeps them for INFO
// latencystats and LATENCY HISTOGRAM (an HDR histogram from 1 ns to 1 s with 2 significant
// digits), so percentiles and histogram buckets are reported with Redis's exact values.
//
// Debian ships no C HdrHistogram library, so this is the part of one Redis uses: record,
// value at percentile, and the cumulative counts at powers of two from 1024 ns.
#pragma once

#include <cstddef>
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
  void record(int64_t ns) {
    if (counts_.empty()) allocate();
    ns = ns < kLowest ? kLowest : ns > kHighest ? kHighest : ns;
    const int bucket =
        64 - __builtin_clzll(static_cast<uint64_t>(ns) | kSubBucketMask) - (kHalfMagnitude + 1);
    counts_[static_cast<size_t>(((int64_t{bucket} + 1) << kHalfMagnitude) + (ns >> bucket) -
                                kHalfCount)]++;
    total_++;
  }
  int64_t total() const { return total_; }
  // The value (ns) at `percentile` (0-100), as hdr_value_at_percentile: the highest value
  // equivalent to the bucket holding that rank. 0 when empty.
  int64_t value_at_percentile(double percentile) const;
  // LATENCY HISTOGRAM's buckets: (microseconds, cumulative count) at each power of two from
  // 1024 ns where the cumulative count grew.
  std::vector<std::pair<int64_t, int64_t>> cumulative_usec() const;
  void reset();

 private:
  // 256 sub-buckets per power of two (2 significant digits), as Redis's histograms.
  static constexpr int kHalfMagnitude = 7;  // 128 sub-buckets in each half bucket
  static constexpr int64_t kHalfCount = int64_t{1} << kHalfMagnitude;
  static constexpr int64_t kSubBucketMask = 2 * kHalfCount - 1;

  void allocate();

  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

}  // namespace ringkv::engine
