// The typed row factories of the parameter table (integer, size, switch, enum, string): each gives
// a row its TOML, command-line and CONFIG SET parsers and its printers, so the rules for one kind
// of value live in one place. Internal to conf/ (params.cpp, params_tls.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/numbers.h"
#include "conf/params.h"

namespace ringkv::conf::detail {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int64_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr int64_t kUintMax = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxWeight = 1000;
constexpr int64_t kMaxTimeoutMs = 3600 * 1000;

// Reads or writes one field of one options struct inside a Config.
template <typename G, typename T>
struct Field {
  G Config::*group;
  T G::*member;

  T& operator()(Config& c) const { return (c.*group).*member; }
  const T& operator()(const Config& c) const { return (c.*group).*member; }
};

// The descriptive columns of a row, shared by every factory.
struct Head {
  std::string_view section;
  std::string_view key;
  std::string_view flags;
  std::string_view redis_name;
  bool runtime;
  std::string_view description;
};

inline Row make_row(const Head& h) {
  Row row;
  row.section = h.section;
  row.key = h.key;
  row.flags = h.flags;
  row.redis_name = h.redis_name;
  row.runtime = h.runtime;
  row.description = h.description;
  return row;
}

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline std::string quote_text(std::string_view text) { return "'" + std::string(text) + "'"; }

inline std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

inline std::string range_reason(int64_t min, int64_t max, std::string_view got) {
  return "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
         std::string(got);
}

inline std::string redis_range_reason(int64_t min, int64_t max) {
  return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) +
         " inclusive";
}

// An integer in [min, max]; accepted values are then clamped to [clamp_min, clamp_max], the way
// Redis accepts any hz and runs at 1..500.
template <typename G, typename T>
Row int_row(const Head& h, Field<G, T> field, int64_t min, int64_t max, int64_t clamp_min,
            int64_t clamp_max) {
  Row row = make_row(h);
  auto store = [=](Config& c, int64_t v) {
    field(c) = static_cast<T>(std::clamp(v, clamp_min, clamp_max));
  };
  row.from_toml = [=](Config& c, const toml::node& node) -> Reason {
    if (!node.is_integer()) return "expected an integer, got " + type_name(node);
    int64_t v = node.as_integer()->get();
    if (v < min || v > max) return range_reason(min, max, std::to_string(v));
    store(c, v);
    return {};
  };
  row.from_text = [=](Config& c, std::string_view text) -> Reason {
    auto v = common::parse_integer(text);
    if (!v) return "expected an integer, got " + quote_text(text);
    if (*v < min || *v > max) return range_reason(min, max, text);
    store(c, *v);
    return {};
  };
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    auto v = common::parse_integer(text);
    if (!v) return "argument couldn't be parsed into an integer";
    if (*v < min || *v > max) return redis_range_reason(min, max);
    store(c, *v);
    return {};
  };
  row.to_text = [=](const Config& c) { return std::to_string(field(c)); };
  row.to_toml = row.to_text;
  return row;
}

template <typename G, typename T>
Row int_row(const Head& h, Field<G, T> field, int64_t min, int64_t max) {
  return int_row(h, field, min, max, min, max);
}

// A byte count written as an integer or as a Redis memory value ("512mb", "1gb", "100k").
template <typename G>
Row size_row(const Head& h, Field<G, int64_t> field, int64_t min) {
  Row row = make_row(h);
  auto from_text = [=](Config& c, std::string_view text) -> Reason {
    auto v = common::parse_memory(text);
    if (!v) return "expected a size such as 512mb, got " + quote_text(text);
    if (*v < static_cast<uint64_t>(min) || *v > static_cast<uint64_t>(kInt64Max)) {
      return range_reason(min, kInt64Max, quote_text(text));
    }
    field(c) = static_cast<int64_t>(*v);
    return {};
  };
  row.from_text = from_text;
  row.from_toml = [=](Config& c, const toml::node& node) -> Reason {
    if (node.is_string()) return from_text(c, node.as_string()->get());
    if (!node.is_integer())
      return "expected a size (an integer or a string), got " + type_name(node);
    int64_t v = node.as_integer()->get();
    if (v < min) return range_reason(min, kInt64Max, std::to_string(v));
    field(c) = v;
    return {};
  };
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    auto v = common::parse_memory(text);
    if (!v) return "argument must be a memory value";
    // Redis stores the unsigned result in a signed config, so values past INT64_MAX wrap to
    // negative and fail the range check rather than the parse.
    if (*v < static_cast<uint64_t>(min) || *v > static_cast<uint64_t>(kInt64Max)) {
      return redis_range_reason(min, kInt64Max);
    }
    field(c) = static_cast<int64_t>(*v);
    return {};
  };
  row.to_text = [=](const Config& c) { return std::to_string(field(c)); };
  row.to_toml = row.to_text;
  return row;
}

// A switch: a TOML boolean (or "yes"/"no"), yes/no on the command line and in CONFIG SET, as
// Redis spells it (CONFIG GET prints yes or no).
template <typename G>
Row bool_row(const Head& h, Field<G, bool> field) {
  Row row = make_row(h);
  auto parse = [](std::string_view text) -> std::optional<bool> {
    std::string v = lower(text);
    if (v == "yes" || v == "true") return true;
    if (v == "no" || v == "false") return false;
    return std::nullopt;
  };
  row.from_text = [=](Config& c, std::string_view text) -> Reason {
    auto v = parse(text);
    if (!v) return "expected yes or no, got " + quote_text(text);
    field(c) = *v;
    return {};
  };
  row.from_toml = [=, from_text = row.from_text](Config& c, const toml::node& node) -> Reason {
    if (node.is_boolean()) {
      field(c) = node.as_boolean()->get();
      return {};
    }
    if (!node.is_string()) return "expected a boolean, got " + type_name(node);
    return from_text(c, node.as_string()->get());
  };
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    std::string v = lower(text);
    if (v != "yes" && v != "no") return "argument must be 'yes' or 'no'";
    field(c) = v == "yes";
    return {};
  };
  row.to_text = [=](const Config& c) { return std::string(field(c) ? "yes" : "no"); };
  row.to_toml = [=](const Config& c) { return std::string(field(c) ? "true" : "false"); };
  return row;
}

// One name out of a fixed list, case-insensitive; `aliases` map other accepted spellings (such
// as Redis's log level names) to a canonical name, which is what gets stored.
template <typename G>
Row enum_row(const Head& h, Field<G, std::string> field, std::vector<std::string_view> names,
             std::vector<std::pair<std::string_view, std::string_view>> aliases) {
  Row row = make_row(h);
  std::string list;
  for (std::string_view name : names) list += (list.empty() ? "" : ", ") + std::string(name);
  auto resolve = [=](std::string_view text) -> std::string {
    std::string wanted = lower(text);
    for (std::string_view name : names) {
      if (wanted == name) return std::string(name);
    }
    for (const auto& [alias, name] : aliases) {
      if (wanted == alias) return std::string(name);
    }
    return {};
  };
  row.from_text = [=](Config& c, std::string_view text) -> Reason {
    std::string name = resolve(text);
    if (name.empty()) return "must be one of " + list + ", got " + quote_text(text);
    field(c) = name;
    return {};
  };
  row.from_toml = [=, from_text = row.from_text](Config& c, const toml::node& node) -> Reason {
    if (!node.is_string()) return "expected a string, got " + type_name(node);
    return from_text(c, node.as_string()->get());
  };
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    std::string name = resolve(text);
    if (name.empty()) return "argument(s) must be one of the following: " + list;
    field(c) = name;
    return {};
  };
  row.to_text = [=](const Config& c) { return field(c); };
  row.to_toml = [=](const Config& c) { return toml_quote(field(c)); };
  return row;
}

// Free text; `check` (optional) rejects malformed values in files and flags. CONFIG SET does
// not validate: the string parameters ringkv exposes are immutable at run time, or take any
// text (requirepass).
template <typename G>
Row string_row(const Head& h, Field<G, std::string> field,
               std::function<Reason(std::string_view)> check) {
  Row row = make_row(h);
  row.from_text = [=](Config& c, std::string_view text) -> Reason {
    if (check) {
      Reason why = check(text);
      if (!why.empty()) return why;
    }
    field(c) = std::string(text);
    return {};
  };
  row.from_toml = [=, from_text = row.from_text](Config& c, const toml::node& node) -> Reason {
    if (!node.is_string()) return "expected a string, got " + type_name(node);
    return from_text(c, node.as_string()->get());
  };
  row.from_redis = [=](Config& c, std::string_view text) -> Reason {
    field(c) = std::string(text);
    return {};
  };
  row.to_text = [=](const Config& c) { return field(c); };
  row.to_toml = [=](const Config& c) { return toml_quote(field(c)); };
  return row;
}

inline Row immutable_in_redis(Row row) {
  row.immutable_in_redis = true;
  return row;
}

// A size whose smaller values are raised to `floor` rather than refused, as Redis raises
// repl-backlog-size to 16 KB: CONFIG GET then shows the raised value.
template <typename G>
Row raised_to(Row row, Field<G, int64_t> field, int64_t floor) {
  auto raise = [=](Config& c, Reason why) {
    if (why.empty() && field(c) < floor) field(c) = floor;
    return why;
  };
  row.from_text = [=, inner = row.from_text](Config& c, std::string_view text) {
    return raise(c, inner(c, text));
  };
  row.from_redis = [=, inner = row.from_redis](Config& c, std::string_view text) {
    return raise(c, inner(c, text));
  };
  row.from_toml = [=, inner = row.from_toml](Config& c, const toml::node& node) {
    return raise(c, inner(c, node));
  };
  return row;
}

// `text` without the spaces at its ends.
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// The cluster's addresses (params_peers.cpp): the peer list's row (host:port strings or
// {addr, weight} tables in TOML, "host:port[=weight],..." on the command line), and `self`'s
// check (empty, or host:port).
Row peers_row(const Head& h);
Reason check_self(std::string_view text);

// The [tls] rows (and tls-port's, which sits in [server]), in table order.
std::vector<Row> tls_rows();
Row tls_port_row();

}  // namespace ringkv::conf::detail
