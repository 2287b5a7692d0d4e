// Geo command handlers over the pure geohash arithmetic (types/geohash.h) and search
// (types/geo_search.h). Arguments are parsed in Redis 7.0.15's order, so the first error reported
// is the one Redis reports; options are compared as C strings (up to a NUL byte), as Redis's
// strcasecmp does.
#include "engine/commands/geo.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/geo_search.h"
#include "engine/types/geohash.h"
#include "engine/types/zset_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kBadUnit = "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr std::string_view kNeedRadius = "ERR need numeric radius";
constexpr std::string_view kNegativeRadius = "ERR radius cannot be negative";
constexpr std::string_view kNeedWidth = "ERR need numeric width";
constexpr std::string_view kNeedHeight = "ERR need numeric height";
constexpr std::string_view kNegativeBox = "ERR height or width cannot be negative";
constexpr std::string_view kCountPositive = "ERR COUNT must be > 0";
constexpr std::string_view kBadMember = "ERR could not decode requested zset member";
constexpr std::string_view kAnyNeedsCount = "ERR the ANY argument requires COUNT argument";

bool double_or_reply(CommandContext& ctx, std::string_view arg, double& out,
                     std::string_view error = err::kNotFloat) {
  if (parse_score(arg, out)) return true;
  ctx.reply.error(error);
  return false;
}

// A longitude and a latitude (Redis's extractLongLatOrReply).
bool lon_lat_or_reply(CommandContext& ctx, std::string_view lon_arg, std::string_view lat_arg,
                      double& lon, double& lat) {
  if (!double_or_reply(ctx, lon_arg, lon) || !double_or_reply(ctx, lat_arg, lat)) return false;
  if (geo::valid_lon_lat(lon, lat)) return true;
  char buf[1024];
  std::snprintf(buf, sizeof buf, "ERR invalid longitude,latitude pair %f,%f", lon, lat);
  ctx.reply.error(buf);
  return false;
}

// A unit's length in meters.
bool unit_or_reply(CommandContext& ctx, std::string_view arg, double& to_meters) {
  if (is(arg, "m")) {
    to_meters = 1;
  } else if (is(arg, "km")) {
    to_meters = 1000;
  } else if (is(arg, "ft")) {
    to_meters = 0.3048;
  } else if (is(arg, "mi")) {
    to_meters = 1609.34;
  } else {
    ctx.reply.error(kBadUnit);
    return false;
  }
  return true;
}

// "radius unit" into a circle.
bool radius_or_reply(CommandContext& ctx, std::span<const std::string_view> args,
                     geo::Shape& shape) {
  double radius = 0;
  if (!double_or_reply(ctx, args[0], radius, kNeedRadius)) return false;
  if (radius < 0) {
    ctx.reply.error(kNegativeRadius);
    return false;
  }
  shape.radius = radius;
  return unit_or_reply(ctx, args[1], shape.to_meters);
}

// "width height unit" into a box.
bool box_or_reply(CommandContext& ctx, std::span<const std::string_view> args, geo::Shape& shape) {
  double width = 0;
  double height = 0;
  if (!double_or_reply(ctx, args[0], width, kNeedWidth) ||
      !double_or_reply(ctx, args[1], height, kNeedHeight)) {
    return false;
  }
  if (height < 0 || width < 0) {
    ctx.reply.error(kNegativeBox);
    return false;
  }
  shape.width = width;
  shape.height = height;
  return unit_or_reply(ctx, args[2], shape.to_meters);
}

// A coordinate as Redis's addReplyHumanLongDouble writes it: a bulk string in RESP2, a double in
// RESP3, both with 17 decimals less trailing zeros.
void reply_coordinate(CommandContext& ctx, double d) {
  const std::string text = format_long_double(d);
  if (ctx.reply.version() == protocol::RespVersion::kResp3) {
    ctx.reply.raw("," + text + "\r\n");
  } else {
    ctx.reply.bulk(text);
  }
}

// A distance with 4 decimals, always a bulk string.
void reply_distance(CommandContext& ctx, double d) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, "%.4f", d);
  ctx.reply.bulk(std::string_view(buf, static_cast<size_t>(n)));
}

// The position of `member` in `zset`; false when it is not there.
bool member_position(const ZSetObject& zset, std::string_view member, geo::Shape& shape) {
  const auto score = zset.score(member);
  if (!score) return false;
  const auto [lon, lat] = geo::decode_score(*score);
  shape.lon = lon;
  shape.lat = lat;
  return true;
}

// Which command georadius_generic runs.
enum class Form : uint8_t {
  kRadius,       // GEORADIUS key lon lat radius unit [options]
  kRadiusRo,     // GEORADIUS_RO (no STORE)
  kByMember,     // GEORADIUSBYMEMBER key member radius unit [options]
  kByMemberRo,   // GEORADIUSBYMEMBER_RO
  kSearch,       // GEOSEARCH key FROM... BY... [options]
  kSearchStore,  // GEOSEARCHSTORE dest key FROM... BY... [options]
};

// What the options asked for.
struct SearchOptions {
  bool with_dist = false;
  bool with_hash = false;
  bool with_coord = false;
  bool any = false;
  bool store_dist = false;
  GeoOrder order = GeoOrder::kNone;
  int64_t count = 0;  // 0: unlimited
  std::string_view store_key;
  bool has_store = false;
};

// Stores the found points at `dest` as a sorted set (scores: geohashes, or distances with
// STOREDIST) and replies their count; an empty result deletes `dest`.
void store_result(CommandContext& ctx, std::string_view dest, const std::vector<GeoPoint>& points,
                  size_t returned, double to_meters, bool store_dist) {
  const bool existed = returned > 0 ? ctx.store.peek(dest) != nullptr : ctx.store.erase(dest);
  if (returned > 0) {
    auto zset = std::make_unique<ZSetObject>();
    for (size_t i = 0; i < returned; ++i) {
      const GeoPoint& p = points[i];
      zset->set(p.member, store_dist ? p.dist / to_meters : p.score);
    }
    ctx.store.put_object(dest, std::move(zset));
    ctx.key_ready(dest);
    const bool search = ctx.spec != nullptr && ctx.spec->name == "geosearchstore";
    ctx.notify(common::kNotifyZset, search ? "geosearchstore" : "georadiusstore", dest);
  } else if (existed) {
    ctx.notify(common::kNotifyGeneric, "del", dest);
  }
  if (existed || returned > 0) ctx.key_modified(dest);
  ctx.reply.integer(static_cast<int64_t>(returned));
}

// Replies the first `returned` points, each with the extras asked for (distance, hash, position).
void reply_points(CommandContext& ctx, const std::vector<GeoPoint>& points, size_t returned,
                  const SearchOptions& opts, double to_meters) {
  const size_t extras =
      (opts.with_dist ? 1 : 0) + (opts.with_coord ? 1 : 0) + (opts.with_hash ? 1 : 0);
  ctx.reply.array(returned);
  for (size_t i = 0; i < returned; ++i) {
    const GeoPoint& p = points[i];
    if (extras > 0) ctx.reply.array(extras + 1);
    ctx.reply.bulk(p.member);
    if (opts.with_dist) reply_distance(ctx, p.dist / to_meters);
    if (opts.with_hash) ctx.reply.integer(static_cast<int64_t>(p.score));
    if (opts.with_coord) {
      ctx.reply.array(2);
      reply_coordinate(ctx, p.lon);
      reply_coordinate(ctx, p.lat);
    }
  }
}

// Redis's georadiusGeneric: every radius and search form.
void georadius_generic(CommandContext& ctx, Form form) {
  const bool search = form == Form::kSearch || form == Form::kSearchStore;
  const bool no_store = form == Form::kRadiusRo || form == Form::kByMemberRo;
  const size_t src_index = form == Form::kSearchStore ? 2 : 1;
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[src_index], zset)) return;

  geo::Shape shape;
  size_t base = 0;
  SearchOptions opts;
  if (form == Form::kRadius || form == Form::kRadiusRo) {
    base = 6;
    if (!lon_lat_or_reply(ctx, ctx.argv[2], ctx.argv[3], shape.lon, shape.lat)) return;
    if (!radius_or_reply(ctx, ctx.argv.subspan(4, 2), shape)) return;
  } else if (!search) {
    base = 5;
    // Without the key the radius is not even parsed: the reply only depends on STORE.
    if (zset != nullptr) {
      if (!member_position(*zset, ctx.argv[2], shape)) {
        ctx.reply.error(kBadMember);
        return;
      }
      if (!radius_or_reply(ctx, ctx.argv.subspan(3, 2), shape)) return;
    }
  } else {
    base = src_index + 1;
    if (form == Form::kSearchStore) {
      opts.store_key = ctx.argv[1];
      opts.has_store = true;
    }
  }

  bool from_member = false;
  bool from_lonlat = false;
  bool by_radius = false;
  bool by_box = false;
  const size_t argc = ctx.argv.size();
  for (size_t i = base; i < argc; ++i) {
    const std::string_view arg = ctx.argv[i];
    const size_t left = argc - i - 1;
    if (is(arg, "withdist")) {
      opts.with_dist = true;
    } else if (is(arg, "withhash")) {
      opts.with_hash = true;
    } else if (is(arg, "withcoord")) {
      opts.with_coord = true;
    } else if (is(arg, "any")) {
      opts.any = true;
    } else if (is(arg, "asc")) {
      opts.order = GeoOrder::kAsc;
    } else if (is(arg, "desc")) {
      opts.order = GeoOrder::kDesc;
    } else if (is(arg, "count") && left >= 1) {
      if (!int64_or_reply(ctx, ctx.argv[i + 1], opts.count)) return;
      if (opts.count <= 0) {
        ctx.reply.error(kCountPositive);
        return;
      }
      ++i;
    } else if ((is(arg, "store") || is(arg, "storedist")) && left >= 1 && !no_store && !search) {
      opts.store_key = ctx.argv[i + 1];
      opts.has_store = true;
      opts.store_dist = is(arg, "storedist");
      ++i;
    } else if (is(arg, "storedist") && form == Form::kSearchStore) {
      opts.store_dist = true;
    } else if (is(arg, "frommember") && left >= 1 && search && !from_lonlat) {
      // Without the key the member cannot be looked up; parsing goes on to pick the reply.
      if (zset != nullptr && !member_position(*zset, ctx.argv[i + 1], shape)) {
        ctx.reply.error(kBadMember);
        return;
      }
      from_member = true;
      ++i;
    } else if (is(arg, "fromlonlat") && left >= 2 && search && !from_member) {
      if (!lon_lat_or_reply(ctx, ctx.argv[i + 1], ctx.argv[i + 2], shape.lon, shape.lat)) return;
      from_lonlat = true;
      i += 2;
    } else if (is(arg, "byradius") && left >= 2 && search && !by_box) {
      if (!radius_or_reply(ctx, ctx.argv.subspan(i + 1, 2), shape)) return;
      shape.kind = geo::Shape::Kind::kCircle;
      by_radius = true;
      i += 2;
    } else if (is(arg, "bybox") && left >= 3 && search && !by_radius) {
      if (!box_or_reply(ctx, ctx.argv.subspan(i + 1, 3), shape)) return;
      shape.kind = geo::Shape::Kind::kBox;
      by_box = true;
      i += 3;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }

  if (opts.has_store && (opts.with_dist || opts.with_hash || opts.with_coord)) {
    ctx.reply.error(form == Form::kSearchStore
                        ? "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and "
                          "WITHCOORD options"
                        : "ERR STORE option in GEORADIUS is not compatible with WITHDIST, "
                          "WITHHASH and WITHCOORD options");
    return;
  }
  const std::string name(common::c_string(ctx.argv[0]));
  if (search && !(from_member || from_lonlat)) {
    ctx.reply.error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + name);
    return;
  }
  if (search && !(by_radius || by_box)) {
    ctx.reply.error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + name);
    return;
  }
  if (opts.any && opts.count == 0) {
    ctx.reply.error(kAnyNeedsCount);
    return;
  }

  if (zset == nullptr) {
    if (opts.has_store) {
      if (ctx.store.erase(opts.store_key)) {
        ctx.key_modified(opts.store_key);
        ctx.notify(common::kNotifyGeneric, "del", opts.store_key);
      }
      ctx.reply.integer(0);
    } else {
      ctx.reply.array(0);
    }
    return;
  }
  // COUNT without an order returns the nearest ones (unless ANY asks for the first found).
  if (opts.count != 0 && opts.order == GeoOrder::kNone && !opts.any) opts.order = GeoOrder::kAsc;

  std::vector<GeoPoint> points =
      geo_search(*zset, shape, opts.any ? static_cast<size_t>(opts.count) : 0);
  if (points.empty() && !opts.has_store) {
    ctx.reply.array(0);
    return;
  }
  const size_t returned = opts.count == 0 || points.size() < static_cast<uint64_t>(opts.count)
                              ? points.size()
                              : static_cast<size_t>(opts.count);
  geo_sort(points, opts.order, returned);
  if (opts.has_store) {
    store_result(ctx, opts.store_key, points, returned, shape.to_meters, opts.store_dist);
  } else {
    reply_points(ctx, points, returned, opts, shape.to_meters);
  }
}

}  // namespace

namespace {

// The keys of GEORADIUS (options from argv[6]) and GEORADIUSBYMEMBER (from argv[5]) as Redis's
// key specs find them: the source, then the argument after the first STORE and after the first
// STOREDIST at or past `start` (a keyword with nothing after it names no key).
void radius_keys(std::span<const std::string_view> argv, size_t start,
                 std::vector<size_t>& positions) {
  if (argv.size() < 2) return;
  positions.push_back(1);
  for (std::string_view keyword : {"store", "storedist"}) {
    for (size_t i = start; i < argv.size(); ++i) {
      if (!is(argv[i], keyword)) continue;
      if (i + 1 < argv.size()) positions.push_back(i + 1);
      break;
    }
  }
  // A repeated STORE stores into the last one, which the specs miss; it is routed too, so that
  // the result never lands on a node that does not own it (COMMAND GETKEYS then names it too).
  size_t stored = 0;
  for (size_t i = 5; i < argv.size(); ++i) {
    if ((is(argv[i], "store") || is(argv[i], "storedist")) && i + 1 < argv.size()) {
      stored = i + 1;
      ++i;
    }
  }
  if (stored != 0 && std::find(positions.begin(), positions.end(), stored) == positions.end()) {
    positions.push_back(stored);
  }
}

}  // namespace

void georadius_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  radius_keys(argv, 6, positions);
}

void georadiusbymember_keys(std::span<const std::string_view> argv,
                            std::vector<size_t>& positions) {
  radius_keys(argv, 5, positions);
}

void cmd_geoadd(CommandContext& ctx) {
  ZAddFlags flags;
  size_t first = 2;
  for (; first < ctx.argv.size(); ++first) {
    const std::string_view opt = ctx.argv[first];
    if (is(opt, "nx")) {
      flags.nx = true;
    } else if (is(opt, "xx")) {
      flags.xx = true;
    } else if (is(opt, "ch")) {
      flags.ch = true;
    } else {
      break;
    }
  }
  const size_t args = ctx.argv.size() - first;
  if (args % 3 != 0 || args == 0 || (flags.nx && flags.xx)) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  std::vector<ScoredMember> pairs(args / 3);
  for (size_t i = 0; i < pairs.size(); ++i) {
    double lon = 0;
    double lat = 0;
    const size_t at = first + 3 * i;
    if (!lon_lat_or_reply(ctx, ctx.argv[at], ctx.argv[at + 1], lon, lat)) return;
    pairs[i] = {static_cast<double>(geo::encode_score(lon, lat)), ctx.argv[at + 2]};
  }
  const std::string_view key = ctx.argv[1];
  const Result<ZAddOutcome> done = zset_add(ctx.store, key, pairs, flags);
  if (!done) {
    ctx.reply.error(done.error());
    return;
  }
  if (done->added > 0) ctx.key_ready(key);
  if (done->added > 0 || done->updated > 0) {
    ctx.key_modified(key);
    ctx.notify(common::kNotifyZset, "zadd", key);
  }
  ctx.reply.integer(flags.ch ? done->added + done->updated : done->added);
}

void cmd_geopos(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    const auto score = zset == nullptr ? std::nullopt : zset->score(ctx.argv[j]);
    if (!score) {
      ctx.reply.null_array();
      continue;
    }
    const auto [lon, lat] = geo::decode_score(*score);
    ctx.reply.array(2);
    reply_coordinate(ctx, lon);
    reply_coordinate(ctx, lat);
  }
}

void cmd_geohash(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    const auto score = zset == nullptr ? std::nullopt : zset->score(ctx.argv[j]);
    if (score) {
      ctx.reply.bulk(geo::standard_geohash(*score));
    } else {
      ctx.reply.null();
    }
  }
}

void cmd_geodist(CommandContext& ctx) {
  double to_meters = 1;
  if (ctx.argv.size() == 5) {
    if (!unit_or_reply(ctx, ctx.argv[4], to_meters)) return;
  } else if (ctx.argv.size() > 5) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  const auto score1 = zset == nullptr ? std::nullopt : zset->score(ctx.argv[2]);
  const auto score2 = zset == nullptr ? std::nullopt : zset->score(ctx.argv[3]);
  if (!score1 || !score2) {
    ctx.reply.null();
    return;
  }
  const auto [lon1, lat1] = geo::decode_score(*score1);
  const auto [lon2, lat2] = geo::decode_score(*score2);
  reply_distance(ctx, geo::distance(lon1, lat1, lon2, lat2) / to_meters);
}

void cmd_georadius(CommandContext& ctx) { georadius_generic(ctx, Form::kRadius); }

void cmd_georadius_ro(CommandContext& ctx) { georadius_generic(ctx, Form::kRadiusRo); }

void cmd_georadiusbymember(CommandContext& ctx) { georadius_generic(ctx, Form::kByMember); }

void cmd_georadiusbymember_ro(CommandContext& ctx) { georadius_generic(ctx, Form::kByMemberRo); }

void cmd_geosearch(CommandContext& ctx) { georadius_generic(ctx, Form::kSearch); }

void cmd_geosearchstore(CommandContext& ctx) { georadius_generic(ctx, Form::kSearchStore); }

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kGeoCommands[] = {
    {.name = "geoadd",
     .arity = -5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_geoadd,
     .group = "geo",
     .since = "3.2.0",
     .summary =
         "Add one or more geospatial items in the geospatial index represented using a sorted set",
     .complexity =
         "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
     .syntax = "key<key> [condition: NX | XX]@6.2.0 [change:\"CH\"]@6.2.0 "
               "(longitude_latitude_member: longitude<double> latitude<double> member)...",
     .acl_categories = "write geo slow",
     .key_specs = "RW update|1|0|1|0",
     .history = "6.2.0|Added the `CH`, `NX` and `XX` options."},
    {.name = "geodist",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_geodist,
     .group = "geo",
     .since = "3.2.0",
     .summary = "Returns the distance between two members of a geospatial index",
     .complexity = "O(log(N))",
     .syntax = "key<key> member1 member2 [unit: M | KM | FT | MI]",
     .acl_categories = "read geo slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "geohash",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_geohash,
     .group = "geo",
     .since = "3.2.0",
     .summary = "Returns members of a geospatial index as standard geohash strings",
     .complexity = "O(log(N)) for each member requested, where N is the number of elements in the "
                   "sorted set.",
     .syntax = "key<key> member...",
     .acl_categories = "read geo slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "geopos",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_geopos,
     .group = "geo",
     .since = "3.2.0",
     .summary = "Returns longitude and latitude of members of a geospatial index",
     .complexity = "O(N) where N is the number of members requested.",
     .syntax = "key<key> member...",
     .acl_categories = "read geo slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "georadius",
     .arity = -6,
     .flags = kWrite | kDenyOom,
     .handler = cmd_georadius,
     .group = "geo",
     .since = "3.2.0",
     .summary = "Query a sorted set representing a geospatial index to fetch members matching a "
                "given maximum distance from a point",
     .complexity =
         "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
         "area delimited by center and radius and M is the number of items inside the index.",
     .syntax = "key<key> longitude<double> latitude<double> radius<double> (unit: M | KM | FT | "
               "MI) [WITHCOORD] [WITHDIST] [WITHHASH] [count: COUNT=count<integer> [ANY]@6.2.0] "
               "[order: ASC | DESC] [STORE=key<key:1>] [STOREDIST=key<key:2>]",
     .acl_categories = "write geo slow",
     .key_specs =
         "RO access|1|0|1|0;OW update|keyword:STORE:6|0|1|0;OW update|keyword:STOREDIST:6|0|1|0",
     .history =
         "6.2.0|Added the `ANY` option for `COUNT`.\n7.0.0|Added support for uppercase unit names.",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument",
     .find_keys = georadius_keys},
    {.name = "georadius_ro",
     .arity = -6,
     .flags = kReadonly,
     .handler = cmd_georadius_ro,
     .group = "geo",
     .since = "3.2.10",
     .summary = "A read-only variant for GEORADIUS",
     .complexity =
         "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
         "area delimited by center and radius and M is the number of items inside the index.",
     .syntax = "key<key> longitude<double> latitude<double> radius<double> (unit: M | KM | FT | "
               "MI) [WITHCOORD] [WITHDIST] [WITHHASH] [count: COUNT=count<integer> [ANY]@6.2.0] "
               "[order: ASC | DESC]",
     .acl_categories = "read geo slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "6.2.0|Added the `ANY` option for `COUNT`.",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`GEOSEARCH` with the `BYRADIUS` argument"},
    {.name = "georadiusbymember",
     .arity = -5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_georadiusbymember,
     .group = "geo",
     .since = "3.2.0",
     .summary = "Query a sorted set representing a geospatial index to fetch members matching a "
                "given maximum distance from a member",
     .complexity =
         "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
         "area delimited by center and radius and M is the number of items inside the index.",
     .syntax = "key<key> member radius<double> (unit: M | KM | FT | MI) [WITHCOORD] [WITHDIST] "
               "[WITHHASH] [count: COUNT=count<integer> [ANY]] [order: ASC | DESC] "
               "[STORE=key<key:1>] [STOREDIST=key<key:2>]",
     .acl_categories = "write geo slow",
     .key_specs =
         "RO access|1|0|1|0;OW update|keyword:STORE:5|0|1|0;OW update|keyword:STOREDIST:5|0|1|0",
     .history = "7.0.0|Added support for uppercase unit names.",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by =
         "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments",
     .find_keys = georadiusbymember_keys},
    {.name = "georadiusbymember_ro",
     .arity = -5,
     .flags = kReadonly,
     .handler = cmd_georadiusbymember_ro,
     .group = "geo",
     .since = "3.2.10",
     .summary = "A read-only variant for GEORADIUSBYMEMBER",
     .complexity =
         "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
         "area delimited by center and radius and M is the number of items inside the index.",
     .syntax = "key<key> member radius<double> (unit: M | KM | FT | MI) [WITHCOORD] [WITHDIST] "
               "[WITHHASH] [count: COUNT=count<integer> [ANY]] [order: ASC | DESC]",
     .acl_categories = "read geo slow",
     .key_specs = "RO access|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments"},
    {.name = "geosearch",
     .arity = -7,
     .flags = kReadonly,
     .handler = cmd_geosearch,
     .group = "geo",
     .since = "6.2.0",
     .summary = "Query a sorted set representing a geospatial index to fetch members inside an "
                "area of a box or a circle.",
     .complexity =
         "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
         "around the shape provided as the filter and M is the number of items inside the shape",
     .syntax =
         "key<key> (from: FROMMEMBER=member | (FROMLONLAT=longitude_latitude: longitude<double> "
         "latitude<double>)) (by: (circle: BYRADIUS=radius<double> (unit: M | KM | FT | MI)) | "
         "(box: BYBOX=width<double> height<double> (unit: M | KM | FT | MI))) [order: ASC | DESC] "
         "[count: COUNT=count<integer> [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]",
     .acl_categories = "read geo slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "7.0.0|Added support for uppercase unit names."},
    {.name = "geosearchstore",
     .arity = -8,
     .flags = kWrite | kDenyOom,
     .handler = cmd_geosearchstore,
     .group = "geo",
     .since = "6.2.0",
     .summary = "Query a sorted set representing a geospatial index to fetch members inside an "
                "area of a box or a circle, and store the result in another key.",
     .complexity =
         "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
         "around the shape provided as the filter and M is the number of items inside the shape",
     .syntax =
         "destination<key> source<key:1> (from: FROMMEMBER=member | "
         "(FROMLONLAT=longitude_latitude: "
         "longitude<double> latitude<double>)) (by: (circle: BYRADIUS=radius<double> (unit: M | KM "
         "| FT | MI)) | (box: BYBOX=width<double> height<double> (unit: M | KM | FT | MI))) "
         "[order: ASC | DESC] [count: COUNT=count<integer> [ANY]] [STOREDIST]",
     .acl_categories = "write geo slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|0|1|0",
     .history = "7.0.0|Added support for uppercase unit names."},
};

}  // namespace

std::span<const CommandSpec> geo_commands() { return kGeoCommands; }
}  // namespace ringkv::engine
