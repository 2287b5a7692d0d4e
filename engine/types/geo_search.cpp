// The geo search over a sorted set (see geo_search.h).
#include "engine/types/geo_search.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ringkv::engine {

namespace {

// Appends the members whose scores lie in [align52(box), align52(box + 1)) and that fall inside
// the shape, stopping at `limit` when it is set.
void search_box(const ZSetObject& zset, geo::HashBits box, const geo::Shape& shape, size_t limit,
                std::vector<GeoPoint>& out) {
  const auto min = static_cast<double>(geo::align52(box));
  ++box.bits;
  const auto max = static_cast<double>(geo::align52(box));
  const ScoreRange range{.min = min, .max = max, .min_exclusive = false, .max_exclusive = true};
  const size_t lower = zset.score_lower_rank(range);
  const size_t upper = zset.score_upper_rank(range);
  if (upper <= lower) return;
  zset.visit_ranks(lower, upper - lower, false, [&](std::string_view member, double score) {
    if (limit != 0 && out.size() >= limit) return;
    const auto [lon, lat] = geo::decode_score(score);
    double dist = 0;
    if (!geo::within(shape, lon, lat, dist)) return;
    out.push_back(GeoPoint{lon, lat, dist, score, std::string(member)});
  });
}

// -1, 0 or 1 as Redis's sort_gp_asc (or its negation, sort_gp_desc).
int compare(const GeoPoint& a, const GeoPoint& b, bool asc) {
  const int c = a.dist > b.dist ? 1 : (a.dist == b.dist ? 0 : -1);
  return asc ? c : -c;
}

// Redis's pqsort (Bentley and McIlroy's quicksort, which skips the parts that lie wholly outside
// the ranks [0, last]) over points[base, base + n), swapping the same elements in the same order,
// so that points at equal distances come out as they do from Redis.
void partial_quicksort(std::vector<GeoPoint>& v, size_t base, size_t n, bool asc, size_t last) {
  auto cmp = [&](size_t i, size_t j) { return compare(v[i], v[j], asc); };
  auto swap = [&](size_t i, size_t j) { std::swap(v[i], v[j]); };
  auto vecswap = [&](size_t i, size_t j, size_t count) {
    for (size_t k = 0; k < count; ++k) swap(i + k, j + k);
  };
  auto med3 = [&](size_t a, size_t b, size_t c) {
    return cmp(a, b) < 0 ? (cmp(b, c) < 0 ? b : (cmp(a, c) < 0 ? c : a))
                         : (cmp(b, c) > 0 ? b : (cmp(a, c) < 0 ? a : c));
  };
  // Whether the wanted ranks [0, last] reach into [start, start + count).
  auto wanted = [&](size_t start, size_t count) {
    return !((0 < start && last < start) || (0 >= start + count && last >= start + count));
  };
  for (;;) {
    const size_t a = base;
    if (n < 7) {
      for (size_t pm = a + 1; pm < a + n; ++pm) {
        for (size_t pl = pm; pl > a && cmp(pl - 1, pl) > 0; --pl) swap(pl, pl - 1);
      }
      return;
    }
    size_t pm = a + n / 2;
    if (n > 7) {
      size_t pl = a;
      size_t pn = a + n - 1;
      if (n > 40) {
        const size_t d = n / 8;
        pl = med3(pl, pl + d, pl + 2 * d);
        pm = med3(pm - d, pm, pm + d);
        pn = med3(pn - 2 * d, pn - d, pn);
      }
      pm = med3(pl, pm, pn);
    }
    swap(a, pm);
    // Elements equal to the pivot gather at both ends ([a, pa) and (pd, a + n)) meanwhile.
    size_t pa = a + 1;
    size_t pb = a + 1;
    // pc and pd may pass below pb by one: kept as signed positions.
    auto pc = static_cast<std::ptrdiff_t>(a + n - 1);
    auto pd = pc;
    for (;;) {
      int c = 0;
      while (static_cast<std::ptrdiff_t>(pb) <= pc && (c = cmp(pb, a)) <= 0) {
        if (c == 0) swap(pa++, pb);
        ++pb;
      }
      while (static_cast<std::ptrdiff_t>(pb) <= pc && (c = cmp(static_cast<size_t>(pc), a)) >= 0) {
        if (c == 0) swap(static_cast<size_t>(pc), static_cast<size_t>(pd--));
        --pc;
      }
      if (static_cast<std::ptrdiff_t>(pb) > pc) break;
      swap(pb++, static_cast<size_t>(pc--));
    }
    const size_t pn = a + n;
    size_t r = std::min(pa - a, pb - pa);
    vecswap(a, pb - r, r);
    r = std::min(static_cast<size_t>(pd - pc), pn - static_cast<size_t>(pd) - 1);
    vecswap(pb, pn - r, r);
    if ((r = pb - pa) > 1 && wanted(a, r)) partial_quicksort(v, a, r, asc, last);
    r = static_cast<size_t>(pd - pc);
    if (r <= 1) return;
    base = pn - r;
    n = r;
    if (!wanted(base, n)) return;
  }
}

}  // namespace

std::vector<GeoPoint> geo_search(const ZSetObject& zset, const geo::Shape& shape, size_t limit) {
  const geo::SearchBoxes boxes = geo::search_boxes(shape);
  std::vector<GeoPoint> out;
  geo::HashBits all[9] = {boxes.center};
  std::copy(boxes.neighbors.begin(), boxes.neighbors.end(), all + 1);
  // Very large radii make neighbours coincide; a box equal to the one searched last is skipped
  // (Redis never compares with the centre box, index 0).
  size_t last = 0;
  for (size_t i = 0; i < 9; ++i) {
    if (all[i].zero()) continue;
    if (last != 0 && all[i].bits == all[last].bits && all[i].step == all[last].step) continue;
    if (limit != 0 && !out.empty() && out.size() >= limit) break;
    search_box(zset, all[i], shape, limit, out);
    last = i;
  }
  return out;
}

void geo_sort(std::vector<GeoPoint>& points, GeoOrder order, size_t returned) {
  if (order == GeoOrder::kNone || points.empty()) return;
  const bool asc = order == GeoOrder::kAsc;
  if (returned >= points.size()) {
    // glibc's qsort sorts arrays of this size with a merge sort: stable.
    std::stable_sort(points.begin(), points.end(), [asc](const GeoPoint& a, const GeoPoint& b) {
      return asc ? a.dist < b.dist : a.dist > b.dist;
    });
    return;
  }
  partial_quicksort(points, 0, points.size(), asc, returned - 1);
}

}  // namespace ringkv::engine
