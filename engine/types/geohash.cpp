// Geohash arithmetic in Redis 7.0's operation order (see geohash.h): the bit interleaving, the
// box neighbours, the step estimate from a radius and the haversine distance.
#include "engine/types/geohash.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/numbers.h"

namespace ringkv::engine::geo {

namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr double kMercatorMax = 20037726.37;
constexpr Range kLongRange{kLongMin, kLongMax};
constexpr Range kLatRange{kLatMin, kLatMax};

double deg_rad(double ang) { return ang * kDegToRad; }
double rad_deg(double ang) { return ang / kDegToRad; }

// Spreads the bits of x over the even positions and those of y over the odd ones.
uint64_t interleave(uint32_t xlo, uint32_t ylo) {
  static constexpr uint64_t kB[] = {0x5555555555555555ULL, 0x3333333333333333ULL,
                                    0x0F0F0F0F0F0F0F0FULL, 0x00FF00FF00FF00FFULL,
                                    0x0000FFFF0000FFFFULL};
  static constexpr unsigned kS[] = {1, 2, 4, 8, 16};
  uint64_t x = xlo;
  uint64_t y = ylo;
  for (int i = 4; i >= 0; --i) {
    x = (x | (x << kS[i])) & kB[i];
    y = (y | (y << kS[i])) & kB[i];
  }
  return x | (y << 1);
}

// The inverse: even bits in the low 32 bits of the result, odd bits in the high 32.
uint64_t deinterleave(uint64_t interleaved) {
  static constexpr uint64_t kB[] = {0x5555555555555555ULL, 0x3333333333333333ULL,
                                    0x0F0F0F0F0F0F0F0FULL, 0x00FF00FF00FF00FFULL,
                                    0x0000FFFF0000FFFFULL, 0x00000000FFFFFFFFULL};
  static constexpr unsigned kS[] = {0, 1, 2, 4, 8, 16};
  uint64_t x = interleaved;
  uint64_t y = interleaved >> 1;
  for (int i = 0; i < 6; ++i) {
    x = (x | (x >> kS[i])) & kB[i];
    y = (y | (y >> kS[i])) & kB[i];
  }
  return x | (y << 32);
}

// The area of a hash; false for a zero hash.
bool decode(Range lon_range, Range lat_range, HashBits hash, Area& area) {
  if (hash.zero()) return false;
  const uint64_t separated = deinterleave(hash.bits);
  const double lat_scale = lat_range.max - lat_range.min;
  const double lon_scale = lon_range.max - lon_range.min;
  const auto ilat = static_cast<uint32_t>(separated);
  const auto ilon = static_cast<uint32_t>(separated >> 32);
  const auto cells = static_cast<double>(1ULL << hash.step);
  area.latitude.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
  area.latitude.max = lat_range.min + ((ilat + 1) * 1.0 / cells) * lat_scale;
  area.longitude.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
  area.longitude.max = lon_range.min + ((ilon + 1) * 1.0 / cells) * lon_scale;
  return true;
}

// Moves a hash one box east (d > 0) or west along the longitude bits (the odd ones).
void move_x(HashBits& hash, int d) {
  uint64_t x = hash.bits & 0xaaaaaaaaaaaaaaaaULL;
  const uint64_t y = hash.bits & 0x5555555555555555ULL;
  const uint64_t zz = 0x5555555555555555ULL >> (64 - hash.step * 2);
  if (d > 0) {
    x = x + (zz + 1);
  } else {
    x = x | zz;
    x = x - (zz + 1);
  }
  x &= (0xaaaaaaaaaaaaaaaaULL >> (64 - hash.step * 2));
  hash.bits = x | y;
}

// Moves a hash one box north (d > 0) or south along the latitude bits (the even ones).
void move_y(HashBits& hash, int d) {
  const uint64_t x = hash.bits & 0xaaaaaaaaaaaaaaaaULL;
  uint64_t y = hash.bits & 0x5555555555555555ULL;
  const uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> (64 - hash.step * 2);
  if (d > 0) {
    y = y + (zz + 1);
  } else {
    y = y | zz;
    y = y - (zz + 1);
  }
  y &= (0x5555555555555555ULL >> (64 - hash.step * 2));
  hash.bits = x | y;
}

HashBits moved(HashBits hash, int dx, int dy) {
  if (dx != 0) move_x(hash, dx);
  if (dy != 0) move_y(hash, dy);
  return hash;
}

// The step whose boxes are about as large as the radius (Redis's geohashEstimateStepsByRadius).
uint8_t estimate_step(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;
  // Boxes narrow towards the poles.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return static_cast<uint8_t>(step);
}

// The distance along a meridian (Redis's geohashGetLatDistance).
double lat_distance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(deg_rad(lat2) - deg_rad(lat1));
}

}  // namespace

bool valid_lon_lat(double lon, double lat) {
  return !(lon < kLongMin || lon > kLongMax || lat < kLatMin || lat > kLatMax);
}

bool encode(Range lon_range, Range lat_range, double lon, double lat, uint8_t step, HashBits& out) {
  if (step > 32 || step == 0) return false;
  if (lon > kLongMax || lon < kLongMin || lat > kLatMax || lat < kLatMin) return false;
  out.bits = 0;
  out.step = step;
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  out.bits = interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  return true;
}

uint64_t align52(HashBits hash) { return hash.bits << (52 - hash.step * 2); }

uint64_t encode_score(double lon, double lat) {
  HashBits hash;
  encode(kLongRange, kLatRange, lon, lat, kStepMax, hash);
  return align52(hash);
}

uint64_t score_bits(double score) { return common::x86_to_uint64(score); }

std::array<double, 2> decode_score(double score) {
  Area area;
  decode(kLongRange, kLatRange, HashBits{score_bits(score), kStepMax}, area);
  double lon = (area.longitude.min + area.longitude.max) / 2;
  if (lon > kLongMax) lon = kLongMax;
  if (lon < kLongMin) lon = kLongMin;
  double lat = (area.latitude.min + area.latitude.max) / 2;
  if (lat > kLatMax) lat = kLatMax;
  if (lat < kLatMin) lat = kLatMin;
  return {lon, lat};
}

std::string standard_geohash(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  const auto [lon, lat] = decode_score(score);
  HashBits hash;
  encode(Range{-180, 180}, Range{-90, 90}, lon, lat, 26, hash);
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(hash.bits >> (52 - ((i + 1) * 5))) & 0x1f];
  return out;
}

double distance(double lon1, double lat1, double lon2, double lat2) {
  const double lon1r = deg_rad(lon1);
  const double lon2r = deg_rad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  if (v == 0.0) return lat_distance(lat1, lat2);
  const double lat1r = deg_rad(lat1);
  const double lat2r = deg_rad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool within(const Shape& shape, double lon, double lat, double& dist) {
  if (shape.kind == Shape::Kind::kCircle) {
    dist = distance(shape.lon, shape.lat, lon, lat);
    return !(dist > shape.radius * shape.to_meters);
  }
  const double width_m = shape.width * shape.to_meters;
  const double height_m = shape.height * shape.to_meters;
  // The latitude distance is the cheaper one, so it is checked first.
  if (lat_distance(lat, shape.lat) > height_m / 2) return false;
  if (distance(lon, lat, shape.lon, lat) > width_m / 2) return false;
  dist = distance(shape.lon, shape.lat, lon, lat);
  return true;
}

SearchBoxes search_boxes(const Shape& shape) {
  const double lon = shape.lon;
  const double lat = shape.lat;
  // The bounding box of the shape; meridians converge, so its longitude extent is taken at the
  // latitude edge nearer the pole.
  const bool circle = shape.kind == Shape::Kind::kCircle;
  const double height = shape.to_meters * (circle ? shape.radius : shape.height / 2);
  const double width = shape.to_meters * (circle ? shape.radius : shape.width / 2);
  const double lat_delta = rad_deg(height / kEarthRadiusMeters);
  const double lon_delta_top =
      rad_deg(width / kEarthRadiusMeters / std::cos(deg_rad(lat + lat_delta)));
  const double lon_delta_bottom =
      rad_deg(width / kEarthRadiusMeters / std::cos(deg_rad(lat - lat_delta)));
  const bool southern = lat < 0;
  const double min_lon = southern ? lon - lon_delta_bottom : lon - lon_delta_top;
  const double max_lon = southern ? lon + lon_delta_bottom : lon + lon_delta_top;
  const double min_lat = lat - lat_delta;
  const double max_lat = lat + lat_delta;

  double radius_meters = circle ? shape.radius
                                : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                            (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.to_meters;
  uint8_t step = estimate_step(radius_meters, lat);

  SearchBoxes out;
  auto fill = [&] {
    encode(kLongRange, kLatRange, lon, lat, step, out.center);
    const HashBits c = out.center;
    out.neighbors = {moved(c, 0, 1), moved(c, 0, -1), moved(c, 1, 0),  moved(c, -1, 0),
                     moved(c, 1, 1), moved(c, -1, 1), moved(c, 1, -1), moved(c, -1, -1)};
    decode(kLongRange, kLatRange, out.center, out.area);
  };
  fill();
  enum { kN, kS, kE, kW, kNE, kNW, kSE, kSW };
  // When the shape reaches past the neighbours (the centre lies near its box's edge), one step
  // coarser boxes are needed.
  Area north, south, east, west;
  decode(kLongRange, kLatRange, out.neighbors[kN], north);
  decode(kLongRange, kLatRange, out.neighbors[kS], south);
  decode(kLongRange, kLatRange, out.neighbors[kE], east);
  decode(kLongRange, kLatRange, out.neighbors[kW], west);
  const bool decrease = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                        east.longitude.max < max_lon || west.longitude.min > min_lon;
  if (step > 1 && decrease) {
    step--;
    fill();
  }
  // Neighbours on a side the shape does not reach are not searched.
  if (step >= 2) {
    auto clear = [&](std::initializer_list<int> which) {
      for (int i : which) out.neighbors[i] = HashBits{};
    };
    if (out.area.latitude.min < min_lat) clear({kS, kSW, kSE});
    if (out.area.latitude.max > max_lat) clear({kN, kNE, kNW});
    if (out.area.longitude.min < min_lon) clear({kW, kSW, kNW});
    if (out.area.longitude.max > max_lon) clear({kE, kSE, kNE});
  }
  return out;
}

}  // namespace ringkv::engine::geo
