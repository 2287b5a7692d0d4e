// Commands refused for the node's state before they run, as Redis refuses them: over maxmemory
// (-OOM), while the node cannot persist (-MISCONF, stop-writes-on-bgsave-error and failed
// writes to the append-only file) and while too few replicas would have the write
// (-NOREPLICAS, min-replicas-to-write). A command queued in MULTI is checked as it is queued,
// and EXEC again for what its queue holds; a cross-node transaction's part, where it runs.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cross_txn.h"
#include "common/clock.h"
#include "protocol/errors.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {

bool Server::refused_for_memory(const engine::CommandSpec& spec, Connection* conn,
                                protocol::ReplyWriter& writer) {
  // As Redis, nothing is evicted (nor refused for memory) while clients are paused.
  if (eviction_limits_.maxmemory == 0 || clients_paused()) return false;
  const bool under = evictor_.enforce(dbs_.all(), eviction_limits_);
  // As Redis times it: from the first check that could not get under maxmemory to the next that
  // is under it.
  if (!under && stats_.eviction_exceeded_since_us == 0) {
    stats_.eviction_exceeded_since_us = common::monotonic_us();
  } else if (under && stats_.eviction_exceeded_since_us != 0) {
    stats_.eviction_exceeded_total_us +=
        static_cast<uint64_t>(common::monotonic_us() - stats_.eviction_exceeded_since_us);
    stats_.eviction_exceeded_since_us = 0;
  }
  if (under) return false;
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  static const engine::CommandSpec* const kSpared[] = {kExec, engine::find_command("discard"),
                                                       engine::find_command("quit"),
                                                       engine::find_command("reset")};
  const bool in_multi = conn != nullptr && conn->transaction().active;
  const bool spared = std::find(std::begin(kSpared), std::end(kSpared), &spec) != std::end(kSpared);
  const bool exec_grows =
      &spec == kExec && in_multi && (conn->transaction().flags & engine::kDenyOom) != 0;
  if (!(spec.flags & engine::kDenyOom) && !(in_multi && !spared) && !exec_grows) return false;
  return refuse_before_run(spec, conn, &spec == kExec && in_multi, protocol::err::kOom, writer);
}

bool Server::refuse_before_run(const engine::CommandSpec& spec, Connection* conn, bool exec,
                               std::string_view error, protocol::ReplyWriter& writer) {
  observed_.commands.of(spec).rejected_calls++;
  if (exec) {
    // EXEC refused: the transaction is discarded, as Redis's execCommandAbort does.
    writer.error(std::string(protocol::err::kExecAbortBecause) + std::string(error));
    conn->transaction().end();
    unwatch_all(*conn);
    return true;
  }
  writer.error(error);
  if (conn != nullptr) transaction_refused(*conn);
  return true;
}

std::string Server::disk_error() const {
  if (config_.persistence.stop_writes_on_bgsave_error && !rdb_.last_bgsave_ok() &&
      !config_.persistence.save.empty()) {
    return std::string(protocol::err::kMisconfRdb);
  }
  if (const int error = aof_.write_error(); error != 0) {
    return std::string(protocol::err::kMisconfAof) + std::strerror(error);
  }
  return {};
}

std::string Server::writes_stopped() const {
  std::string error = disk_error();
  if (error.empty() && shutdown_wait_) error = kShuttingDownError;
  return error;
}

size_t Server::good_replicas(std::span<const std::string_view> keys) const {
  if (!replicating()) return 0;
  return cluster_->replication().good_replicas(
      keys, static_cast<uint64_t>(config_.cluster.min_replicas_max_lag));
}

std::string Server::replicas_refusal(const engine::CommandSpec& spec,
                                     std::span<const std::string_view> argv) const {
  if (!min_replicas_on()) return {};
  std::vector<size_t> positions;
  engine::key_positions(spec, argv, positions);
  std::vector<std::string_view> keys;
  keys.reserve(positions.size());
  for (size_t p : positions) keys.push_back(argv[p]);
  return replicas_refusal(keys);
}

std::string Server::replicas_refusal(std::span<const std::string_view> keys) const {
  if (!min_replicas_on() ||
      good_replicas(keys) >= static_cast<uint64_t>(config_.cluster.min_replicas_to_write)) {
    return {};
  }
  return std::string(protocol::err::kNoGoodReplicas);
}

std::string Server::part_refusal(unsigned checks, std::span<const std::string> keys) {
  if ((checks & cluster::TxnPart::kCheckMemory) != 0 && over_maxmemory()) {
    return std::string(protocol::err::kOom);
  }
  if ((checks & cluster::TxnPart::kCheckWrites) == 0) return {};
  std::string error = writes_stopped();
  if (!error.empty() || !min_replicas_on()) return error;
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  return replicas_refusal(views);
}

bool Server::refused_writes(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                            Connection* conn, protocol::ReplyWriter& writer) {
  // The common case, checked first: nothing can refuse a write now.
  if (rdb_.last_bgsave_ok() && aof_.write_error() == 0 &&
      config_.cluster.min_replicas_to_write == 0 && !shutdown_wait_) {
    return false;
  }
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  static const engine::CommandSpec* const kPing = engine::find_command("ping");
  const bool in_multi = conn != nullptr && conn->transaction().active;
  const bool exec_writes =
      &spec == kExec && in_multi && (conn->transaction().flags & engine::kWrite) != 0;
  const bool write = (spec.flags & engine::kWrite) != 0 || exec_writes;
  // A client's PING too while the node cannot persist, so that a monitoring check sees it; not a
  // peer's health check, which would fail the node over for it.
  const bool client_ping = &spec == kPing && conn != nullptr && !conn->is_peer();
  if (!write && !client_ping) return false;
  // A client's PING is refused only while the node cannot persist.
  std::string error = write ? writes_stopped() : disk_error();
  // EXEC counts this node's replicas whatever the keys its queue writes (as Redis, node-wide).
  if (error.empty() && write) error = replicas_refusal(spec, exec_writes ? argv.first(1) : argv);
  if (error.empty()) return false;
  return refuse_before_run(spec, conn, exec_writes, error, writer);
}

std::string Server::writes_refused(const engine::CommandSpec& spec,
                                   std::span<const std::string_view> argv) {
  std::string error = writes_stopped();
  return error.empty() ? replicas_refusal(spec, argv) : error;
}

}  // namespace ringkv::server
