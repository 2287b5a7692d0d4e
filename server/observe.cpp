// What the pipeline records of each command it ran (INFO commandstats/errorstats/latencystats,
// the slow log, the latency monitor, MONITOR's feed), and the server's side of the
// observability commands (MONITOR, MEMORY STATS/DOCTOR, LATENCY DOCTOR's settings).
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/repr.h"
#include "engine/commands/migrate.h"
#include "engine/commands/string_ops.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Arguments MONITOR and the slow log must not show: passwords (Redis redacts them too).
bool redacted(const engine::CommandSpec& spec, std::span<const std::string_view> argv, size_t i) {
  static const engine::CommandSpec* const kConfigSet =
      engine::find_subcommand(*engine::find_command("config"), "set");
  if (&spec == kConfigSet) {
    return i >= 3 && i % 2 == 1 && engine::equals_ignore_case(argv[i - 1], "requirepass");
  }
  if (spec.name == "auth") return i >= 1;
  if (spec.name == "migrate") return engine::migrate_secret(argv, i);
  if (spec.name == "hello") {  // HELLO ... AUTH username password: both hidden
    return (i >= 2 && engine::equals_ignore_case(argv[i - 1], "auth")) ||
           (i >= 3 && engine::equals_ignore_case(argv[i - 2], "auth"));
  }
  return false;
}

// Bytes of anonymous huge pages the process uses (LATENCY DOCTOR warns about them).
bool uses_transparent_huge_pages() {
  std::ifstream smaps("/proc/self/smaps_rollup");
  std::string key;
  long long kb = 0;
  while (smaps >> key) {
    if (key == "AnonHugePages:") {
      smaps >> kb;
      return kb > 0;
    }
  }
  return false;
}

}  // namespace

bool Server::runs_script(const engine::CommandSpec& spec) {
  return spec.group == "scripting" &&
         (spec.name.starts_with("eval") || spec.name.starts_with("fcall"));
}

bool Server::monitored_after_run(const engine::CommandSpec& spec) {
  return (spec.flags & (engine::kSkipMonitor | engine::kAdmin)) == 0;
}

uint64_t Server::unix_now_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

void Server::on_error_reply(std::string_view text) {
  stats_.total_error_replies++;
  errors_written_++;
  observed_.errors.count(text);
}

void Server::count_error_reply(std::string_view reply) {
  if (reply.empty() || reply[0] != '-') return;
  reply.remove_prefix(1);
  on_error_reply(reply.substr(0, reply.find('\r')));
}

void Server::observe(const Origin& origin, const engine::CommandSpec& spec,
                     std::span<const std::string_view> argv, uint64_t start_us, bool failed) {
  if (origin.kind == Origin::Kind::kReplay || origin.kind == Origin::Kind::kPart) return;
  const uint64_t end_us = unix_now_us();
  const uint64_t usec = end_us > start_us ? end_us - start_us : 0;
  // The next command of the same input starts now.
  if (origin.is_request()) last_end_us_ = end_us;
  const conf::LogOptions& opts = config_.log;
  observed_.commands.record(spec, usec, failed, opts.latency_tracking);
  if (!monitors_.empty() && monitored_after_run(spec)) feed_monitors(origin, spec, argv, end_us);
  if ((spec.flags & engine::kSkipSlowlog) != 0) return;
  // The common case, nothing slow and the latency monitor off, costs two comparisons.
  if (opts.latency_monitor_threshold > 0) {
    observed_.latency.add_if_needed((spec.flags & engine::kFast) ? "fast-command" : "command",
                                    static_cast<int64_t>(usec / 1000),
                                    opts.latency_monitor_threshold,
                                    static_cast<int64_t>(end_us / 1000000));
  }
  if (opts.slowlog_log_slower_than >= 0 &&
      usec >= static_cast<uint64_t>(opts.slowlog_log_slower_than)) {
    slow_command(origin, spec, argv, usec, end_us);
  }
}

void Server::slow_command(const Origin& origin, const engine::CommandSpec& spec,
                          std::span<const std::string_view> argv, uint64_t usec, uint64_t now_us) {
  std::vector<std::string_view> shown(argv.begin(), argv.end());
  for (size_t i = 0; i < shown.size(); ++i) {
    if (redacted(spec, argv, i)) shown[i] = "(redacted)";
  }
  const Connection* conn = origin.conn;
  observed_.slowlog.push(shown, static_cast<int64_t>(usec), static_cast<int64_t>(now_us / 1000000),
                         conn != nullptr ? std::string_view(conn->peer_address()) : "",
                         conn != nullptr ? conn->name() : "", config_.log.slowlog_max_len);
}

void Server::feed_monitors(const Origin& origin, const engine::CommandSpec& spec,
                           std::span<const std::string_view> argv, uint64_t now_us) {
  // Shown once, when it first runs: not served again after blocking, not replayed, not as the
  // local part of a client's split command (the whole command was shown).
  if (origin.kind == Origin::Kind::kBlockedRetry || origin.kind == Origin::Kind::kReplay ||
      origin.kind == Origin::Kind::kPart) {
    return;
  }
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "+%llu.%06llu ",
                static_cast<unsigned long long>(now_us / 1000000),
                static_cast<unsigned long long>(now_us % 1000000));
  std::string line = stamp;
  // The database the command ran in (after it ran: SELECT shows its new one, as in Redis).
  line += '[' + std::to_string(origin.database());
  if (origin.kind == Origin::Kind::kScript) {
    line += " lua] ";
  } else if (origin.conn != nullptr && origin.conn->unix_socket()) {
    line += " unix:" + config_.server.unixsocket + "] ";  // as Redis shows such a client
  } else {
    line += ' ';
    line += origin.conn != nullptr ? origin.conn->peer_address() : std::string("?");
    line += "] ";
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) line += ' ';
    common::append_repr(line, redacted(spec, argv, i) ? std::string_view("(redacted)") : argv[i]);
  }
  line += "\r\n";
  for (uint64_t id : monitors_) {
    Connection* monitor = clients_.find(id);
    if (monitor == nullptr || monitor->closing()) continue;
    monitor->reply_writer().buffer() += line;
    monitor->output_added();
  }
}

void Server::monitor(engine::CommandContext& ctx) {
  auto& conn = connection_of(ctx);
  // As Redis: a client already monitoring gets no second reply.
  if (conn.monitoring()) return;
  conn.set_monitoring(true);
  monitors_.push_back(conn.id());
  ctx.reply.ok();
}

void Server::end_monitor(Connection& conn) {
  if (!conn.monitoring()) return;
  conn.set_monitoring(false);
  std::erase(monitors_, conn.id());
}

void Server::latency_settings(engine::LatencyDoctorSettings& out) const {
  out.threshold_ms = config_.log.latency_monitor_threshold;
  out.slowlog_log_slower_than = config_.log.slowlog_log_slower_than;
  out.hz = config_.server.hz;
  out.appendfsync_always = config_.persistence.appendfsync == conf::kFsyncAlways;
  out.transparent_huge_pages = uses_transparent_huge_pages();
}

void Server::set_active_expire(bool on) { active_expire_ = on; }

engine::MigrateLink* Server::migrate_link(std::string_view host, std::string_view port,
                                          int64_t timeout_ms) {
  return migrate_links_.get(host, port, timeout_ms, static_cast<int64_t>(uv_now(loop_)),
                            config_.tls.cluster ? tls_context_ : nullptr);
}

void Server::migrate_close(std::string_view host, std::string_view port) {
  migrate_links_.close(host, port);
}

bool Server::debug_allowed(const engine::ClientSession* client) const {
  const std::string& allowed = config_.security.enable_debug_command;
  if (allowed == "yes") return true;
  // A script's calls have no client of their own: they run for the client that called it.
  const auto* conn = static_cast<const Connection*>(client);
  return allowed == "local" && conn != nullptr && conn->from_loopback();
}

}  // namespace ringkv::server
