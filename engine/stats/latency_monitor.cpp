// The latency monitor's samples, LATENCY DOCTOR's report and LATENCY GRAPH's sparkline, with
// Redis 7.0's texts and drawing rules.
#include "engine/stats/latency_monitor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "engine/commands/string_ops.h"

namespace ringkv::engine {
namespace {

constexpr int kGraphColumns = 80;
constexpr int kGraphRows = 4;
constexpr std::string_view kGraphFill = "_o#";  // the heights within one row, lowest first

struct EventStats {
  int64_t samples = 0;
  int64_t avg = 0;
  int64_t mad = 0;  // mean absolute deviation from the average
  int64_t period = 0;
};

EventStats analyze(const LatencySeries& s, int64_t now) {
  EventStats st;
  uint64_t sum = 0;
  int64_t oldest = 0;
  for (const LatencySample& x : s.samples) {
    if (x.time == 0) continue;
    st.samples++;
    sum += x.latency;
    if (oldest == 0 || x.time < oldest) oldest = x.time;
  }
  if (st.samples == 0) return st;
  st.avg = static_cast<int64_t>(sum / static_cast<uint64_t>(st.samples));
  st.period = std::max<int64_t>(1, now - oldest);
  uint64_t deviation = 0;
  for (const LatencySample& x : s.samples) {
    if (x.time != 0) deviation += static_cast<uint64_t>(std::llabs(st.avg - x.latency));
  }
  st.mad = static_cast<int64_t>(deviation / static_cast<uint64_t>(st.samples));
  return st;
}

std::string printf_string(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// How long ago, as LATENCY GRAPH labels a sample: 12s, 5m, 3h, 2d.
std::string age_label(int64_t elapsed) {
  if (elapsed < 60) return std::to_string(elapsed) + "s";
  if (elapsed < 3600) return std::to_string(elapsed / 60) + "m";
  if (elapsed < 86400) return std::to_string(elapsed / 3600) + "h";
  return std::to_string(elapsed / 86400) + "d";
}

// One block of at most kGraphColumns samples: kGraphRows rows of bars (each row covers three
// heights, '|' filling the rows below a bar's top), a blank line, then each label written
// downwards under its sample.
void render_block(std::string& out, const std::vector<std::pair<uint32_t, std::string>>& samples,
                  size_t begin, size_t len, uint32_t low, uint32_t high) {
  const int steps = static_cast<int>(kGraphFill.size()) * kGraphRows;
  const double range = high == low ? 1.0 : static_cast<double>(high - low);
  for (int row = 0;; ++row) {
    std::string line(len, ' ');
    bool any = false;
    for (size_t j = 0; j < len; ++j) {
      const auto& [value, label] = samples[begin + j];
      if (row < kGraphRows) {
        any = true;
        int step = static_cast<int>(static_cast<double>(value - low) * steps / range);
        step = std::clamp(step, 0, steps - 1);
        const int index = step - (kGraphRows - row - 1) * static_cast<int>(kGraphFill.size());
        if (index >= 0 && index < static_cast<int>(kGraphFill.size())) {
          line[j] = kGraphFill[static_cast<size_t>(index)];
        } else if (index >= static_cast<int>(kGraphFill.size())) {
          line[j] = '|';
        }
      } else if (row == kGraphRows) {
        any = true;  // the margin between the bars and the labels
        break;
      } else {
        const size_t at = static_cast<size_t>(row - kGraphRows - 1);
        if (at < label.size()) {
          any = true;
          line[j] = label[at];
        }
      }
    }
    if (!any) return;
    if (row == kGraphRows) line.assign(len, ' ');
    out += line;
    out += '\n';
  }
}

}  // namespace

std::vector<LatencySample> LatencySeries::in_order() const {
  std::vector<LatencySample> out;
  for (size_t j = 0; j < kLength; ++j) {
    const LatencySample& s = samples[(next + j) % kLength];
    if (s.time != 0) out.push_back(s);
  }
  return out;
}

void LatencyMonitor::add(std::string_view event, int64_t ms, int64_t now) {
  auto it =
      std::find_if(events_.begin(), events_.end(), [&](const auto& e) { return e.first == event; });
  if (it == events_.end()) {
    events_.emplace_back(std::string(event), LatencySeries{});
    it = events_.end() - 1;
  }
  LatencySeries& s = it->second;
  const auto latency = static_cast<uint32_t>(std::clamp<int64_t>(ms, 0, UINT32_MAX));
  s.max = std::max(s.max, latency);
  // One sample per second: the worst of that second.
  LatencySample& previous =
      s.samples[(s.next + LatencySeries::kLength - 1) % LatencySeries::kLength];
  if (previous.time == now) {
    previous.latency = std::max(previous.latency, latency);
    return;
  }
  s.samples[s.next] = LatencySample{now, latency};
  s.next = (s.next + 1) % LatencySeries::kLength;
}

const LatencySeries* LatencyMonitor::find(std::string_view event) const {
  for (const auto& [name, series] : events_) {
    if (name == event) return &series;
  }
  return nullptr;
}

size_t LatencyMonitor::reset(std::optional<std::string_view> event) {
  const size_t before = events_.size();
  std::erase_if(events_,
                [&](const auto& e) { return !event || equals_ignore_case(e.first, *event); });
  return before - events_.size();
}

std::string LatencyMonitor::doctor(const LatencyDoctorSettings& cfg) const {
  if (events_.empty() && cfg.threshold_ms == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a look "
           "at https://redis.io/topics/latency-monitor.\n";
  }
  std::string out;
  bool slowlog_enable = false, slowlog_tuning = false, slowlog_inspect = false;
  bool scheduler = false, hz = false, large_objects = false, relax_fsync = false;
  int advices = 0, n = 0;
  for (const auto& [event, series] : events_) {
    if (++n == 1) {
      out +=
          "Dave, I have observed latency spikes in this Redis instance. You don't mind "
          "talking about it, do you Dave?\n\n";
    }
    const EventStats st = analyze(series, cfg.now);
    out += printf_string(
        "%d. %s: %lld latency spikes (average %lldms, mean deviation %lldms, period %.2f sec). "
        "Worst all time event %lums.",
        n, event.c_str(), static_cast<long long>(st.samples), static_cast<long long>(st.avg),
        static_cast<long long>(st.mad),
        st.samples == 0 ? 0.0 : static_cast<double>(st.period) / static_cast<double>(st.samples),
        static_cast<unsigned long>(series.max));
    if (event == "command") {
      if (cfg.slowlog_log_slower_than < 0) {
        slowlog_enable = true;
        advices++;
      } else if (cfg.slowlog_log_slower_than / 1000 > cfg.threshold_ms) {
        slowlog_tuning = true;
        advices++;
      }
      slowlog_inspect = large_objects = true;
      advices += 2;
    } else if (event == "fast-command") {
      scheduler = true;
      advices++;
    } else if (event == "expire-cycle") {
      hz = large_objects = true;
      advices += 2;
    } else if (event == "aof-fsync-always") {
      relax_fsync = true;
      advices++;
    }
    out += '\n';
  }
  if (cfg.transparent_huge_pages) advices++;
  if (n == 0 && advices == 0) {
    return out +
           "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
           "in the slightest bit. I honestly think you ought to sit down calmly, take a stress "
           "pill, and think things over.\n";
  }
  if (advices == 0) {
    return out +
           "\nWhile there are latency events logged, I'm not able to suggest any easy fix. "
           "Please use the Redis community to get some help, providing this report in your help "
           "request.\n";
  }
  out += "\nI have a few advices for you:\n\n";
  const auto threshold_us = static_cast<unsigned long long>(cfg.threshold_ms) * 1000;
  if (slowlog_enable) {
    out += printf_string(
        "- There are latency issues with potentially slow commands you are using. Try to enable "
        "the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %llu'. "
        "If the Slow log is disabled Redis is not able to log slow commands execution for "
        "you.\n",
        threshold_us);
  }
  if (slowlog_tuning) {
    out += printf_string(
        "- Your current Slow Log configuration only logs events that are slower than your "
        "configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than "
        "%llu'.\n",
        threshold_us);
  }
  if (slowlog_inspect) {
    out +=
        "- Check your Slow Log to understand what are the commands you are running which are too "
        "slow to execute. Please check https://redis.io/commands/slowlog for more information.\n";
  }
  if (scheduler) {
    out +=
        "- The system is slow to execute Redis code paths not containing system calls. This "
        "usually means the system does not provide Redis CPU time to run for long periods. You "
        "should try to:\n"
        "  1) Lower the system load.\n"
        "  2) Use a computer / VM just for Redis if you are running other software in the same "
        "system.\n"
        "  3) Check if you have a \"noisy neighbour\" problem.\n"
        "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in "
        "your system.\n"
        "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, "
        "if you are using Jemalloc. However this may create fragmentation problems.\n";
  }
  if (relax_fsync && cfg.appendfsync_always) {
    out +=
        "- Your fsync policy is set to 'always'. It is very hard to get good performances with "
        "such a setup, if possible try to relax the fsync policy to 'onesec'.\n";
  }
  if (hz && cfg.hz < 100) {
    out +=
        "- In order to make the Redis keys expiring process more incremental, try to set the "
        "'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n";
  }
  if (large_objects) {
    out +=
        "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a "
        "blocking operation. If you have very large objects that are often deleted, expired, or "
        "evicted, try to fragment those objects into multiple smaller objects.\n";
  }
  if (cfg.transparent_huge_pages) {
    out +=
        "- I detected a non zero amount of anonymous huge pages used by your process. This "
        "creates very serious latency events in different conditions, especially when Redis is "
        "persisting on disk. To disable THP support use the command 'echo never > "
        "/sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into "
        "/etc/rc.local so that the command will be executed again after a reboot. Note that "
        "even if you have already disabled THP, you still need to restart the Redis process to "
        "get rid of the huge pages already created.\n";
  }
  return out;
}

std::string LatencyMonitor::graph(std::string_view event, int64_t now) const {
  const LatencySeries* series = find(event);
  std::vector<std::pair<uint32_t, std::string>> samples;
  uint32_t low = 0, high = 0;
  for (const LatencySample& s : series->in_order()) {
    if (samples.empty()) {
      low = high = s.latency;
    } else {
      low = std::min(low, s.latency);
      high = std::max(high, s.latency);
    }
    samples.emplace_back(s.latency, age_label(now - s.time));
  }
  std::string out =
      printf_string("%s - high %lu ms, low %lu ms (all time high %lu ms)\n",
                    std::string(event).c_str(), static_cast<unsigned long>(high),
                    static_cast<unsigned long>(low), static_cast<unsigned long>(series->max));
  out.append(kGraphColumns, '-');
  out += '\n';
  for (size_t j = 0; j < samples.size(); j += kGraphColumns) {
    if (j != 0) out += '\n';
    render_block(out, samples, j, std::min<size_t>(kGraphColumns, samples.size() - j), low, high);
  }
  return out;
}

}  // namespace ringkv::engine
