// The declarative parameter table: one row per configuration key. TOML loading, command-line
// flags, --print-config and CONFIG GET/SET all walk these rows; none keeps a list of its own.
// Internal to conf/ (it exposes toml++ types); other modules use config.h.
#pragma once

#include <toml++/toml.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/options.h"

namespace ringkv::conf::detail {

// A reason a value was rejected, empty when it was accepted. Reasons from from_toml may start
// with a sub-key such as "[1].weight: " or ".FLUSHALL: ", which callers append to the key
// without a separator.
using Reason = std::string;

struct Row {
  std::string_view section;     // TOML table: "server", "cluster" or "log"
  std::string_view key;         // key in that table, Redis's spelling where Redis has one
  std::string_view flags;       // CLI11 option names, e.g. "--loglevel,--log-level"
  std::string_view redis_name;  // CONFIG GET/SET name; empty when CONFIG does not expose it
  bool runtime;                 // CONFIG SET may change it while the server runs
  // Redis itself refuses CONFIG SET of it, before looking at the value (logfile). Parameters
  // Redis can change but ringkv cannot (bind, port) are refused only once the value is valid.
  bool immutable_in_redis = false;
  // Redis refuses CONFIG SET of it as a protected config (dir, dbfilename), before the value.
  bool protected_in_redis = false;
  bool repeatable = false;       // the flag may be given several times, values accumulate
  std::string_view description;  // one line: --help, --print-config comments, CONFIG docs
  // Validates a TOML value and stores it; a rejection names the reason in ringkv's words.
  std::function<Reason(Config&, const toml::node&)> from_toml;
  // Same for a command-line value (a list is one comma-separated string).
  std::function<Reason(Config&, std::string_view)> from_text;
  // Same for a CONFIG SET value; a rejection is Redis's own reason text.
  std::function<Reason(Config&, std::string_view)> from_redis;
  // The value as CONFIG GET prints it.
  std::function<std::string(const Config&)> to_text;
  // The value as a TOML literal.
  std::function<std::string(const Config&)> to_toml;
};

// All rows, grouped by section in the order server, cluster, log.
const std::vector<Row>& rows();

// The TOML sections, in print order.
const std::vector<std::string_view>& sections();

// The row of latency-tracking-info-percentiles, a list of numbers (latency_percentiles.cpp).
Row latency_percentiles_row();

// A TOML basic string literal for `text`, quoted and escaped.
std::string toml_quote(std::string_view text);

}  // namespace ringkv::conf::detail
