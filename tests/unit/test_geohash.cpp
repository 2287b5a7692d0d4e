// Geohash arithmetic (geohash.h) and the geo search (geo_search.h), with expected values taken
// from redis-server 7.0.15 (GEOADD scores, GEOPOS and GEOHASH replies, GEODIST and GEORADIUS
// distances).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/commands/string_ops.h"
#include "engine/types/geo_search.h"
#include "engine/types/geohash.h"
#include "engine/types/zset_type.h"

using namespace ringkv::engine;

namespace {

std::string meters4(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", d);
  return buf;
}

}  // namespace

TEST_CASE("GEOADD scores are Redis's 52-bit interleaved hashes") {
  CHECK(geo::encode_score(13.361389, 38.115556) == 3479099956230698ULL);
  CHECK(geo::encode_score(15.087269, 37.502669) == 3479447370796909ULL);
  // The top edge of the latitude range sets a bit past the 52.
  CHECK(geo::encode_score(180, 85.05112878) == 13510798882111488ULL);
  CHECK(geo::encode_score(-180, -85.05112878) == 0);
  CHECK(geo::valid_lon_lat(180, -85.05112878));
  CHECK_FALSE(geo::valid_lon_lat(180.0000001, 0));
  CHECK_FALSE(geo::valid_lon_lat(0, 85.05112879));
}

TEST_CASE("scores decode to the centre of their cell, clamped, as GEOPOS prints them") {
  auto [lon, lat] = geo::decode_score(3479099956230698.0);
  CHECK(format_long_double(lon) == "13.36138933897018433");
  CHECK(format_long_double(lat) == "38.11555639549629859");
  auto [clon, clat] = geo::decode_score(13510798882111488.0);
  CHECK(format_long_double(clon) == "180");
  CHECK(format_long_double(clat) == "85.0511287799999991");
  // Scores that are not geohashes convert as x86's (uint64_t) cast does.
  CHECK(geo::score_bits(-1) == UINT64_MAX);
  CHECK(geo::score_bits(1e300) == 0);
  CHECK(geo::score_bits(1.5) == 1);
  auto [flon, flat] = geo::decode_score(1.5);
  CHECK(format_long_double(flon) == "-179.99999731779098511");
  CHECK(format_long_double(flat) == "-85.05112497791824921");
}

TEST_CASE("GEOHASH re-encodes over the standard latitude range") {
  CHECK(geo::standard_geohash(3479099956230698.0) == "sqc8b49rny0");
  CHECK(geo::standard_geohash(3479447370796909.0) == "sqdtr74hyu0");
  CHECK(geo::standard_geohash(13510798882111488.0) == "bp05b5048p0");
  CHECK(geo::standard_geohash(0) == "00bh0hbj200");
}

TEST_CASE("distances are haversine on Redis's earth radius") {
  const auto [lon1, lat1] = geo::decode_score(3479099956230698.0);
  const auto [lon2, lat2] = geo::decode_score(3479447370796909.0);
  CHECK(meters4(geo::distance(lon1, lat1, lon2, lat2) / 1000) == "166.2742");
  CHECK(meters4(geo::distance(15, 37, lon1, lat1) / 1000) == "190.4424");
  CHECK(geo::distance(lon1, lat1, lon1, lat1) == 0);
}

TEST_CASE("a search finds the members inside the shape and orders them by distance") {
  ZSetObject zset;
  zset.set("Palermo", 3479099956230698.0);
  zset.set("Catania", 3479447370796909.0);
  zset.set("far", static_cast<double>(geo::encode_score(-70, -30)));
  geo::Shape circle{
      .kind = geo::Shape::Kind::kCircle, .lon = 15, .lat = 37, .radius = 200, .to_meters = 1000};
  auto found = geo_search(zset, circle, 0);
  REQUIRE(found.size() == 2);
  geo_sort(found, GeoOrder::kAsc, found.size());
  CHECK(found[0].member == "Catania");
  CHECK(meters4(found[0].dist / 1000) == "56.4413");
  CHECK(found[1].member == "Palermo");
  geo_sort(found, GeoOrder::kDesc, 1);
  CHECK(found[0].member == "Palermo");

  geo::Shape box{.kind = geo::Shape::Kind::kBox,
                 .lon = 15,
                 .lat = 37,
                 .width = 400,
                 .height = 400,
                 .to_meters = 1000};
  CHECK(geo_search(zset, box, 0).size() == 2);
  box.height = 50;  // Palermo lies 124 km north of the centre, Catania 56 km.
  CHECK(geo_search(zset, box, 0).empty());
  box.height = 120;
  auto one = geo_search(zset, box, 0);
  REQUIRE(one.size() == 1);
  CHECK(one[0].member == "Catania");
  // ANY stops at the limit.
  circle.radius = 20000;
  CHECK(geo_search(zset, circle, 0).size() == 3);
  CHECK(geo_search(zset, circle, 1).size() == 1);
}
