// REPLCONF, SYNC and PSYNC: snapshots for tools (see snapshot_sync.h).
#include "server/snapshot_sync.h"

#include <spdlog/spdlog.h>

#include "common/secret.h"
#include "engine/commands/string_ops.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// A transfer stops reading the snapshot while its client has this much output unsent.
constexpr size_t kSyncOutputHigh = 8u << 20;
// How often paused transfers look whether their client took its output.
constexpr uint64_t kSyncResumeMs = 5;

constexpr std::string_view kNotReplicable =
    "ERR ringkv can't be replicated with REPLICAOF: it sends snapshots only (REPLCONF rdb-only 1, "
    "then SYNC or PSYNC, as redis-cli --rdb does)";

}  // namespace

void Server::replconf(engine::CommandContext& ctx) {
  if (ctx.argv.size() % 2 == 0) {
    ctx.reply.error("ERR syntax error");
    return;
  }
  auto* conn = &connection_of(ctx);
  if (conn == nullptr) {
    ctx.reply.ok();
    return;
  }
  Connection::ReplicaHandshake& hs = conn->replica_handshake();
  for (size_t i = 1; i + 1 < ctx.argv.size(); i += 2) {
    const std::string_view option = ctx.argv[i];
    const std::string_view value = ctx.argv[i + 1];
    if (engine::equals_ignore_case(option, "listening-port")) {
      hs.listening_port = true;
    } else if (engine::equals_ignore_case(option, "capa")) {
      if (engine::equals_ignore_case(value, "eof")) hs.capa_eof = true;
    } else if (engine::equals_ignore_case(option, "rdb-only")) {
      int64_t v = 0;
      if (!engine::parse_int64(value, v) || (v != 0 && v != 1)) {
        ctx.reply.error("ERR value is out of range, must be positive");
        return;
      }
      hs.rdb_only = v == 1;
    } else if (engine::equals_ignore_case(option, "ack") ||
               engine::equals_ignore_case(option, "getack")) {
      // Sent by replicas once in sync; ringkv has none. As Redis, an ACK gets no reply.
      return;
    } else if (!engine::equals_ignore_case(option, "ip-address") &&
               !engine::equals_ignore_case(option, "rdb-filter-only")) {
      ctx.reply.error("ERR Unrecognized REPLCONF option: " + std::string(option));
      return;
    }
  }
  ctx.reply.ok();
}

void Server::sync(engine::CommandContext& ctx, bool psync) {
  auto* conn = &connection_of(ctx);
  if (conn == nullptr || conn->is_peer()) {
    ctx.reply.error("ERR Replica can't interact with the keyspace");
    return;
  }
  const Connection::ReplicaHandshake hs = conn->replica_handshake();
  if (hs.listening_port && !hs.rdb_only) {
    spdlog::warn("refusing {} from {}: a redis-server can't replicate ringkv",
                 psync ? "PSYNC" : "SYNC", conn->peer_address());
    ctx.reply.error(kNotReplicable);
    return;
  }
  if (syncs_.count(conn->id()) != 0) return;  // Redis ignores SYNC on a link already syncing
  // Counted as Redis counts them: a PSYNC that names an ID (not "?") failed a partial resync.
  if (psync && !ctx.argv[1].starts_with('?')) sync_partial_err_++;
  sync_full_++;
  auto transfer = std::make_unique<SyncTransfer>();
  transfer->client_id = conn->id();
  transfer->eof_mark = hs.capa_eof;
  const uint64_t id = conn->id();
  std::string error;
  transfer->stream = persistence::SnapshotStream::start(
      loop_, dbs_.all(), rdb_.save_options(unix_now_ms()),
      [this, id](std::string_view chunk) { sync_data(id, chunk); },
      [this, id](bool ok, const std::string& why) { sync_ended(id, ok, why); }, error);
  if (transfer->stream == nullptr) {
    spdlog::error("can't send a snapshot to {}: {}", conn->peer_address(), error);
    ctx.reply.error("ERR");
    return;
  }
  sync_forks_++;
  latest_sync_fork_usec_ = transfer->stream->fork_usec();
  spdlog::info("{} from {}: streaming a snapshot of {} keys (fork took {} us)",
               psync ? "PSYNC" : "SYNC", conn->peer_address(), store_.size(),
               transfer->stream->fork_usec());
  // The client's later requests wait; what it sends now is the handshake's end.
  conn->block();
  // Made at the first PSYNC (as random as Redis's, new at each start).
  if (replid_.empty()) replid_ = common::random_hex(20);
  if (psync) ctx.reply.raw("+FULLRESYNC " + replid_ + " 0\r\n");
  if (transfer->eof_mark) {
    transfer->mark = common::random_hex(20);
    ctx.reply.raw("$EOF:" + transfer->mark + "\r\n");
  }
  syncs_[id] = std::move(transfer);
}

void Server::sync_data(uint64_t id, std::string_view chunk) {
  auto it = syncs_.find(id);
  if (it == syncs_.end()) return;
  SyncTransfer& t = *it->second;
  Connection* conn = clients_.find(id);
  // A closing client's transfer ends in on_connection_closed (not here, inside the stream's own
  // callback).
  if (conn == nullptr || conn->closing()) {
    t.stream->pause();
    return;
  }
  if (!t.eof_mark) {
    t.collected.append(chunk);
    return;
  }
  conn->reply_writer().raw(chunk);
  conn->output_added();
  if (conn->pending_output() >= kSyncOutputHigh) {
    t.stream->pause();
    if (!sync_timer_ready_) {
      // Made on first use: most nodes never send a snapshot.
      uv_timer_init(loop_, &sync_timer_);
      sync_timer_.data = this;
      sync_timer_ready_ = true;
    }
    if (!uv_is_active(reinterpret_cast<uv_handle_t*>(&sync_timer_))) {
      uv_timer_start(
          &sync_timer_, [](uv_timer_t* h) { static_cast<Server*>(h->data)->resume_syncs(); },
          kSyncResumeMs, kSyncResumeMs);
    }
  }
}

void Server::resume_syncs() {
  bool paused = false;
  for (auto& [id, t] : syncs_) {
    if (!t->stream || !t->stream->paused()) continue;
    Connection* conn = clients_.find(id);
    if (conn == nullptr || conn->closing()) continue;
    if (conn->pending_output() >= kSyncOutputHigh / 2) {
      paused = true;
      continue;
    }
    t->stream->resume();
  }
  if (!paused && sync_timer_ready_) uv_timer_stop(&sync_timer_);
}

void Server::sync_ended(uint64_t id, bool ok, const std::string& error) {
  auto it = syncs_.find(id);
  if (it == syncs_.end()) return;
  std::unique_ptr<SyncTransfer> t = std::move(it->second);
  syncs_.erase(it);
  Connection* conn = clients_.find(id);
  if (conn == nullptr || conn->closing()) return;
  if (!ok) {
    spdlog::warn("snapshot for {} failed: {}", conn->peer_address(), error);
    conn->close();
    return;
  }
  protocol::ReplyWriter& w = conn->reply_writer();
  if (t->eof_mark) {
    w.raw(t->mark);
  } else {
    w.raw("$" + std::to_string(t->collected.size()) + "\r\n");
    w.raw(t->collected);
  }
  conn->output_added();
  spdlog::info("snapshot of {} bytes sent to {}", t->stream->bytes(), conn->peer_address());
  // No command stream follows (see snapshot_sync.h).
  conn->close_when_flushed();
}

void Server::end_syncs() {
  syncs_.clear();
  if (sync_timer_ready_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&sync_timer_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&sync_timer_), nullptr);
  }
}

}  // namespace ringkv::server
