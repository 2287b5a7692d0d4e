// INFO: the server's state in Redis's sections and field names.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/clock.h"
#include "common/version.h"
#include "engine/keyspace/lazy_free.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

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

// "%.2f" of a / b (0 when b is 0), and of a percentage ("%.2f%%").
std::string ratio(size_t a, size_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f",
                b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b));
  return buf;
}

std::string percent(size_t part, size_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%",
                whole == 0 ? 0.0 : static_cast<double>(part) * 100.0 / static_cast<double>(whole));
  return buf;
}

uint64_t resident_set_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// What the allocator and the system say of the process's memory.
struct MemoryFigures {
  size_t rss = 0;
  size_t allocated = 0;  // bytes in use in malloc's chunks
  size_t active = 0;     // bytes malloc took from the system
  size_t system = 0;     // the machine's memory
};

MemoryFigures memory_figures() {
  MemoryFigures m;
  m.rss = resident_set_bytes();
  const struct mallinfo2 info = mallinfo2();
  m.allocated = info.uordblks + info.hblkhd;
  m.active = info.arena + info.hblkhd;
  m.system =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return m;
}

std::string cpu_time(const timeval& tv) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
                static_cast<long>(tv.tv_usec));
  return buf;
}

// Whether INFO shows a section: named, or in "default" (also what no argument means), "all" or
// "everything" (the same here: "all" leaves out only sections of modules, and ringkv has none).
bool wanted(std::span<const std::string_view> sections, std::string_view name, bool is_default) {
  if (sections.empty()) return is_default;
  for (auto s : sections) {
    if (s == name || s == "everything" || s == "all" || (s == "default" && is_default)) {
      return true;
    }
  }
  return false;
}

// The compiler that built this binary, as Redis's gcc_version ("12.2.0").
std::string compiler_version() {
  return std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
}

// A stable id of this build, as Redis's redis_build_id (16 hex digits).
std::string build_id() {
  const std::string text = std::string(RINGKV_VERSION) + " " + __DATE__ + " " + __TIME__;
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(text)));
  return buf;
}

std::string executable_path() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
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
    field(out, "redis_version", common::kRedisVersion);
    field(out, "redis_git_sha1", "00000000");
    field(out, "redis_git_dirty", "0");
    field(out, "redis_build_id", build_id());
    field(out, "ringkv_version", RINGKV_VERSION);
    field(out, "redis_mode", "standalone");
    field(out, "ringkv_mode", cluster_ ? "cluster" : "standalone");
    utsname u{};
    uname(&u);
    field(out, "os", std::string(u.sysname) + " " + u.release + " " + u.machine);
    field(out, "arch_bits", "64");
    field(out, "monotonic_clock", "POSIX clock_gettime");
    field(out, "multiplexing_api", "libuv");
    field(out, "atomicvar_api", "c11-builtin");
    field(out, "gcc_version", compiler_version());
    field(out, "process_id", static_cast<int64_t>(getpid()));
    field(out, "process_supervised", "no");
    field(out, "run_id", run_id_);
    field(out, "tcp_port", static_cast<int64_t>(config_.server.port));
    field(out, "server_time_usec", unix_now_us());
    field(out, "uptime_in_seconds", uptime);
    field(out, "uptime_in_days", uptime / 86400);
    field(out, "hz", config_.server.hz);
    field(out, "configured_hz", config_.server.hz);
    field(out, "lru_clock", static_cast<uint64_t>(store_.lru_clock()));
    field(out, "executable", executable_path());
    field(out, "config_file", config_.source_file);
    field(out, "io_threads_active", "0");
  }
  if (wanted(sections, "clients", true)) {
    section("Clients");
    const ClientFigures c = client_figures();
    // Peers' links are the cluster's connections (Redis counts its cluster bus there), not
    // clients.
    field(out, "connected_clients", c.clients);
    field(out, "cluster_connections", c.peer_links);
    field(out, "maxclients", config_.server.maxclients);
    field(out, "client_recent_max_input_buffer", c.max_input_buffer);
    field(out, "client_recent_max_output_buffer", c.max_output_buffer);
    field(out, "blocked_clients", blocked_.size());
    field(out, "tracking_clients", c.tracking);
    field(out, "clients_in_timeout_table", blocked_.size());
  }
  if (wanted(sections, "memory", true)) {
    section("Memory");
    info_memory(out);
  }
  if (wanted(sections, "persistence", true)) {
    section("Persistence");
    field(out, "loading", "0");
    field(out, "async_loading", "0");
    rdb_.set_changes(changes_);
    const persistence::RdbInfo rdb = rdb_.info(now_ms);
    const persistence::AofInfo aof = aof_.info(now_ms);
    // The running child's progress (one runs at a time, as in Redis).
    const persistence::ChildFigures& child = rdb.bgsave_in_progress ? rdb.child : aof.child;
    field(out, "current_cow_peak", child.cow_peak);
    field(out, "current_cow_size", child.cow_size);
    field(out, "current_cow_size_age", child.cow_size_age_s);
    char perc[32];
    std::snprintf(perc, sizeof perc, "%.2f", child.fork_perc);
    field(out, "current_fork_perc", perc);
    field(out, "current_save_keys_processed", child.keys_processed);
    field(out, "current_save_keys_total", child.keys_total);
    field(out, "rdb_changes_since_last_save", rdb.changes_since_last_save);
    field(out, "rdb_bgsave_in_progress", int64_t{rdb.bgsave_in_progress});
    field(out, "rdb_last_save_time", rdb.last_save_time);
    field(out, "rdb_last_bgsave_status", rdb.last_bgsave_ok ? "ok" : "err");
    field(out, "rdb_last_bgsave_time_sec", rdb.last_bgsave_time_sec);
    field(out, "rdb_current_bgsave_time_sec", rdb.current_bgsave_time_sec);
    field(out, "rdb_saves", rdb.saves);
    field(out, "rdb_last_cow_size", rdb.last_cow_size);
    field(out, "rdb_last_load_keys_expired", rdb.last_load_keys_expired);
    field(out, "rdb_last_load_keys_loaded", rdb.last_load_keys_loaded);
    field(out, "aof_enabled", int64_t{aof.enabled});
    field(out, "aof_rewrite_in_progress", int64_t{aof.rewrite_in_progress});
    field(out, "aof_rewrite_scheduled", int64_t{aof.rewrite_scheduled});
    field(out, "aof_last_rewrite_time_sec", aof.last_rewrite_time_sec);
    field(out, "aof_current_rewrite_time_sec", aof.current_rewrite_time_sec);
    field(out, "aof_last_bgrewrite_status", aof.last_bgrewrite_ok ? "ok" : "err");
    field(out, "aof_rewrites", aof.rewrites);
    field(out, "aof_rewrites_consecutive_failures", aof.rewrites_consecutive_failures);
    field(out, "aof_last_write_status", aof.last_write_ok ? "ok" : "err");
    field(out, "aof_last_cow_size", aof.last_cow_size);
    field(out, "module_fork_in_progress", "0");
    field(out, "module_fork_last_cow_size", "0");
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
    info_stats(out, now_ms);
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
    rusage main_thread{};
    getrusage(RUSAGE_THREAD, &main_thread);
    field(out, "used_cpu_sys", cpu_time(self.ru_stime));
    field(out, "used_cpu_user", cpu_time(self.ru_utime));
    field(out, "used_cpu_sys_children", cpu_time(children.ru_stime));
    field(out, "used_cpu_user_children", cpu_time(children.ru_utime));
    field(out, "used_cpu_sys_main_thread", cpu_time(main_thread.ru_stime));
    field(out, "used_cpu_user_main_thread", cpu_time(main_thread.ru_utime));
  }
  // ringkv loads no modules: the section is there, empty, as on a Redis without modules.
  if (wanted(sections, "modules", true)) section("Modules");
  if (wanted(sections, "commandstats", false)) {
    section("Commandstats");
    out += observed_.commands.info_commandstats();
  }
  if (wanted(sections, "errorstats", true)) {
    section("Errorstats");
    out += observed_.errors.info();
  }
  if (wanted(sections, "latencystats", false)) {
    section("Latencystats");
    out += observed_.commands.info_latencystats(config_.log.latency_tracking_info_percentiles);
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
    for (int db = 0; db < dbs_.count(); ++db) {
      const engine::Store& store = dbs_[db];
      if (store.size() == 0) continue;
      field(out, "db" + std::to_string(db),
            "keys=" + std::to_string(store.size()) +
                ",expires=" + std::to_string(store.volatile_size()) +
                ",avg_ttl=" + std::to_string(store.avg_ttl_ms()));
    }
  }
  return out;
}

Server::ClientFigures Server::client_figures() const {
  ClientFigures f;
  clients_.for_each([&](const Connection& c) {
    if (c.is_peer()) {
      f.peer_links++;
      f.links_memory += c.buffer_memory();
      return;
    }
    f.clients++;
    f.clients_memory += c.buffer_memory();
    if (c.tracking_state().on) f.tracking++;
    f.max_input_buffer = std::max(f.max_input_buffer, c.input_buffer_size());
    f.max_output_buffer = std::max(f.max_output_buffer, c.pending_output());
  });
  return f;
}

Server::OverheadFigures Server::overhead_figures() const {
  return OverheadFigures{client_figures(), aof_.info(uv_now(loop_)),
                         cluster_ ? cluster_->replication().backlog_held() : 0};
}

void Server::info_memory(std::string& out) {
  const size_t used = dbs_.used_memory();
  used_memory_peak_ = std::max(used_memory_peak_, used);
  const MemoryFigures m = memory_figures();
  const OverheadFigures o = overhead_figures();
  const ClientFigures& c = o.clients;
  const persistence::AofInfo& aof = o.aof;
  const uint64_t backlog = o.backlog;
  const size_t overhead = o.total();
  field(out, "used_memory", used);
  field(out, "used_memory_human", human_bytes(used));
  field(out, "used_memory_rss", m.rss);
  field(out, "used_memory_rss_human", human_bytes(m.rss));
  field(out, "used_memory_peak", used_memory_peak_);
  field(out, "used_memory_peak_human", human_bytes(used_memory_peak_));
  field(out, "used_memory_peak_perc", percent(used, used_memory_peak_));
  // used_memory is the dataset's (see README): what connections, the append-only buffer and
  // the replication backlogs hold comes on top of it.
  field(out, "used_memory_overhead", overhead);
  field(out, "used_memory_startup", "0");
  field(out, "used_memory_dataset", used);
  field(out, "used_memory_dataset_perc", percent(used, used));
  field(out, "allocator_allocated", m.allocated);
  field(out, "allocator_active", m.active);
  field(out, "allocator_resident", m.rss);
  field(out, "total_system_memory", m.system);
  field(out, "total_system_memory_human", human_bytes(m.system));
  const size_t lua = scripts_->memory_bytes();
  const size_t scripts = scripts_->script_bytes();
  field(out, "used_memory_lua", lua);
  field(out, "used_memory_vm_eval", lua);
  field(out, "used_memory_lua_human", human_bytes(lua));
  field(out, "used_memory_scripts_eval", scripts);
  field(out, "number_of_cached_scripts", scripts_->script_count());
  field(out, "number_of_functions", scripts_->functions().function_count());
  field(out, "number_of_libraries", scripts_->functions().libraries().size());
  field(out, "used_memory_vm_functions", "0");
  field(out, "used_memory_vm_total", lua);
  field(out, "used_memory_vm_total_human", human_bytes(lua));
  field(out, "used_memory_functions", "0");
  field(out, "used_memory_scripts", scripts);
  field(out, "used_memory_scripts_human", human_bytes(scripts));
  field(out, "maxmemory", config_.memory.maxmemory);
  field(out, "maxmemory_human", human_bytes(static_cast<uint64_t>(config_.memory.maxmemory)));
  field(out, "maxmemory_policy", config_.memory.maxmemory_policy);
  field(out, "allocator_frag_ratio", ratio(m.active, m.allocated));
  field(out, "allocator_frag_bytes", static_cast<int64_t>(m.active - m.allocated));
  field(out, "allocator_rss_ratio", ratio(m.rss, m.active));
  field(out, "allocator_rss_bytes", static_cast<int64_t>(m.rss) - static_cast<int64_t>(m.active));
  field(out, "rss_overhead_ratio", "1.00");
  field(out, "rss_overhead_bytes", "0");
  // As Redis: resident memory over what the data holds (the process's code, libraries and
  // buffers count too, so a small dataset shows a high ratio).
  field(out, "mem_fragmentation_ratio", ratio(m.rss, used));
  field(out, "mem_fragmentation_bytes", static_cast<int64_t>(m.rss) - static_cast<int64_t>(used));
  field(out, "mem_not_counted_for_evict", aof.buffer_length);
  field(out, "mem_replication_backlog", backlog);
  field(out, "mem_total_replication_buffers", backlog);
  field(out, "mem_clients_slaves", "0");
  field(out, "mem_clients_normal", c.clients_memory);
  field(out, "mem_cluster_links", c.links_memory);
  field(out, "mem_aof_buffer", aof.buffer_length);
  field(out, "mem_allocator", "libc");
  field(out, "active_defrag_running", "0");
  const engine::LazyFreeStats& lazy = engine::lazy_free_stats();
  field(out, "lazyfree_pending_objects", std::to_string(lazy.pending.load()));
  field(out, "lazyfreed_objects", std::to_string(lazy.freed.load()));
}

void Server::info_stats(std::string& out, uint64_t now_ms) {
  const engine::StoreStats ss = dbs_.stats();
  char kbps[32];
  field(out, "total_connections_received", stats_.total_connections_received);
  field(out, "total_commands_processed", stats_.total_commands_processed);
  field(out, "instantaneous_ops_per_sec", static_cast<int64_t>(instantaneous_ops_));
  field(out, "total_net_input_bytes", stats_.total_net_input_bytes);
  field(out, "total_net_output_bytes", stats_.total_net_output_bytes);
  field(out, "total_net_repl_input_bytes", "0");
  field(out, "total_net_repl_output_bytes", "0");
  std::snprintf(kbps, sizeof kbps, "%.2f", instantaneous_input_kbps_);
  field(out, "instantaneous_input_kbps", kbps);
  std::snprintf(kbps, sizeof kbps, "%.2f", instantaneous_output_kbps_);
  field(out, "instantaneous_output_kbps", kbps);
  field(out, "instantaneous_input_repl_kbps", "0.00");
  field(out, "instantaneous_output_repl_kbps", "0.00");
  field(out, "rejected_connections", stats_.rejected_connections);
  field(out, "sync_full", sync_full_);
  field(out, "sync_partial_ok", "0");
  field(out, "sync_partial_err", sync_partial_err_);
  field(out, "expired_keys", ss.expired_keys);
  char stale[32];
  std::snprintf(stale, sizeof stale, "%.2f", stats_.expired_stale_perc * 100);
  field(out, "expired_stale_perc", stale);
  field(out, "expired_time_cap_reached_count", stats_.expired_time_cap_reached_count);
  field(out, "expire_cycle_cpu_milliseconds", ss.expire_cycle_cpu_us / 1000);
  field(out, "evicted_keys", ss.evicted_keys);
  field(out, "evicted_clients", "0");
  const uint64_t exceeded_us =
      stats_.eviction_exceeded_since_us == 0
          ? 0
          : static_cast<uint64_t>(common::monotonic_us() - stats_.eviction_exceeded_since_us);
  field(out, "total_eviction_exceeded_time",
        (stats_.eviction_exceeded_total_us + exceeded_us) / 1000);
  field(out, "current_eviction_exceeded_time", exceeded_us / 1000);
  field(out, "keyspace_hits", ss.keyspace_hits);
  field(out, "keyspace_misses", ss.keyspace_misses);
  field(out, "pubsub_channels", pubsub_.channel_total());
  field(out, "pubsub_patterns", pubsub_.pattern_count());
  field(out, "pubsubshard_channels", pubsub_.shard_channel_total());
  const persistence::AofInfo forks = aof_.info(now_ms);
  const persistence::RdbInfo rdb_forks = rdb_.info(now_ms);
  // The latest fork of either kind (Redis keeps one figure for every child).
  field(out, "latest_fork_usec",
        rdb_forks.forks > 0 && rdb_forks.last_fork_ms >= forks.last_fork_ms
            ? rdb_forks.latest_fork_usec
            : forks.latest_fork_usec);
  field(out, "total_forks", forks.total_forks + rdb_forks.forks + sync_forks_);
  field(out, "migrate_cached_sockets", migrate_links_.size());
  field(out, "slave_expires_tracked_keys", "0");
  for (const char* name :
       {"active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits",
        "active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time"}) {
    field(out, name, "0");
  }
  field(out, "tracking_total_keys", tracking_.keys());
  field(out, "tracking_total_items", tracking_.items());
  field(out, "tracking_total_prefixes", tracking_.prefix_count());
  field(out, "unexpected_error_replies", "0");
  field(out, "total_error_replies", stats_.total_error_replies);
  field(out, "dump_payload_sanitizations", "0");
  field(out, "total_reads_processed", stats_.total_reads_processed);
  field(out, "total_writes_processed", stats_.total_writes_processed);
  field(out, "io_threaded_reads_processed", "0");
  field(out, "io_threaded_writes_processed", "0");
}

void Server::memory_stats(protocol::ReplyWriter& reply) {
  const size_t used = dbs_.used_memory();
  used_memory_peak_ = std::max(used_memory_peak_, used);
  const MemoryFigures m = memory_figures();
  const OverheadFigures o = overhead_figures();
  const ClientFigures& c = o.clients;
  const persistence::AofInfo& aof = o.aof;
  const uint64_t backlog = o.backlog;
  const size_t overhead = o.total();
  const size_t keys = dbs_.size();
  auto pct = [](size_t part, size_t whole) {
    return whole == 0 ? 0.0 : static_cast<double>(part) * 100.0 / static_cast<double>(whole);
  };
  auto dratio = [](size_t a, size_t b) {
    return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
  };
  reply.map(27);
  auto integer = [&](std::string_view name, int64_t v) {
    reply.bulk(name);
    reply.integer(v);
  };
  auto real = [&](std::string_view name, double v) {
    reply.bulk(name);
    reply.double_value(v);
  };
  integer("peak.allocated", static_cast<int64_t>(used_memory_peak_));
  integer("total.allocated", static_cast<int64_t>(used));
  integer("startup.allocated", 0);
  integer("replication.backlog", static_cast<int64_t>(backlog));
  integer("clients.slaves", 0);
  integer("clients.normal", static_cast<int64_t>(c.clients_memory));
  integer("cluster.links", static_cast<int64_t>(c.links_memory));
  integer("aof.buffer", static_cast<int64_t>(aof.buffer_length));
  integer("lua.caches", static_cast<int64_t>(scripts_->script_bytes()));
  integer("functions.caches", 0);
  integer("overhead.total", static_cast<int64_t>(overhead));
  integer("keys.count", static_cast<int64_t>(keys));
  integer("keys.bytes-per-key", keys == 0 ? 0 : static_cast<int64_t>(used / keys));
  integer("dataset.bytes", static_cast<int64_t>(used));
  real("dataset.percentage", pct(used, used));
  real("peak.percentage", pct(used, used_memory_peak_));
  integer("allocator.allocated", static_cast<int64_t>(m.allocated));
  integer("allocator.active", static_cast<int64_t>(m.active));
  integer("allocator.resident", static_cast<int64_t>(m.rss));
  real("allocator-fragmentation.ratio", dratio(m.active, m.allocated));
  integer("allocator-fragmentation.bytes", static_cast<int64_t>(m.active - m.allocated));
  real("allocator-rss.ratio", dratio(m.rss, m.active));
  integer("allocator-rss.bytes", static_cast<int64_t>(m.rss) - static_cast<int64_t>(m.active));
  real("rss-overhead.ratio", 1.0);
  integer("rss-overhead.bytes", 0);
  real("fragmentation", dratio(m.rss, used));
  integer("fragmentation.bytes", static_cast<int64_t>(m.rss) - static_cast<int64_t>(used));
}

std::string Server::memory_doctor() {
  const size_t used = dbs_.used_memory();
  used_memory_peak_ = std::max(used_memory_peak_, used);
  const MemoryFigures m = memory_figures();
  // As Redis: below 5 MB there is too little data to judge.
  if (used < 5 * 1024 * 1024) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector "
           "can't be used in these conditions. Please, leave for your mission on Earth and fill "
           "it with some data. The new Sam and I will be back to our programming as soon as I "
           "finished rebooting.\n";
  }
  std::string issues;
  if (static_cast<double>(used_memory_peak_) > static_cast<double>(used) * 1.5) {
    issues +=
        " * Peak memory: In the past this instance used more than 150% the memory that is "
        "currently using. The allocator is normally not able to release memory after a peak, so "
        "you can expect to see a big fragmentation ratio, however this is actually harmless and "
        "is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is "
        "currently bigger than expected, the memory will be used as soon as you fill the Redis "
        "instance with more data. If the memory peak was only occasional and you want to try to "
        "reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is "
        "to shutdown and restart the instance.\n\n";
  }
  if (static_cast<double>(m.rss) > static_cast<double>(used) * 1.4) {
    issues +=
        " * High total RSS: This instance has a memory fragmentation and RSS overhead greater "
        "than 1.4 (this means that the Resident Set Size of the Redis process is much larger "
        "than the sum of the logical allocations Redis performed). This problem is usually due "
        "either to a large peak memory (check if there is a peak memory entry above in the "
        "report) or may result from a workload that causes the allocator to fragment memory a "
        "lot. You can try enabling 'activedefrag' config option.\n\n";
  }
  if (issues.empty()) {
    return "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
           "occurs on this base.\n";
  }
  return "Sam, I detected a few issues in this Redis instance memory implants:\n\n" + issues +
         "I'm here to keep you safe, Sam. I want to help you.\n";
}

}  // namespace ringkv::server
