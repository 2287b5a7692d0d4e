// GEORADIUS/GEOSEARCH's search over a sorted set holding geo scores, as a pure operation: the
// members inside a shape, found by scanning the score ranges of the boxes geo::search_boxes
// names, in Redis 7.0's order, then optionally sorted by distance.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/types/geohash.h"
#include "engine/types/zset_type.h"

namespace ringkv::engine {

// One member found by a search: its decoded position, its distance from the centre in meters,
// and its score.
struct GeoPoint {
  double lon = 0;
  double lat = 0;
  double dist = 0;
  double score = 0;
  std::string member;
};

// The members of `zset` inside `shape`, box after box (centre, N, S, E, W, NE, NW, SE, SW), each
// box in score order. With `limit` > 0 (COUNT ... ANY) the search stops once it found that many.
std::vector<GeoPoint> geo_search(const ZSetObject& zset, const geo::Shape& shape, size_t limit);

enum class GeoOrder : uint8_t { kNone, kAsc, kDesc };

// Orders `points` by distance as Redis does: a stable sort (glibc's merge sort) when all of them
// are returned, otherwise Redis's partial quicksort, which puts only the first `returned` in
// order (ties resolve as in Redis either way).
void geo_sort(std::vector<GeoPoint>& points, GeoOrder order, size_t returned);

}  // namespace ringkv::engine
