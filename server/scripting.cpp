// The server's side of Lua scripts (engine::ScriptHost): running the commands a script calls
// through the pipeline, recording the script's effects, and keeping the node responsive while
// a script is busy.
//
// Busy scripts. A script that runs past busy-reply-threshold makes the engine call
// script_busy() from its instruction hook every 100 000 instructions. Each call runs one
// non-blocking pass of the event loop (uv_run NOWAIT) from inside the command being executed:
// other clients' requests are read and answered with -BUSY, except the allow_busy commands
// (SCRIPT KILL, SHUTDOWN, AUTH, HELLO, MULTI...), which is how SCRIPT KILL reaches the hook. To
// make that nested pass safe:
//   - the script's client is protected (Connection::protect): nothing is read from it, its
//     queued replies stay put and its close is deferred, so the request, its reply writer and
//     the connection outlive the pass;
//   - the script's arguments were copied by the engine, its effects are kept aside (not in the
//     append-only file's pending records) and the records pending before it are written, so
//     -BUSY replies are not held back waiting for a write;
//   - the cron and the blocked-client timer do nothing while busy (no expiry, no blocked client
//     served in the middle of the script) and the timer is armed again when it ends;
//   - flush_dirty walks its list by index and closed connections are nulled, not erased, so a
//     pass run from inside it leaves the outer walk valid.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "cluster/cluster.h"
#include "protocol/errors.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {

void Server::script_begin(engine::ClientSession* client) {
  script_conn_ = static_cast<Connection*>(client);
  script_effects_.clear();
  // As Redis 7: a script's SELECT lasts until the script ends, not after it.
  script_caller_db_ = script_conn_ != nullptr ? script_conn_->db() : 0;
}

void Server::script_call(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                         protocol::ReplyWriter& reply) {
  // The script's caller's rights, as Redis checks them before anything else.
  if (refused_by_acl(Origin::script(script_conn_), spec, argv, reply)) return;
  if (cluster_) {
    const cluster::Route route = cluster_->router().route(spec, argv);
    if (route.kind == cluster::RouteKind::kCrossSlot) {
      reply.error("ERR Script attempted to access keys that do not hash to the same slot");
      return;
    }
    // Keyspace-wide commands (KEYS, DBSIZE...) see this node's keys, as in Redis Cluster.
    if (route.kind == cluster::RouteKind::kRemote || route.kind == cluster::RouteKind::kSplit) {
      reply.error("ERR Script attempted to access a non local key in a cluster node");
      return;
    }
  }
  stats_.total_commands_processed++;
  run(Origin::script(script_conn_), spec, argv, reply);
}

void Server::script_busy(bool first) {
  if (first) {
    spdlog::warn(
        "Slow script detected: still in execution after {} milliseconds. You can try killing "
        "the script using the SCRIPT KILL command.",
        scripts_->busy_threshold_ms());
    script_busy_ = true;
    if (script_conn_ != nullptr) script_conn_->protect();
  }
  // Records of commands that finished before the script: written now, so replies are not held.
  write_aof();
  uv_run(loop_, UV_RUN_NOWAIT);
}

void Server::script_end(bool was_busy) {
  if (!script_effects_.empty()) {
    std::vector<std::pair<int, std::vector<std::string>>> effects;
    effects.swap(script_effects_);
    // Inside EXEC the transaction's MULTI already wraps them.
    const bool wrap = effects.size() > 1 && !in_exec_;
    if (wrap) begin_record_block();
    for (const auto& [db, command] : effects) {
      const std::vector<std::string_view> argv(command.begin(), command.end());
      feed_record(db, argv);
    }
    if (wrap) end_record_block();
  }
  Connection* conn = script_conn_;
  script_conn_ = nullptr;
  if (conn != nullptr) conn->set_db(script_caller_db_);
  if (!was_busy) return;
  script_busy_ = false;
  if (conn != nullptr) conn->unprotect();
  arm_block_timer();
}

void Server::record(std::span<const std::string_view> argv, const engine::CommandSpec* spec) {
  if (scripts_->running()) {
    script_effects_.emplace_back(events_db_, std::vector<std::string>(argv.begin(), argv.end()));
    return;
  }
  feed_record(events_db_, argv, spec);
}

void Server::record(const std::vector<std::string>& argv) {
  if (scripts_->running()) {
    script_effects_.emplace_back(events_db_, argv);
    return;
  }
  const std::vector<std::string_view> views(argv.begin(), argv.end());
  feed_record(events_db_, views);
}

void Server::feed_record(int db, std::span<const std::string_view> argv,
                         const engine::CommandSpec* spec) {
  if (aof_.wants_records()) {
    aof_.select(db);
    aof_.feed(argv);
  }
  // Copies written here (a primary's stream, a ring change) are another node's to send on.
  if (replicating() && !applying_copy_) cluster_->replication().feed(db, argv, spec);
}

void Server::begin_record_block() {
  aof_.begin_transaction();
  if (replicating()) cluster_->replication().begin_block();
}

void Server::end_record_block() {
  aof_.end_transaction();
  if (replicating()) cluster_->replication().end_block();
}

int Server::debug_fork(engine::ClientSession* client) {
  auto* conn = static_cast<Connection*>(client);
  const int fd = conn->socket_fd();
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid > 0) {
    spdlog::warn("forked debugging session {} for client {}", pid, conn->id());
    debug_sessions_.push_back(pid);
    // The copy answers the client: nothing more is written to it from here.
    conn->hand_over_session();
    conn->close();
    return pid;
  }
  // The copy runs the script and exits: it ignores the signals meant for the node, and keeps
  // no descriptor of the node's (listeners, peers, files, the loop's) but the client's socket,
  // so nothing it does can reach them.
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  if (fd > 3) close_range(3, static_cast<unsigned>(fd) - 1, 0);
  close_range(static_cast<unsigned>(fd) + 1, ~0u, 0);
  return 0;
}

void Server::reap_debug_sessions(bool kill_them) {
  for (size_t i = 0; i < debug_sessions_.size();) {
    const pid_t pid = debug_sessions_[i];
    if (kill_them) {
      spdlog::warn("killing debugging session {}", pid);
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    } else if (waitpid(pid, nullptr, WNOHANG) == 0) {
      ++i;
      continue;
    }
    debug_sessions_.erase(debug_sessions_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

bool Server::refused_while_busy(const Origin& origin, const engine::CommandSpec& spec,
                                protocol::ReplyWriter& writer) {
  if (!script_busy_ || (spec.flags & engine::kAllowBusy) != 0) return false;
  refuse(origin, engine::busy_error(scripts_->running_function()), writer, &spec);
  return true;
}

void Server::flush_dirty() {
  // BCAST invalidations of this iteration's changes leave with its replies, as Redis sends them
  // before sleeping.
  if (tracking_.broadcast_pending()) broadcast_invalidations();
  // One write (and fsync) for every record of this iteration, before any of their replies.
  write_aof();
  for (size_t i = 0; i < dirty_.size(); ++i) {
    if (Connection* c = dirty_[i]) c->scheduled_flush();
  }
  dirty_.clear();
}

}  // namespace ringkv::server
