// latency-tracking-info-percentiles: a list of percentiles (0-100), a TOML array of numbers and
// space-separated text on the command line and in CONFIG SET/GET ("50 99 99.9"), as Redis's.
// The one list-of-numbers parameter, so its row is built here rather than by a factory of
// params.cpp.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "conf/params.h"

namespace ringkv::conf::detail {

Row latency_percentiles_row() {
  Row row;
  row.section = "log";
  row.key = "latency-tracking-info-percentiles";
  row.flags = "--latency-tracking-info-percentiles";
  row.redis_name = "latency-tracking-info-percentiles";
  row.runtime = true;
  row.description = "Percentiles INFO latencystats reports";
  auto field = [](Config& c) -> std::vector<double>& {
    return c.log.latency_tracking_info_percentiles;
  };
  // Stores the list; "" when it is fine, else Redis's reason (each number checked in turn).
  auto parse = [=](Config& c, std::string_view text) -> std::string {
    std::vector<double> v;
    std::string s(text);
    for (char *p = s.data(), *end = nullptr; *p != '\0'; p = end + std::strspn(end, " ")) {
      v.push_back(std::strtod(p, &end));
      if (end == p || (*end != ' ' && *end != '\0')) {
        return "Invalid latency-tracking-info-percentiles parameters";
      }
      if (v.back() < 0 || v.back() > 100) {
        return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
      }
    }
    field(c) = std::move(v);
    return {};
  };
  auto join = [](const Config& c, std::string_view sep, bool toml) {
    std::string out;
    for (double v : c.log.latency_tracking_info_percentiles) {
      std::string s = std::to_string(v);
      s.erase(s.find_last_not_of('0') + 1);
      s += toml && s.back() == '.' ? "0" : "";
      if (s.back() == '.') s.pop_back();
      out += (out.empty() ? "" : std::string(sep)) + s;
    }
    return out;
  };
  row.from_text = [=](Config& c, std::string_view text) -> Reason { return parse(c, text); };
  row.from_redis = row.from_text;
  row.from_toml = [=](Config& c, const toml::node& node) -> Reason {
    if (!node.is_array()) return "expected an array of numbers between 0 and 100";
    std::string text;
    for (const toml::node& item : *node.as_array()) {
      text += (text.empty() ? "" : " ") + std::to_string(item.value<double>().value_or(-1));
    }
    return parse(c, text);
  };
  row.to_text = [=](const Config& c) { return join(c, " ", false); };
  row.to_toml = [=](const Config& c) { return "[" + join(c, ", ", true) + "]"; };
  return row;
}

}  // namespace ringkv::conf::detail
