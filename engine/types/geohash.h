// Geohash arithmetic as Redis 7.0 does it for its geo commands: a longitude/latitude pair becomes
// a 52-bit interleaved hash (26 steps per axis over [-180, 180] x [-85.05112878, 85.05112878])
// stored as a sorted-set score; a search covers the hash box of the centre plus its 8 neighbours
// at a step chosen from the radius; distances are haversine distances on Redis's earth radius.
// Every computation follows Redis's operation order so the results agree to the last bit.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ringkv::engine::geo {

inline constexpr double kLongMin = -180;
inline constexpr double kLongMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr uint8_t kStepMax = 26;  // 26 steps per axis: 52-bit scores
inline constexpr double kEarthRadiusMeters = 6372797.560856;

// A hash of `step` bits per axis (2 * step bits in all); step 0 marks "no box".
struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool zero() const { return bits == 0 && step == 0; }
};

// A closed interval of one coordinate.
struct Range {
  double min = 0;
  double max = 0;
};

// The area a hash covers.
struct Area {
  Range longitude;
  Range latitude;
};

// The box of the search centre and its neighbours, in the order Redis searches them; neighbours
// that cannot hold a result are zero.
struct SearchBoxes {
  HashBits center;
  std::array<HashBits, 8> neighbors;  // N, S, E, W, NE, NW, SE, SW
  Area area;
};

// What a search covers: a circle of `radius` or a `width` x `height` box around `center`, in
// the unit whose length in meters is `to_meters`.
struct Shape {
  enum class Kind : uint8_t { kCircle, kBox };
  Kind kind = Kind::kCircle;
  double lon = 0;
  double lat = 0;
  double radius = 0;
  double width = 0;
  double height = 0;
  double to_meters = 1;
};

// Whether a longitude/latitude pair may be stored (GEOADD's range check).
bool valid_lon_lat(double lon, double lat);

// Encodes a point at `step` bits per axis over the given ranges; false when it lies outside them
// or outside the storable range.
bool encode(Range lon_range, Range lat_range, double lon, double lat, uint8_t step, HashBits& out);

// GEOADD's score: the point at full precision, aligned to 52 bits.
uint64_t encode_score(double lon, double lat);

// A hash shifted to fill 52 bits (the score of its box's first cell).
uint64_t align52(HashBits hash);

// The score as the 64-bit integer C's (uint64_t) cast gives on x86-64, which Redis applies to
// scores of any value (a member added by ZADD need not hold a geo score).
uint64_t score_bits(double score);

// The centre of the full-precision box of a score, clamped to the storable range, as GEOPOS
// reports it: {longitude, latitude}.
std::array<double, 2> decode_score(double score);

// GEOHASH's 11-character standard geohash of a score (re-encoded over [-90, 90] latitudes).
std::string standard_geohash(double score);

// The haversine distance in meters between two points (Redis's geohashGetDistance).
double distance(double lon1, double lat1, double lon2, double lat2);

// Whether the point (lon, lat) lies inside `shape`; sets `dist` (meters) from the centre when so.
bool within(const Shape& shape, double lon, double lat, double& dist);

// The boxes a search for `shape` must scan (Redis's geohashCalculateAreasByShapeWGS84).
SearchBoxes search_boxes(const Shape& shape);

}  // namespace ringkv::engine::geo
