// Geo commands (GEOADD, GEOPOS, GEOHASH, GEODIST, GEORADIUS and GEOSEARCH with their variants):
// the family's command-table rows, and the handlers that code outside the family (the tests)
// calls directly. Geo sets are sorted sets whose scores are 52-bit geohashes (types/geohash.h).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> geo_commands();

void cmd_geoadd(CommandContext& ctx);
void cmd_geopos(CommandContext& ctx);
void cmd_geohash(CommandContext& ctx);
void cmd_geodist(CommandContext& ctx);
void cmd_georadius(CommandContext& ctx);
void cmd_georadius_ro(CommandContext& ctx);
void cmd_georadiusbymember(CommandContext& ctx);
void cmd_georadiusbymember_ro(CommandContext& ctx);
void cmd_geosearch(CommandContext& ctx);
void cmd_geosearchstore(CommandContext& ctx);

// GEORADIUS and GEORADIUSBYMEMBER's keys: the source and the STORE and STOREDIST keys, as Redis's
// key specs name them.
void georadius_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);
void georadiusbymember_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);

}  // namespace ringkv::engine
