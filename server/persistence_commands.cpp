// Server: the snapshot and append-only-file commands (SAVE, BGSAVE, BGREWRITEAOF) and the save
// at shutdown, with Redis's replies for a child already running or a transaction in progress.
#include "server/server.h"

namespace ringkv::server {

void Server::rewrite_append_only_file(protocol::ReplyWriter& reply) {
  constexpr std::string_view kRunning =
      "ERR Background append only file rewriting already in progress";
  if (aof_.rewrite_in_progress()) {
    reply.error(kRunning);
    return;
  }
  if (in_exec_ || rdb_.bgsave_in_progress()) {
    // As Redis: not forked in the middle of a transaction, but right after it.
    aof_.schedule_rewrite();
    reply.simple("Background append only file rewriting scheduled");
    return;
  }
  switch (aof_.start_rewrite(uv_now(loop_))) {
    case persistence::RewriteStart::kStarted:
      reply.simple("Background append only file rewriting started");
      break;
    case persistence::RewriteStart::kAlreadyRunning:
      reply.error(kRunning);
      break;
    case persistence::RewriteStart::kForkFailed:
      reply.error(
          "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
          "information.");
      break;
  }
}

void Server::save_snapshot(protocol::ReplyWriter& reply) {
  if (rdb_.bgsave_in_progress()) {
    reply.error("ERR Background save already in progress");
    return;
  }
  rdb_.set_changes(changes_);
  if (rdb_.save(unix_now_ms()).empty()) {
    reply.ok();
  } else {
    reply.error("ERR");
  }
}

void Server::background_save(bool schedule, protocol::ReplyWriter& reply) {
  if (rdb_.bgsave_in_progress()) {
    reply.error("ERR Background save already in progress");
    return;
  }
  if (aof_.rewrite_in_progress() || in_exec_) {
    if (schedule || in_exec_) {
      rdb_.schedule_bgsave();
      reply.simple("Background saving scheduled");
    } else {
      reply.error(
          "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
          "SCHEDULE in order to schedule a BGSAVE whenever possible.");
    }
    return;
  }
  rdb_.set_changes(changes_);
  if (rdb_.bgsave(uv_now(loop_), unix_now_ms()) == persistence::BgsaveStart::kStarted) {
    reply.simple("Background saving started");
  } else {
    reply.error("ERR");
  }
}

bool Server::save_before_shutdown(bool save, bool nosave) {
  shutdown_save_done_ = true;
  rdb_.set_changes(changes_);
  return rdb_.shutdown(save, nosave, unix_now_ms());
}

}  // namespace ringkv::server
