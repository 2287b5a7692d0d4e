// Shutting down: what SIGTERM and SIGINT do (shutdown-on-sigterm, -sigint), and the shutdown
// itself, which SHUTDOWN and the signals share — listeners closed, streams and links stopped,
// the append-only file and the snapshot written, clients given their last replies.
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
  if (self->shutting_down_) return;
  // shutdown-on-sigterm / -sigint: SHUTDOWN's flags ("now" changes nothing here: a node never
  // waits for its replicas before it exits).
  const std::string& flags = signum == SIGINT ? self->config_.server.shutdown_on_sigint
                                              : self->config_.server.shutdown_on_sigterm;
  auto has = [&](std::string_view flag) {
    return (" " + flags + " ").find(" " + std::string(flag) + " ") != std::string::npos;
  };
  if (!self->save_before_shutdown(has("save"), has("nosave")) && !has("force")) {
    // As Redis: the node stays up (a later signal, or SHUTDOWN, tries again).
    self->shutdown_save_done_ = false;
    spdlog::error("Errors trying to shut down the server. Check the logs for more information.");
    return;
  }
  self->begin_shutdown();
}

void Server::shutdown() { begin_shutdown(); }

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
