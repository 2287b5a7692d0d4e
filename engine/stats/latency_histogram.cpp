// The HDR histogram layout of Redis's latency tracking: 256 sub-buckets per power of two
// (2 significant digits), so every value below 256 ns has a count of its own and each bucket
// above covers 1/128 of its power of two.
#include "engine/stats/latency_histogram.h"

#include <algorithm>

namespace ringkv::engine {
namespace {

constexpr int kHalfMagnitude = 7;
constexpr int64_t kHalfCount = int64_t{1} << kHalfMagnitude;
constexpr int64_t kSubBucketMask = 2 * kHalfCount - 1;

constexpr size_t counts_length() {
  int buckets = 1;
  for (int64_t untrackable = 2 * kHalfCount; untrackable <= LatencyHistogram::kHighest;
       untrackable <<= 1) {
    ++buckets;
  }
  return static_cast<size_t>(buckets + 1) * kHalfCount;
}

int bucket_of(int64_t v) {
  return 64 - __builtin_clzll(static_cast<uint64_t>(v | kSubBucketMask)) - (kHalfMagnitude + 1);
}

size_t index_of(int64_t v) {
  const int bucket = bucket_of(v);
  const int64_t sub = v >> bucket;
  return static_cast<size_t>(((static_cast<int64_t>(bucket) + 1) << kHalfMagnitude) + sub -
                             kHalfCount);
}

int64_t value_of(size_t index) {
  int bucket = static_cast<int>(index >> kHalfMagnitude) - 1;
  int64_t sub = static_cast<int64_t>(index & (kHalfCount - 1)) + kHalfCount;
  if (bucket < 0) {
    sub -= kHalfCount;
    bucket = 0;
  }
  return sub << bucket;
}

int64_t highest_equivalent(int64_t v) {
  const int bucket = bucket_of(v);
  const int64_t sub = v >> bucket;
  const int adjusted = sub > kSubBucketMask ? bucket + 1 : bucket;
  return (sub << bucket) + (int64_t{1} << adjusted) - 1;
}

}  // namespace

void LatencyHistogram::allocate() { counts_.assign(counts_length(), 0); }

int64_t LatencyHistogram::value_at_percentile(double percentile) const {
  if (total_ == 0) return 0;
  const double p = std::min(percentile, 100.0);
  const int64_t rank =
      std::max<int64_t>(1, static_cast<int64_t>(p / 100 * static_cast<double>(total_) + 0.5));
  int64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const int64_t value = value_of(i);
      return percentile == 0.0 ? value : highest_equivalent(value);
    }
  }
  return 0;
}

std::vector<std::pair<int64_t, int64_t>> LatencyHistogram::cumulative_usec() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (total_ == 0) return out;
  int64_t cumulative = 0, reported = 0;
  size_t i = 0;
  for (int64_t level = 1024; cumulative < total_; level *= 2) {
    const size_t last = std::min(index_of(std::min(level, kHighest)), counts_.size() - 1);
    for (; i <= last; ++i) cumulative += counts_[i];
    if (cumulative > reported) {
      out.emplace_back(highest_equivalent(value_of(last)) / 1000, cumulative);
      reported = cumulative;
    }
  }
  return out;
}

void LatencyHistogram::reset() {
  counts_.clear();
  total_ = 0;
}

}  // namespace ringkv::engine
