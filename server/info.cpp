// INFO: the server's state in Redis's sections and field names.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// The Redis version whose protocol and command semantics ringkv implements.
constexpr const char* kRedisCompatVersion = "7.0.15";

void field(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out += ':';
  out.append(value);
  out += "\r\n";
}
void field(std::string& out, std::string_view name, int64_t value) {
  field(out, name, std::to_string(value));
}
void field(std::string& out, std::string_view name, uint64_t value) {
  field(out, name, std::to_string(value));
}

// Bytes as Redis's bytesToHuman prints them (e.g. "943.08K").
std::string human_bytes(uint64_t n) {
  char buf[64];
  double d = static_cast<double>(n);
  if (n < 1024) {
    std::snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(n));
  } else if (n < 1024ull * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fK", d / 1024);
  } else if (n < 1024ull * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fM", d / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2fG", d / (1024.0 * 1024 * 1024));
  }
  return buf;
}

uint64_t resident_set_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string cpu_time(const timeval& tv) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
                static_cast<long>(tv.tv_usec));
  return buf;
}

bool wanted(std::span<const std::string_view> sections, std::string_view name, bool is_default) {
  if (sections.empty()) return is_default;
  for (auto s : sections) {
    if (s == name || s == "all" || s == "everything" || (s == "default" && is_default)) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string Server::info(std::span<const std::string_view> sections) {
  std::string out;
  auto section = [&](std::string_view title) {
    if (!out.empty()) out += "\r\n";
    out += "# ";
    out.append(title);
    out += "\r\n";
  };
  uint64_t now_ms = uv_now(loop_);
  uint64_t uptime = (now_ms - start_ms_) / 1000;

  if (wanted(sections, "server", true)) {
    section("Server");
    field(out, "redis_version", kRedisCompatVersion);
    field(out, "ringkv_version", RINGKV_VERSION);
    field(out, "redis_mode", "standalone");
    field(out, "ringkv_mode", cluster_ ? "cluster" : "standalone");
    utsname u{};
    uname(&u);
    field(out, "os", std::string(u.sysname) + " " + u.release + " " + u.machine);
    field(out, "arch_bits", "64");
    field(out, "multiplexing_api", "libuv");
    field(out, "process_id", static_cast<int64_t>(getpid()));
    field(out, "tcp_port", static_cast<int64_t>(config_.server.port));
    field(out, "server_time_usec", store_.now() * 1000);
    field(out, "uptime_in_seconds", uptime);
    field(out, "uptime_in_days", uptime / 86400);
    field(out, "hz", config_.server.hz);
    field(out, "configured_hz", config_.server.hz);
    field(out, "lru_clock", static_cast<uint64_t>(store_.lru_clock()));
    field(out, "config_file", config_.source_file);
  }
  if (wanted(sections, "clients", true)) {
    section("Clients");
    field(out, "connected_clients", clients_.size());
    field(out, "cluster_connections", "0");
    field(out, "maxclients", config_.server.maxclients);
    field(out, "blocked_clients", blocked_.size());
  }
  if (wanted(sections, "memory", true)) {
    section("Memory");
    size_t used = store_.used_memory();
    uint64_t rss = resident_set_bytes();
    field(out, "used_memory", used);
    field(out, "used_memory_human", human_bytes(used));
    field(out, "used_memory_rss", rss);
    field(out, "used_memory_rss_human", human_bytes(rss));
    field(out, "used_memory_dataset", used);
    field(out, "maxmemory", config_.memory.maxmemory);
    field(out, "maxmemory_human", human_bytes(static_cast<uint64_t>(config_.memory.maxmemory)));
    field(out, "maxmemory_policy", config_.memory.maxmemory_policy);
    // As Redis: resident memory over what the data holds (the process's code, libraries and
    // buffers count too, so a small dataset shows a high ratio).
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f",
                  used == 0 ? 0.0 : static_cast<double>(rss) / static_cast<double>(used));
    field(out, "mem_fragmentation_ratio", ratio);
    field(out, "mem_fragmentation_bytes", static_cast<int64_t>(rss) - static_cast<int64_t>(used));
    field(out, "mem_allocator", "libc");
  }
  if (wanted(sections, "persistence", true)) {
    section("Persistence");
    field(out, "loading", "0");
    field(out, "async_loading", "0");
    rdb_.set_changes(changes_);
    const persistence::RdbInfo rdb = rdb_.info(now_ms);
    field(out, "rdb_changes_since_last_save", rdb.changes_since_last_save);
    field(out, "rdb_bgsave_in_progress", int64_t{rdb.bgsave_in_progress});
    field(out, "rdb_last_save_time", rdb.last_save_time);
    field(out, "rdb_last_bgsave_status", rdb.last_bgsave_ok ? "ok" : "err");
    field(out, "rdb_last_bgsave_time_sec", rdb.last_bgsave_time_sec);
    field(out, "rdb_current_bgsave_time_sec", rdb.current_bgsave_time_sec);
    field(out, "rdb_saves", rdb.saves);
    field(out, "rdb_last_load_keys_expired", rdb.last_load_keys_expired);
    field(out, "rdb_last_load_keys_loaded", rdb.last_load_keys_loaded);
    const persistence::AofInfo aof = aof_.info(now_ms);
    field(out, "aof_enabled", int64_t{aof.enabled});
    field(out, "aof_rewrite_in_progress", int64_t{aof.rewrite_in_progress});
    field(out, "aof_rewrite_scheduled", int64_t{aof.rewrite_scheduled});
    field(out, "aof_last_rewrite_time_sec", aof.last_rewrite_time_sec);
    field(out, "aof_current_rewrite_time_sec", aof.current_rewrite_time_sec);
    field(out, "aof_last_bgrewrite_status", aof.last_bgrewrite_ok ? "ok" : "err");
    field(out, "aof_rewrites", aof.rewrites);
    field(out, "aof_rewrites_consecutive_failures", aof.rewrites_consecutive_failures);
    field(out, "aof_last_write_status", aof.last_write_ok ? "ok" : "err");
    if (aof.enabled) {
      field(out, "aof_current_size", aof.current_size);
      field(out, "aof_base_size", aof.base_size);
      field(out, "aof_pending_rewrite", "0");
      field(out, "aof_buffer_length", aof.buffer_length);
      field(out, "aof_pending_bio_fsync", aof.pending_bio_fsync);
      field(out, "aof_delayed_fsync", aof.delayed_fsync);
    }
  }
  if (wanted(sections, "stats", true)) {
    section("Stats");
    const auto& ss = store_.stats();
    field(out, "total_connections_received", stats_.total_connections_received);
    field(out, "total_commands_processed", stats_.total_commands_processed);
    field(out, "instantaneous_ops_per_sec", static_cast<int64_t>(instantaneous_ops_));
    field(out, "total_net_input_bytes", stats_.total_net_input_bytes);
    field(out, "total_net_output_bytes", stats_.total_net_output_bytes);
    field(out, "rejected_connections", stats_.rejected_connections);
    field(out, "expired_keys", ss.expired_keys);
    field(out, "expire_cycle_cpu_milliseconds", ss.expire_cycle_cpu_us / 1000);
    field(out, "evicted_keys", ss.evicted_keys);
    field(out, "keyspace_hits", ss.keyspace_hits);
    field(out, "keyspace_misses", ss.keyspace_misses);
    field(out, "pubsub_channels", pubsub_.channel_total());
    field(out, "pubsub_patterns", pubsub_.pattern_count());
    const persistence::AofInfo forks = aof_.info(now_ms);
    const persistence::RdbInfo rdb_forks = rdb_.info(now_ms);
    // The latest fork of either kind (Redis keeps one figure for every child).
    field(out, "latest_fork_usec",
          rdb_forks.forks > 0 && rdb_forks.last_fork_ms >= forks.last_fork_ms
              ? rdb_forks.latest_fork_usec
              : forks.latest_fork_usec);
    field(out, "total_forks", forks.total_forks + rdb_forks.forks + sync_forks_);
    field(out, "total_error_replies", stats_.total_error_replies);
    field(out, "total_reads_processed", stats_.total_reads_processed);
    field(out, "total_writes_processed", stats_.total_writes_processed);
  }
  if (wanted(sections, "replication", true)) {
    section("Replication");
    out += replication_info();
  }
  if (wanted(sections, "cpu", true)) {
    section("CPU");
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    rusage children{};
    getrusage(RUSAGE_CHILDREN, &children);
    field(out, "used_cpu_sys", cpu_time(self.ru_stime));
    field(out, "used_cpu_user", cpu_time(self.ru_utime));
    field(out, "used_cpu_sys_children", cpu_time(children.ru_stime));
    field(out, "used_cpu_user_children", cpu_time(children.ru_utime));
  }
  if (wanted(sections, "cluster", true)) {
    section("Cluster");
    if (cluster_) {
      out += cluster_->info_section();
    } else {
      field(out, "cluster_enabled", "0");
    }
  }
  if (wanted(sections, "keyspace", true)) {
    section("Keyspace");
    if (store_.size() > 0) {
      field(out, "db0",
            "keys=" + std::to_string(store_.size()) +
                ",expires=" + std::to_string(store_.volatile_size()) +
                ",avg_ttl=" + std::to_string(store_.avg_ttl_ms()));
    }
  }
  return out;
}

}  // namespace ringkv::server
