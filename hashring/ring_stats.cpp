// Ring statistics: arc shares, probe-aware effective shares, key distribution and movement.
#include "hashring/ring_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <string_view>

namespace ringkv::hashring {

namespace {

constexpr double kRingSize = 4294967296.0;  // 2^32

// Length of each virtual node's arc as a fraction of the ring, indexed like ring.points().
std::vector<double> arc_lengths(const HashRing& ring) {
  const auto points = ring.points();
  std::vector<double> lengths(points.size(), 0.0);
  if (points.empty()) return lengths;
  // One distinct point (a single virtual node, or all colliding): lookups always land on the
  // first virtual node, which therefore owns the whole ring.
  if (points.front().point == points.back().point) {
    lengths[0] = 1.0;
    return lengths;
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const uint32_t previous = points[i == 0 ? points.size() - 1 : i - 1].point;
    // Unsigned subtraction wraps the first arc around 2^32; equal points give an empty arc.
    lengths[i] = static_cast<uint32_t>(points[i].point - previous) / kRingSize;
  }
  return lengths;
}

std::vector<double> per_node(const HashRing& ring, const std::vector<double>& per_point) {
  std::vector<double> shares(ring.size(), 0.0);
  const auto points = ring.points();
  for (size_t i = 0; i < points.size(); ++i) shares[points[i].node] += per_point[i];
  return shares;
}

}  // namespace

std::vector<double> arc_shares(const HashRing& ring) { return per_node(ring, arc_lengths(ring)); }

std::vector<double> effective_shares(const HashRing& ring) {
  const std::vector<double> lengths = arc_lengths(ring);
  const double k = ring.scheme().probes;
  if (ring.scheme().probes == 1 || lengths.empty()) return per_node(ring, lengths);
  // A probe's clockwise distance D to the next virtual node has survival G(t) = Σ max(a_j − t, 0).
  // The closest of k probes lies in arc j with probability ∫₀^{a_j} k·G(t)^(k−1) dt. Between
  // consecutive sorted arc lengths G is linear (S − c·t), so the integral has a closed form and
  // one pass over the arcs in increasing length accumulates it.
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  std::vector<double> win(lengths.size());
  double sum = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  double count = static_cast<double>(lengths.size());
  double t = 0;
  double integral = 0;
  for (const size_t j : order) {
    const double a = lengths[j];
    if (a > t) {
      integral +=
          (std::pow(sum - count * t, k) - std::pow(std::max(sum - count * a, 0.0), k)) / count;
      t = a;
    }
    win[j] = integral;
    sum -= a;
    count -= 1;
  }
  return per_node(ring, win);
}

Balance balance_of(const HashRing& ring, std::span<const double> values) {
  assert(values.size() == ring.size());
  Balance b;
  if (values.empty()) return b;
  const double total = std::accumulate(values.begin(), values.end(), 0.0);
  b.mean = total / static_cast<double>(values.size());
  double squares = 0;
  for (const double v : values) squares += (v - b.mean) * (v - b.mean);
  b.stddev = std::sqrt(squares / static_cast<double>(values.size()));
  double total_weight = 0;
  for (const Member& m : ring.nodes()) total_weight += m.weight;
  for (size_t n = 0; n < values.size(); ++n) {
    const double fair = total * ring.nodes()[n].weight / total_weight;
    const double ratio = fair > 0 ? values[n] / fair : 0;
    if (b.busiest == HashRing::kNoNode || ratio > b.busiest_over_mean) {
      b.busiest_over_mean = ratio;
      b.busiest = n;
    }
  }
  return b;
}

std::vector<std::string> sample_keys(size_t count) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (size_t i = 0; i < count; ++i) keys.push_back("key:" + std::to_string(i));
  return keys;
}

std::vector<uint64_t> keys_per_node(const HashRing& ring, std::span<const std::string> keys) {
  std::vector<uint64_t> counts(ring.size(), 0);
  if (ring.empty()) return counts;
  for (const std::string& key : keys) ++counts[ring.owner_index(key)];
  return counts;
}

uint64_t Movement::moved_not_involving(std::string_view node) const {
  uint64_t n = 0;
  for (const Transfer& t : transfers) {
    if (t.from != node && t.to != node) n += t.keys;
  }
  return n;
}

Movement movement(const HashRing& before, const HashRing& after,
                  std::span<const std::string> keys) {
  assert(!before.empty() && !after.empty());
  // Node counts are small, so a dense from × to matrix is the simplest exact tally.
  const size_t width = after.size();
  std::vector<uint64_t> matrix(before.size() * width, 0);
  for (const std::string& key : keys)
    ++matrix[before.owner_index(key) * width + after.owner_index(key)];
  Movement m;
  m.total = keys.size();
  for (size_t from = 0; from < before.size(); ++from) {
    for (size_t to = 0; to < width; ++to) {
      const uint64_t n = matrix[from * width + to];
      const std::string& a = before.nodes()[from].address;
      const std::string& b = after.nodes()[to].address;
      if (n == 0 || a == b) continue;
      m.moved += n;
      m.transfers.push_back(Transfer{a, b, n});
    }
  }
  return m;
}

}  // namespace ringkv::hashring
