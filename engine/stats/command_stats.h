// Per-command and per-error counters, as Redis 7.0 keeps them for INFO commandstats,
// errorstats and latencystats and for LATENCY HISTOGRAM: calls, microseconds, rejected and
// failed calls and a latency histogram per command-table row, and a count per error code.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/command.h"
#include "engine/stats/latency_histogram.h"

namespace ringkv::engine {

struct CommandCounters {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;  // refused before running (NOAUTH, OOM, -BUSY, ...)
  uint64_t failed_calls = 0;    // ran and answered an error
  LatencyHistogram histogram;   // durations, while latency-tracking is on
};

class CommandStats {
 public:
  CommandStats();

  // The counters of a row (a command or a subcommand of the table).
  CommandCounters& of(const CommandSpec& spec) { return rows_[index(spec)]; }
  const CommandCounters& of(const CommandSpec& spec) const { return rows_[index(spec)]; }
  // One finished call that took `usec` microseconds.
  void record(const CommandSpec& spec, uint64_t usec, bool failed, bool track_latency) {
    CommandCounters& c = of(spec);
    c.calls++;
    c.usec += usec;
    if (failed) c.failed_calls++;
    // As Redis: microseconds, recorded in nanoseconds.
    if (track_latency) c.histogram.record(static_cast<int64_t>(usec) * 1000);
  }

  // INFO commandstats lines ("cmdstat_get:calls=1,usec=...") for rows that were called,
  // rejected or failed.
  std::string info_commandstats() const;
  // INFO latencystats lines ("latency_percentiles_usec_get:p50=...,p99=...") for rows with a
  // histogram.
  std::string info_latencystats(std::span<const double> percentiles) const;
  // LATENCY HISTOGRAM: a map of full command name → {calls, histogram_usec} for the named
  // commands (a container names each of its subcommands), or every row with a histogram.
  void write_histograms(protocol::ReplyWriter& reply,
                        std::span<const std::string_view> names) const;
  void reset();

 private:
  size_t index(const CommandSpec& spec) const {
    if (&spec >= first_ && &spec < first_ + top_level_) return static_cast<size_t>(&spec - first_);
    return subcommand_index_.at(&spec);
  }

  // The table's top-level rows (command_table() is not asked on every call: it is the hot path).
  const CommandSpec* first_ = nullptr;
  size_t top_level_ = 0;
  // Every row's index: top-level rows by their place in the table, then subcommands.
  std::vector<const CommandSpec*> specs_;
  std::vector<CommandCounters> rows_;
  std::unordered_map<const CommandSpec*, size_t> subcommand_index_;
};

// Error replies by code (the first word of the error: ERR, WRONGTYPE, NOAUTH...), as Redis's
// errorstats. Like Redis, at most 128 codes are tracked; later new ones are not.
class ErrorStats {
 public:
  // Counts one error reply; `text` starts with its code ("ERR syntax error").
  void count(std::string_view text);
  std::string info() const;
  void reset() { counts_.clear(); }

 private:
  std::map<std::string, uint64_t, std::less<>> counts_;
};

// The percentile's name as Redis prints it in latencystats: "%f" with trailing zeros (and a
// trailing point) removed ("50", "99.9").
std::string percentile_name(double p);

}  // namespace ringkv::engine
