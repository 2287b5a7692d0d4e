// INFO commandstats / errorstats / latencystats and LATENCY HISTOGRAM in Redis 7.0's shapes.
#include "engine/stats/command_stats.h"

#include <cstdio>

#include "engine/commands/string_ops.h"

namespace ringkv::engine {
namespace {

// Redis tracks at most this many distinct error codes.
constexpr size_t kMaxErrorCodes = 128;

std::string format(const char* fmt, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, value);
  return buf;
}

// The rows `name` stands for in LATENCY HISTOGRAM: a command ("get", "config|get") or, for a
// container, each of its subcommands.
std::vector<const CommandSpec*> rows_named(std::string_view name) {
  std::vector<const CommandSpec*> out;
  const size_t bar = name.find('|');
  const CommandSpec* spec = find_command(name.substr(0, bar));
  if (spec == nullptr) return out;
  if (bar != std::string_view::npos) {
    const CommandSpec* sub = find_subcommand(*spec, name.substr(bar + 1));
    if (sub != nullptr) out.push_back(sub);
    return out;
  }
  if (spec->subcommands.empty()) {
    out.push_back(spec);
  } else {
    for (const CommandSpec& sub : spec->subcommands) out.push_back(&sub);
  }
  return out;
}

}  // namespace

std::string percentile_name(double p) {
  std::string s = format("%f", p);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

CommandStats::CommandStats() {
  const auto table = command_table();
  first_ = table.data();
  top_level_ = table.size();
  for (const CommandSpec& spec : table) specs_.push_back(&spec);
  for (const CommandSpec& spec : table) {
    for (const CommandSpec& sub : spec.subcommands) {
      subcommand_index_.emplace(&sub, specs_.size());
      specs_.push_back(&sub);
    }
  }
  rows_.resize(specs_.size());
}

std::string CommandStats::info_commandstats() const {
  std::string out;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const CommandCounters& c = rows_[i];
    if (c.calls == 0 && c.rejected_calls == 0 && c.failed_calls == 0) continue;
    const double per_call =
        c.calls == 0 ? 0.0 : static_cast<double>(c.usec) / static_cast<double>(c.calls);
    out += "cmdstat_" + command_fullname(*specs_[i]) + ":calls=" + std::to_string(c.calls) +
           ",usec=" + std::to_string(c.usec) + ",usec_per_call=" + format("%.2f", per_call) +
           ",rejected_calls=" + std::to_string(c.rejected_calls) +
           ",failed_calls=" + std::to_string(c.failed_calls) + "\r\n";
  }
  return out;
}

std::string CommandStats::info_latencystats(std::span<const double> percentiles) const {
  std::string out;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const LatencyHistogram& h = rows_[i].histogram;
    if (h.total() == 0) continue;
    out += "latency_percentiles_usec_" + command_fullname(*specs_[i]) + ":";
    for (size_t j = 0; j < percentiles.size(); ++j) {
      if (j > 0) out += ',';
      out += "p" + percentile_name(percentiles[j]) + "=" +
             format("%.3f", static_cast<double>(h.value_at_percentile(percentiles[j])) / 1000.0);
    }
    out += "\r\n";
  }
  return out;
}

void CommandStats::write_histograms(protocol::ReplyWriter& reply,
                                    std::span<const std::string_view> names) const {
  std::vector<const CommandSpec*> rows;
  if (names.empty()) {
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i].histogram.total() > 0) rows.push_back(specs_[i]);
    }
  } else {
    for (std::string_view name : names) {
      for (const CommandSpec* spec : rows_named(name)) {
        if (of(*spec).histogram.total() > 0) rows.push_back(spec);
      }
    }
  }
  reply.map(rows.size());
  for (const CommandSpec* spec : rows) {
    const LatencyHistogram& h = of(*spec).histogram;
    reply.bulk(command_fullname(*spec));
    reply.map(2);
    reply.bulk("calls");
    reply.integer(h.total());
    reply.bulk("histogram_usec");
    const auto buckets = h.cumulative_usec();
    reply.map(buckets.size());
    for (const auto& [usec, count] : buckets) {
      reply.integer(usec);
      reply.integer(count);
    }
  }
}

void CommandStats::reset() {
  for (CommandCounters& c : rows_) c = CommandCounters{};
}

void ErrorStats::count(std::string_view text) {
  const std::string_view code = text.substr(0, text.find(' '));
  auto it = counts_.find(code);
  if (it != counts_.end()) {
    it->second++;
  } else if (counts_.size() < kMaxErrorCodes) {
    counts_.emplace(std::string(code), 1);
  }
}

std::string ErrorStats::info() const {
  std::string out;
  for (const auto& [code, n] : counts_) {
    out += "errorstat_" + code + ":count=" + std::to_string(n) + "\r\n";
  }
  return out;
}

}  // namespace ringkv::engine
