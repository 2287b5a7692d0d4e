// Shutting down: what SIGTERM and SIGINT do (shutdown-on-sigterm, -sigint), the wait for the
// replicas (shutdown-timeout, see shutdown_wait.h), and the shutdown itself, which SHUTDOWN and
// the signals share — listeners closed, streams and links stopped, the append-only file and the
// snapshot written, clients given their last replies.
#include <spdlog/spdlog.h>

#include <csignal>

#include "cluster/cluster.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Time the shutdown waits for clients to take their last replies before closing them anyway.
constexpr uint64_t kShutdownGraceMs = 5000;

}  // namespace

void Server::on_signal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<Server*>(handle->data);
  spdlog::warn("received {}, scheduling shutdown", signum == SIGINT ? "SIGINT" : "SIGTERM");
  if (self->shutting_down_ || self->shutdown_wait_) return;
  // shutdown-on-sigterm / -sigint: SHUTDOWN's flags.
  const std::string& text = signum == SIGINT ? self->config_.server.shutdown_on_sigint
                                             : self->config_.server.shutdown_on_sigterm;
  auto has = [&](std::string_view flag) {
    return (" " + text + " ").find(" " + std::string(flag) + " ") != std::string::npos;
  };
  const ShutdownFlags flags{
      .save = has("save"), .nosave = has("nosave"), .now = has("now"), .force = has("force")};
  if (self->start_shutdown_wait(flags)) return;
  if (!self->save_before_shutdown(flags.save, flags.nosave) && !flags.force) {
    // As Redis: the node stays up (a later signal, or SHUTDOWN, tries again).
    self->shutdown_save_done_ = false;
    spdlog::error("Errors trying to shut down the server. Check the logs for more information.");
    return;
  }
  self->begin_shutdown();
}

void Server::shutdown() { begin_shutdown(); }

void Server::shutdown_command(engine::CommandContext& ctx, const ShutdownFlags& flags) {
  if (flags.abort && shutdown_wait_) {
    spdlog::warn("shutdown aborted: the node stays up");
    end_shutdown_wait(false);
    ctx.reply.ok();
    return;
  }
  if (flags.abort || (!shutdown_wait_ && !start_shutdown_wait(flags))) {
    ServerControl::shutdown_command(ctx, flags);
    return;
  }
  // The client waits for the outcome (a SHUTDOWN during the wait joins it; with NOW it ends it).
  Connection& conn = connection_of(ctx);
  shutdown_wait_->clients.push_back(conn.reserve_reply());
  conn.block();
  if (flags.now) finish_shutdown_wait();
}

bool Server::start_shutdown_wait(const ShutdownFlags& flags) {
  if (flags.now || config_.server.shutdown_timeout <= 0 || !replicating() ||
      cluster_->replication().unacknowledged(true) == 0) {
    return false;
  }
  ShutdownWait& w = shutdown_wait_.emplace();
  w.flags = flags;
  w.deadline_ms = unix_now_ms() + config_.server.shutdown_timeout * 1000;
  w.pause_until_ms = pause_until_ms_;
  w.pause_all = pause_all_;
  // Clients' writes wait (past the deadline: the cron ends the wait first, whatever the timers'
  // order); the replicas are asked for their offsets at once, frame after frame.
  pause_clients(w.deadline_ms + 1000, false);
  cluster_->replication().set_draining(true);
  spdlog::info("Waiting for replicas before shutting down ({} frames not acknowledged).",
               cluster_->replication().unacknowledged(true));
  return true;
}

void Server::check_shutdown_wait() {
  const uint64_t behind = cluster_->replication().unacknowledged(true);
  if (behind > 0 && unix_now_ms() < shutdown_wait_->deadline_ms) return;
  if (behind > 0) {
    spdlog::warn("shutdown-timeout: {} frames still not acknowledged by replicas; shutting down",
                 behind);
  } else {
    spdlog::info("every replica has every write: shutting down");
  }
  finish_shutdown_wait();
}

void Server::finish_shutdown_wait() {
  const ShutdownFlags flags = shutdown_wait_->flags;
  if (!save_before_shutdown(flags.save, flags.nosave) && !flags.force) {
    shutdown_save_done_ = false;
    spdlog::error("Errors trying to shut down the server. Check the logs for more information.");
    end_shutdown_wait(false);
    return;
  }
  end_shutdown_wait(true);
  begin_shutdown();
}

void Server::end_shutdown_wait(bool exiting) {
  ShutdownWait w = std::move(*shutdown_wait_);
  shutdown_wait_.reset();
  cluster_->replication().set_draining(false);
  for (const Connection::ReplySlot& slot : w.clients) {
    // Exiting, the clients are closed without a reply (as Redis's exit closes them).
    slot.fill(exiting ? "" : "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", true);
  }
  if (exiting) return;
  unpause_clients();
  if (w.pause_until_ms > unix_now_ms()) pause_clients(w.pause_until_ms, w.pause_all);
}

void Server::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  // SHUTDOWN (or a signal) while a script is busy: the script stops, written or not.
  if (scripts_->running()) scripts_->kill(true);
  reap_debug_sessions(true);
  spdlog::info("shutting down: no new connections, flushing {} client(s)", clients_.size());
  close_listeners();
  uv_close(reinterpret_cast<uv_handle_t*>(&sigint_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigterm_), nullptr);
  for (auto& source : imports_) {
    // Recorded as running: the next start resumes it.
    if (source->state() != ImportSource::State::kStopped) source->stop(false);
  }
  if (cluster_) cluster_->stop();
  if (migration_) migration_->stop();
  if (replica_sync_) replica_sync_->stop();
  aof_.shutdown(uv_now(loop_));
  // A signal saves as SHUTDOWN without arguments does: when save rules are set.
  if (!shutdown_save_done_) save_before_shutdown(false, false);
  clients_.for_each([](Connection& conn) { conn.close_when_flushed(); });
  // Clients that do not take their last replies are closed after a grace period.
  uv_timer_stop(&cron_timer_);
  uv_timer_start(
      &cron_timer_,
      [](uv_timer_t* t) {
        auto* s = static_cast<Server*>(t->data);
        s->clients_.for_each([](Connection& conn) { conn.close(); });
        uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
      },
      kShutdownGraceMs, 0);
  maybe_finish_shutdown();
}

void Server::maybe_finish_shutdown() {
  if (!shutting_down_ || !clients_.empty() || shutdown_finished_) return;
  shutdown_finished_ = true;
  // The last handles: with them closed the loop runs out of work and run() returns.
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_check_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&block_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&pause_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&lock_timer_), nullptr);
  input_task_->stop();
  end_syncs();
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&cron_timer_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&cron_timer_), nullptr);
  }
}

}  // namespace ringkv::server
