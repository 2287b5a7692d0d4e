// LatencyMonitor: Redis 7.0's latency monitor. Events (command, fast-command, expire-cycle,
// aof-fsync-always...) that took at least latency-monitor-threshold ms are kept per event as
// the last 160 per-second samples (the worst of each second) and the all-time maximum, for
// LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ringkv::engine {

struct LatencySample {
  int64_t time = 0;      // unix seconds; 0 = unused slot
  uint32_t latency = 0;  // milliseconds
};

struct LatencySeries {
  static constexpr size_t kLength = 160;
  size_t next = 0;  // the slot the next sample goes to
  std::array<LatencySample, kLength> samples{};
  uint32_t max = 0;

  // The samples oldest first.
  std::vector<LatencySample> in_order() const;
  const LatencySample& latest() const { return samples[(next + kLength - 1) % kLength]; }
};

// What LATENCY DOCTOR's advice depends on.
struct LatencyDoctorSettings {
  int64_t threshold_ms = 0;  // latency-monitor-threshold
  int64_t slowlog_log_slower_than = 0;
  int64_t hz = 10;
  bool appendfsync_always = false;
  bool transparent_huge_pages = false;  // the process has anonymous huge pages
  int64_t now = 0;                      // unix seconds
};

class LatencyMonitor {
 public:
  // Adds a sample of `event` taking `ms` milliseconds at unix time `now`.
  void add(std::string_view event, int64_t ms, int64_t now);
  // Adds it when monitoring is on (threshold > 0) and ms reaches the threshold.
  void add_if_needed(std::string_view event, int64_t ms, int64_t threshold_ms, int64_t now) {
    if (threshold_ms > 0 && ms >= threshold_ms) add(event, ms, now);
  }
  const LatencySeries* find(std::string_view event) const;
  // Drops one event's data (case-insensitively), or every event's; returns how many went.
  size_t reset(std::optional<std::string_view> event);
  const std::vector<std::pair<std::string, LatencySeries>>& events() const { return events_; }

  // LATENCY DOCTOR's report.
  std::string doctor(const LatencyDoctorSettings& settings) const;
  // LATENCY GRAPH's text for one event (it must have samples).
  std::string graph(std::string_view event, int64_t now) const;

 private:
  std::vector<std::pair<std::string, LatencySeries>> events_;  // in order of first sample
};

}  // namespace ringkv::engine
