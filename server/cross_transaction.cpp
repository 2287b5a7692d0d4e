// Cross-node transactions, the server's side (README: Transactions across nodes; the protocol is
// in cluster/cross_txn.h). As a coordinator: WATCH over several nodes, and EXEC of a transaction
// whose commands touch several nodes, split into one part per node and merged back into one
// EXEC array in the client's order. As a participant: the RINGKV.TXN frames, the per-key locks
// they take, the leases that end them when the coordinator goes silent, and the wait of every
// other command on a locked key.
#include <spdlog/spdlog.h>

#include <map>

#include "cluster/cluster.h"
#include "cluster/merge.h"
#include "common/numbers.h"
#include "engine/scripting/script_engine.h"
#include "protocol/errors.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

std::string lock_timeout_error(uint64_t waited_ms, std::string_view where) {
  std::string text = "TRYAGAIN keys locked by another transaction for more than " +
                     std::to_string(waited_ms) + " ms";
  if (!where.empty()) text += " on " + std::string(where);
  return text;
}

std::string reply_line(std::string_view prefix, std::string_view text) {
  std::string out(prefix);
  out.append(text);
  out += "\r\n";
  return out;
}

}  // namespace

// --- coordinator ---------------------------------------------------------------------------

bool Server::watch_in_cluster(Connection& conn, std::span<const std::string_view> argv,
                              protocol::ReplyWriter& writer) {
  Transaction& tx = conn.transaction();
  const size_t self = cluster_->router().self();
  const hashring::HashRing& ring = cluster_->routing_ring();
  // The keys per node, in the order their nodes first appear.
  std::vector<std::pair<size_t, std::vector<std::string_view>>> groups;
  for (size_t i = 1; i < argv.size(); ++i) {
    const size_t node = ring.owner_index(argv[i]);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [node](const auto& g) { return g.first == node; });
    if (it == groups.end()) {
      groups.push_back({node, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(argv[i]);
  }
  for (const auto& g : groups) tx.touch(g.first, true, cluster_->routing_epoch());
  // All here: the WATCH command itself.
  if (groups.size() == 1 && groups[0].first == self) return false;
  // The peers' WATCHes travel on the client's transaction link to each; one reply for all.
  Connection::ReplySlot slot = conn.reserve_reply();
  conn.block();
  struct Merge {
    size_t waiting;
    std::string error;
  };
  auto merge = std::make_shared<Merge>(Merge{groups.size(), {}});
  auto part_done = [this, slot, merge](std::string_view reply) {
    if (merge->error.empty() && !reply.empty() && reply[0] == '-') merge->error.assign(reply);
    if (--merge->waiting > 0) return;
    count_error_reply(merge->error);
    slot.fill(merge->error.empty() ? std::string_view("+OK\r\n") : merge->error, true);
  };
  for (const auto& [node, keys] : groups) {
    if (node == self) {
      watch_keys(conn, conn.db(), keys);
      part_done("+OK\r\n");
      continue;
    }
    std::vector<std::string_view> frame{"WATCH"};
    frame.insert(frame.end(), keys.begin(), keys.end());
    cluster_->transaction_send(node, conn.id(), frame, writer.version(), conn.db(), part_done);
  }
  return true;
}

void Server::exec_across(Connection& conn, protocol::ReplyWriter& writer) {
  Transaction& tx = conn.transaction();
  const size_t self = cluster_->router().self();
  std::vector<cluster::TxnPart> parts;
  std::vector<std::vector<size_t>> positions;
  auto part_of = [&](size_t node) -> size_t {
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].node == node) return p;
    }
    parts.emplace_back().node = node;
    positions.emplace_back();
    return parts.size() - 1;
  };
  const size_t total = tx.queued.size();
  note_transaction_writes(conn, tx.queued);
  track_block_reads(conn, tx.queued, hashring::HashRing::kNoNode);
  // The database each command runs in: a SELECT in the block (run here, with the keyless
  // commands) moves the commands after it, which then carry RINGKV.DB n (see run_block; a part
  // keeps the database its last command named, so every command after a SELECT names one).
  int db = -1;
  // A command split per owner: its fragments run in their nodes' parts and their replies are
  // merged at its position, as the split merges them outside a transaction.
  struct Split {
    const engine::CommandSpec* spec = nullptr;
    std::vector<std::pair<size_t, std::vector<size_t>>> fragments;  // node, value positions
  };
  std::map<size_t, Split> splits;
  std::vector<std::string_view> views;  // scratch: a queued command's arguments
  std::vector<std::string_view> piece;  // scratch: the arguments of what a part runs of it
  std::vector<size_t> keys;             // scratch: their key positions
  // Places the command at position `i` (or one fragment of it) in `node`'s part.
  auto place = [&](size_t i, size_t node, const engine::CommandSpec* spec,
                   std::vector<std::string> command) {
    const size_t p = part_of(node);
    cluster::TxnPart& part = parts[p];
    if (spec != nullptr) {
      if (spec->flags & engine::kDenyOom) part.deny_oom = true;
      if (spec->flags & engine::kWrite) part.writes = true;
      piece.assign(command.begin(), command.end());
      engine::key_positions(*spec, piece, keys);
      for (size_t pos : keys) part.keys.push_back(command[pos]);
    }
    const int selected = db_after_block({&command, 1});
    if (selected >= 0) {
      db = selected;
    } else if (db >= 0) {
      command.insert(command.begin(), {std::string(cluster::kDbPrefix), std::to_string(db)});
    }
    positions[p].push_back(i);
    part.commands.push_back(std::move(command));
  };
  for (size_t i = 0; i < total; ++i) {
    std::vector<std::string>& args = tx.queued[i];
    views.assign(args.begin(), args.end());
    std::string error;
    const engine::CommandSpec* spec = engine::resolve_command(views, error);
    const size_t node = tx.queued_nodes[i];
    if (node == Transaction::kSplit && spec != nullptr) {
      const cluster::Route route = cluster_->router().route(*spec, views);
      if (route.kind == cluster::RouteKind::kSplit) {
        Split& split = splits[i];
        split.spec = spec;
        for (const cluster::Fragment& f : route.fragments) {
          split.fragments.emplace_back(f.node, cluster::fragment_positions(*spec, route, f));
          place(i, f.node, spec, cluster::fragment_command(views, route, f));
        }
        continue;
      }
    }
    // Keyless commands (PING, ECHO, CLIENT...) run here, for this client.
    place(i, node == Transaction::kNoNode || node == Transaction::kSplit ? self : node, spec,
          std::move(args));
  }
  // Every node with a WATCH takes part, to check it under its locks (the participant adds the
  // keys it watches to what it locks).
  for (size_t node : tx.watch_nodes) part_of(node);
  tx.end();
  Connection::ReplySlot slot = conn.reserve_reply();
  // Until it ends, the client sends nothing more and cannot go away (its part here runs with it).
  conn.protect();
  const uint64_t id = conn.id();
  const protocol::RespVersion resp = writer.version();
  const bool watched = !tx.watch_nodes.empty();
  std::vector<size_t> part_nodes;
  for (const cluster::TxnPart& part : parts) part_nodes.push_back(part.node);
  auto merge = [splits = std::move(splits), part_nodes = std::move(part_nodes), resp](
                   size_t position,
                   std::span<const std::pair<size_t, std::string_view>> replies) -> std::string {
    const auto it = splits.find(position);
    if (it == splits.end()) return cluster::error_reply("ERR malformed transaction reply");
    const Split& split = it->second;
    std::string out;
    cluster::ReplyMerge m(split.spec->merge, (split.spec->flags & engine::kWrite) != 0, resp,
                          replies.size(), [&out](std::string_view merged) { out = merged; });
    for (size_t k = 0; k < replies.size(); ++k) {
      for (const auto& [node, values] : split.fragments) {
        if (node == part_nodes[replies[k].first]) m.set_positions(k, values);
      }
    }
    for (size_t k = 0; k < replies.size(); ++k) m.part_done(k, true, replies[k].second);
    return out;
  };
  auto session = cluster_->begin_transaction(id, std::move(parts), resp, conn.db(), true);
  session->execute([this, id, slot, resp, watched, positions = std::move(positions), total,
                    merge = std::move(merge)](cluster::TxnOutcome outcome) {
    std::string reply;
    protocol::ReplyWriter w(reply, resp);
    switch (outcome.kind) {
      case cluster::TxnOutcome::kCommitted:
        reply = cluster::interleave_replies(outcome.replies, positions, total, merge);
        if (reply.empty()) w.error("ERR malformed transaction reply from a peer");
        break;
      case cluster::TxnOutcome::kWatched:
        w.null_array();
        break;
      case cluster::TxnOutcome::kRingChanged:
        if (watched) {
          w.null_array();
        } else {
          w.error("EXECABORT Transaction discarded because the cluster ring changed");
        }
        break;
      case cluster::TxnOutcome::kAborted:
        w.error(std::string(protocol::err::kExecAbortBecause) + outcome.error);
        break;
      case cluster::TxnOutcome::kIncomplete:
        spdlog::warn("client id={}: {}", id, outcome.error);
        w.error(outcome.error);
        break;
    }
    count_error_reply(reply);
    slot.fill(reply);
    if (Connection* c = find_client(id)) {
      unwatch_all(*c);
      c->unprotect();
    }
  });
}

void Server::lock_here(uint64_t client_id, std::vector<std::string> keys, bool watches,
                       unsigned checks, uint64_t wait_ms,
                       std::function<void(std::string_view reply)> done) {
  Connection* conn = find_client(client_id);
  if (conn == nullptr) return done("-ERR client closed\r\n");
  if (const std::string error = part_refusal(checks, keys); !error.empty()) {
    return done(reply_line("-", error));
  }
  if (watches) {
    // A cluster has database 0 only: locks are by key name.
    for (const auto& [db, key] : conn->transaction().watched) keys.push_back(key);
  }
  if (locks_.try_lock(client_id, keys)) return done(locked_here(*conn, watches));
  if (wait_ms == 0) return done(cluster::kTxnBusy);
  local_lock_waits_.push_back(LocalLockWait{client_id, std::move(keys), watches,
                                            uv_now(loop_) + wait_ms, wait_ms, std::move(done)});
  arm_lock_timer();
}

std::string Server::locked_here(Connection& conn, bool watches) {
  if (!watches) return std::string(cluster::kTxnLocked);
  Transaction& tx = conn.transaction();
  // A watched key whose TTL ran out since WATCH counts as changed. The WATCHes stay (a first
  // attempt given up checks them again); they go when the part ran or the transaction ended.
  for (const auto& [db, key] : tx.watched) dbs_[db].peek(key);
  if (!tx.watched_changed) return std::string(cluster::kTxnLocked);
  release_locks(conn.id());
  return std::string(cluster::kTxnWatched);
}

std::string Server::run_here(uint64_t client_id,
                             const std::vector<std::vector<std::string>>& commands,
                             protocol::RespVersion resp) {
  Connection* conn = find_client(client_id);
  if (conn == nullptr) return "-ERR client closed\r\n";
  std::string out;
  protocol::ReplyWriter w(out, resp);
  run_block(*conn, commands, w);
  if (!ready_keys_.empty() && !scripts_->running()) serve_ready_keys();
  return out;
}

void Server::release_here(uint64_t client_id) {
  std::erase_if(local_lock_waits_,
                [client_id](const LocalLockWait& w) { return w.client_id == client_id; });
  release_locks(client_id);
}

// --- participant -----------------------------------------------------------------------------

bool Server::txn_frame(Connection& conn, std::span<const std::string_view> args,
                       protocol::ReplyWriter& writer) {
  auto refuse_frame = [&](std::string_view text) {
    writer.error(text);
    return true;
  };
  if (args.empty()) return refuse_frame("ERR RINGKV.TXN needs a subcommand");
  const std::string_view sub = args[0];
  const uint64_t now = uv_now(loop_);
  if (common::equals_ignore_case(sub, "release")) {
    release_locks(conn.id());
    txn_leases_.erase(conn.id());
    // Final: the transaction ended, and the WATCHes it was given here go too.
    if (args.size() < 2 || args[1] != "0") unwatch_all(conn);
    writer.ok();
    return true;
  }
  if (common::equals_ignore_case(sub, "lock") && args.size() >= 4) {
    const std::optional<int64_t> wait = common::parse_integer(args[1]);
    const std::optional<int64_t> lease = common::parse_integer(args[2]);
    if (!wait || !lease || *wait < 0 || *lease < 1) {
      return refuse_frame("ERR RINGKV.TXN LOCK needs a wait and a lease");
    }
    // Whatever it answers, the WATCHes stay until the coordinator's final RELEASE or the RUN.
    if (script_busy_) return refuse_frame(engine::busy_error(scripts_->running_function()));
    if (!cluster_->lease_valid()) {
      return refuse_frame("CLUSTERDOWN this node cannot reach a majority of the cluster's members");
    }
    std::vector<std::string> keys(args.begin() + 4, args.end());
    const std::optional<uint64_t> checks = common::parse_unsigned(args[3]);
    if (const std::string error = part_refusal(checks.value_or(0), keys); !error.empty()) {
      return refuse_frame(error);
    }
    for (const auto& [db, key] : conn.transaction().watched) keys.push_back(key);
    if (!locks_.try_lock(conn.id(), keys)) {
      if (*wait == 0) {
        writer.raw(cluster::kTxnBusy);
        return true;
      }
      auto [it, added] = lock_waits_.emplace(conn.id(), now + static_cast<uint64_t>(*wait));
      if (added) arm_lock_timer();
      if (now < it->second) return false;  // run again when keys are released
      lock_waits_.erase(it);
      return refuse_frame(
          lock_timeout_error(static_cast<uint64_t>(*wait), cluster_->self_address()));
    }
    lock_waits_.erase(conn.id());
    const std::string answer = locked_here(conn, true);
    if (answer == cluster::kTxnLocked) {
      txn_leases_[conn.id()] =
          TxnLease{now + static_cast<uint64_t>(*lease), cluster_->routing_epoch(), false};
      arm_lock_timer();
    }
    writer.raw(answer);
    return true;
  }
  if (common::equals_ignore_case(sub, "run") && args.size() >= 5) {
    std::vector<std::vector<std::string>> commands;
    const bool resp3 = args[1] == "3";
    const bool release = args[2] == "1";
    const std::optional<int64_t> not_after = common::parse_integer(args[3]);
    const std::optional<int64_t> n = common::parse_integer(args[4]);
    size_t pos = 5;
    for (int64_t i = 0; n && i < *n; ++i) {
      const std::optional<int64_t> argc =
          pos < args.size() ? common::parse_integer(args[pos]) : std::nullopt;
      if (!argc || *argc < 1 || pos + 1 + static_cast<size_t>(*argc) > args.size()) {
        return refuse_frame("ERR malformed RINGKV.TXN RUN");
      }
      commands.emplace_back(args.begin() + static_cast<ptrdiff_t>(pos + 1),
                            args.begin() + static_cast<ptrdiff_t>(pos + 1 + *argc));
      pos += 1 + static_cast<size_t>(*argc);
    }
    if (!n || !not_after || pos != args.size()) return refuse_frame("ERR malformed RINGKV.TXN RUN");
    auto it = txn_leases_.find(conn.id());
    if (it == txn_leases_.end()) {
      return refuse_frame("ERR no locks held here for this transaction");
    }
    if (it->second.expired || now >= it->second.until) {
      release_locks(conn.id());
      txn_leases_.erase(it);
      return refuse_frame("ERR the transaction's locks here were released: its lease ran out");
    }
    if (it->second.epoch != cluster_->routing_epoch()) {
      release_locks(conn.id());
      txn_leases_.erase(it);
      return refuse_frame("ERR the cluster ring changed here since the transaction locked");
    }
    if (script_busy_) return refuse_frame(engine::busy_error(scripts_->running_function()));
    if (unix_now_ms() > *not_after) {
      release_locks(conn.id());
      txn_leases_.erase(conn.id());
      return refuse_frame("ERR the coordinator stopped waiting for this transaction's part");
    }
    const protocol::RespVersion version = writer.version();
    writer.set_version(resp3 ? protocol::RespVersion::kResp3 : protocol::RespVersion::kResp2);
    run_block(conn, commands, writer);
    writer.set_version(version);
    if (release) {
      txn_leases_.erase(conn.id());
      release_locks(conn.id());
      unwatch_all(conn);
    }
    if (!ready_keys_.empty() && !scripts_->running()) serve_ready_keys();
    return true;
  }
  return refuse_frame("ERR unknown RINGKV.TXN subcommand or wrong number of arguments");
}

// --- waiting for locked keys -----------------------------------------------------------------

Server::LockCheck Server::lock_check(Connection& conn, std::span<const std::string_view> command,
                                     protocol::ReplyWriter& writer) {
  // Not a peer's ring-change or replication frames: they are copies, not requests.
  if (!locks_.empty() && !conn.control_link() && conn.replication_source().empty()) {
    const LockCheck check = check_locks(conn, command, writer);
    if (check == LockCheck::kAnswered) stats_.total_commands_processed++;
    return check;
  }
  // Its keys were released and nothing is locked now: a wait it began is over (a wait left
  // behind would end its next wait at the old deadline).
  if (!lock_waits_.empty()) lock_waits_.erase(conn.id());
  return LockCheck::kRun;
}

Server::LockCheck Server::check_locks(Connection& conn, std::span<const std::string_view> command,
                                      protocol::ReplyWriter& writer) {
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  if (command.empty()) return LockCheck::kRun;
  std::string error;
  const engine::CommandSpec* spec = conn.is_peer() ? engine::resolve_command(command, error)
                                                   : engine::resolve_client_command(command, error);
  if (spec == nullptr) return LockCheck::kRun;
  Transaction& tx = conn.transaction();
  std::vector<std::string_view> keys;
  if (spec == kExec) {
    // A transaction's commands run at EXEC: they wait for their keys then.
    if (!tx.active || tx.aborted) return LockCheck::kRun;
    std::vector<std::string_view> qv;
    for (const auto& q : tx.queued) {
      qv.assign(q.begin(), q.end());
      if (const engine::CommandSpec* qs = engine::resolve_command(qv, error)) {
        engine::key_positions(*qs, qv, key_scratch_);
        for (size_t pos : key_scratch_) keys.push_back(q[pos]);
      }
    }
  } else {
    // Queued in MULTI, not run now.
    if (tx.active && !(spec->flags & engine::kRunsInMulti)) return LockCheck::kRun;
    if (spec->first_key() <= 0 && spec->find_keys == nullptr) return LockCheck::kRun;
    engine::key_positions(*spec, command, key_scratch_);
    for (size_t pos : key_scratch_) keys.push_back(command[pos]);
  }
  if (!locks_.blocked(conn.id(), keys)) {
    if (!lock_waits_.empty()) lock_waits_.erase(conn.id());
    return LockCheck::kRun;
  }
  const uint64_t now = uv_now(loop_);
  const auto limit = static_cast<uint64_t>(config_.cluster.request_timeout_ms);
  auto [it, added] = lock_waits_.emplace(conn.id(), now + limit);
  if (added) arm_lock_timer();
  if (now < it->second) return LockCheck::kHeld;
  lock_waits_.erase(it);
  const std::string text = lock_timeout_error(limit, {});
  if (spec == kExec) {
    tx.end();
    unwatch_all(conn);
    writer.error(std::string(protocol::err::kExecAbortBecause) + text);
  } else {
    writer.error(text);
  }
  return LockCheck::kAnswered;
}

void Server::release_locks(uint64_t owner) {
  if (!locks_.release(owner)) return;
  // Whoever waits tries again: connections run their request again, parts coordinated here
  // take their keys in the order they asked.
  for (const auto& [id, deadline] : lock_waits_) {
    if (Connection* c = find_client(id)) c->resume();
  }
  retry_local_lock_waits();
}

void Server::retry_local_lock_waits() {
  std::vector<LocalLockWait> ready;
  for (auto it = local_lock_waits_.begin(); it != local_lock_waits_.end();) {
    if (locks_.try_lock(it->client_id, it->keys)) {
      ready.push_back(std::move(*it));
      it = local_lock_waits_.erase(it);
    } else {
      ++it;
    }
  }
  for (LocalLockWait& w : ready) {
    Connection* conn = find_client(w.client_id);
    w.done(conn != nullptr ? locked_here(*conn, w.watches) : std::string("-ERR client closed\r\n"));
  }
}

void Server::locks_closed(uint64_t conn_id) {
  lock_waits_.erase(conn_id);
  txn_leases_.erase(conn_id);
  release_here(conn_id);
}

void Server::arm_lock_timer() {
  // Waits already over were resumed (they answer when they run again): not again, or a timer
  // due at once would run forever inside the loop's timer phase.
  const uint64_t now = uv_now(loop_);
  uint64_t next = 0;
  auto consider = [&next, now](uint64_t t) {
    if (t > now && (next == 0 || t < next)) next = t;
  };
  for (const auto& [id, deadline] : lock_waits_) consider(deadline);
  for (const auto& [id, lease] : txn_leases_) {
    if (!lease.expired) consider(lease.until);
  }
  for (const LocalLockWait& w : local_lock_waits_) consider(w.deadline);
  if (next == 0) {
    uv_timer_stop(&lock_timer_);
    return;
  }
  uv_timer_start(
      &lock_timer_, [](uv_timer_t* t) { static_cast<Server*>(t->data)->lock_timer_fired(); },
      next - now, 0);
}

void Server::lock_timer_fired() {
  const uint64_t now = uv_now(loop_);
  // A coordinator that went silent: its locks here go, and a late RUN is refused.
  std::vector<uint64_t> lapsed;
  for (auto& [id, lease] : txn_leases_) {
    if (!lease.expired && now >= lease.until) {
      lease.expired = true;
      lapsed.push_back(id);
    }
  }
  for (uint64_t id : lapsed) {
    spdlog::warn("transaction locks of peer connection id={} released: its lease ran out", id);
    release_locks(id);
  }
  // Requests whose wait ran out answer with the timeout when they run again.
  for (auto it = lock_waits_.begin(); it != lock_waits_.end();) {
    Connection* c = now >= it->second ? find_client(it->first) : nullptr;
    if (now >= it->second && c == nullptr) {
      it = lock_waits_.erase(it);
      continue;
    }
    if (c != nullptr) c->resume();
    ++it;
  }
  std::vector<LocalLockWait> expired;
  for (auto it = local_lock_waits_.begin(); it != local_lock_waits_.end();) {
    if (now >= it->deadline) {
      expired.push_back(std::move(*it));
      it = local_lock_waits_.erase(it);
    } else {
      ++it;
    }
  }
  for (LocalLockWait& w : expired) {
    w.done(reply_line("-", lock_timeout_error(w.wait_ms, cluster_->self_address())));
  }
  arm_lock_timer();
}

bool Server::over_maxmemory() {
  return eviction_limits_.maxmemory != 0 && !evictor_.enforce(store_, eviction_limits_);
}

}  // namespace ringkv::server
