// Transactions: MULTI queues a client's commands, EXEC runs them back to back (nothing else runs
// in between: the loop is single-threaded), DISCARD drops them, WATCH makes EXEC fail when a
// watched key changed in the meantime — written by anyone, expired or flushed.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/cluster.h"
#include "common/numbers.h"
#include "protocol/errors.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

constexpr std::string_view kWatchInMulti = "ERR WATCH inside MULTI is not allowed";

}  // namespace

bool Server::queue_in_transaction(Connection& conn, const engine::CommandSpec& spec,
                                  std::span<const std::string_view> argv,
                                  protocol::ReplyWriter& writer, bool runs_here) {
  Transaction& tx = conn.transaction();
  if (!tx.active) return false;
  if (spec.flags & engine::kRunsInMulti) return false;
  if (spec.flags & engine::kNoMulti) {
    writer.error("ERR Command not allowed inside a transaction");
    tx.aborted = true;
    return true;
  }
  // Queuing takes memory too: refused when over maxmemory, as Redis does. A write this node
  // would not run (its keys are another member's) is for that member to refuse, at EXEC.
  if (refused_for_memory(spec, &conn, writer) ||
      (runs_here && refused_writes(spec, argv, &conn, writer))) {
    return true;
  }
  tx.queued.emplace_back(argv.begin(), argv.end());
  tx.flags |= spec.flags;
  writer.queued();
  return true;
}

bool Server::transaction_in_cluster(Connection& conn, const engine::CommandSpec& spec,
                                    std::span<const std::string_view> argv,
                                    protocol::ReplyWriter& writer) {
  static const engine::CommandSpec* const kWatch = engine::find_command("watch");
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  Transaction& tx = conn.transaction();
  if (tx.active && !(spec.flags & engine::kRunsInMulti)) {
    // The transaction may span several nodes, and so may a command that is split per owner
    // (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH): its fragments run in their owners' parts. Any
    // other command needs its keys on one node.
    static const engine::CommandSpec* const kPublish = engine::find_command("publish");
    const cluster::Route route = cluster_->router().route(spec, argv);
    const bool split = route.kind == cluster::RouteKind::kSplit;
    // PUBLISH runs where the transaction does, and forwards its message from there.
    if (route.spans_nodes() && !split && &spec != kPublish) {
      writer.error(cluster::kCrossSlotError);
      transaction_refused(conn);
      return true;
    }
    const size_t queued = tx.queued.size();
    const size_t self = cluster_->router().self();
    queue_in_transaction(
        conn, spec, argv, writer,
        !split && (route.node == hashring::HashRing::kNoNode || route.node == self));
    if (tx.queued.size() > queued) {
      tx.queued_nodes.push_back(split ? Transaction::kSplit : route.node);
      // (A split route names no node: its fragments do.)
      tx.touch(route.node, false, cluster_->routing_epoch());
      for (const cluster::Fragment& f : route.fragments) {
        tx.touch(f.node, false, cluster_->routing_epoch());
      }
    }
    return true;
  }
  if (&spec == kWatch) {
    if (!tx.active) return watch_in_cluster(conn, argv, writer);
    // Answered here, never relayed to its keys' node (which is not in MULTI).
    writer.error(kWatchInMulti);
    return true;
  }
  if (&spec != kExec || !tx.active) return false;
  const std::vector<size_t> nodes = tx.nodes();
  if (nodes.empty()) return false;
  if (tx.epoch != cluster_->routing_epoch()) {
    // The ring changed since the transaction chose its nodes: its keys may live elsewhere now. A
    // watched key that moved counts as modified; without WATCH the transaction is discarded.
    const bool watched = !tx.watched.empty() || cluster_->has_transaction_link(conn.id());
    tx.end();
    unwatch_all(conn);
    if (watched) {
      writer.null_array();
    } else {
      writer.error("EXECABORT Transaction discarded because the cluster ring changed");
    }
    return true;
  }
  // EXECABORT, and a transaction whose keys are all here: the EXEC command answers.
  const size_t self = cluster_->router().self();
  if (tx.aborted || (nodes.size() == 1 && nodes[0] == self)) return false;
  if (nodes.size() > 1) {
    exec_across(conn, writer);
    return true;
  }
  // The whole block runs on the peer that holds its keys, as one unit.
  std::vector<std::vector<std::string>> queued;
  queued.swap(tx.queued);
  tx.end();
  note_transaction_writes(conn, queued);
  const std::vector<std::string> track = track_block_reads(conn, queued, nodes[0]);
  Connection::ReplySlot slot = conn.reserve_reply();
  conn.block();
  // A SELECT in the block runs on the peer's link: the client follows it, as with Redis.
  const int selected = db_after_block(queued);
  const uint64_t id = conn.id();
  cluster_->transaction_exec(nodes[0], id, track, queued, writer.version(), conn.db(),
                             [this, slot, id, selected](std::string_view reply) {
                               count_error_reply(reply);
                               Connection* c = find_client(id);
                               if (c != nullptr && selected >= 0 && reply.size() > 4 &&
                                   reply[0] == '*' && reply[1] != '-') {
                                 c->set_db(selected);
                               }
                               slot.fill(reply, true);
                             });
  tx.unwatched();
  return true;
}

void Server::transaction_refused(Connection& conn) {
  if (conn.transaction().active) conn.transaction().aborted = true;
}

void Server::multi(engine::CommandContext& ctx) {
  Transaction& tx = connection_of(ctx).transaction();
  if (tx.active) {
    ctx.reply.error("ERR MULTI calls can not be nested");
    return;
  }
  tx.active = true;
  ctx.reply.ok();
}

void Server::discard(engine::CommandContext& ctx) {
  Connection& conn = connection_of(ctx);
  if (!conn.transaction().active) {
    ctx.reply.error("ERR DISCARD without MULTI");
    return;
  }
  conn.transaction().end();
  unwatch_all(conn);
  ctx.reply.ok();
}

void Server::exec(engine::CommandContext& ctx) {
  Connection& conn = connection_of(ctx);
  Transaction& tx = conn.transaction();
  if (!tx.active) {
    ctx.reply.error("ERR EXEC without MULTI");
    return;
  }
  // A watched key whose TTL ran out since WATCH counts as changed, deleted or not yet.
  for (const auto& [db, key] : tx.watched) dbs_[db].peek(key);
  if (tx.aborted || tx.watched_changed) {
    if (tx.aborted) {
      ctx.reply.error(protocol::err::kExecAbort);
    } else {
      ctx.reply.null_array();
    }
    tx.end();
    unwatch_all(conn);
    return;
  }
  unwatch_all(conn);
  std::vector<std::vector<std::string>> queued;
  queued.swap(tx.queued);
  tx.end();
  // The queued commands log their own records, wrapped in MULTI ... EXEC; EXEC logs nothing.
  if (ctx.propagation != nullptr) ctx.propagation->suppress();
  run_block(conn, queued, ctx.reply);
}

int Server::db_after_block(std::span<const std::vector<std::string>> commands) const {
  int db = -1;
  for (const auto& args : commands) {
    if (args.size() != 2 || !common::equals_ignore_case(args[0], "select")) continue;
    const std::optional<int64_t> index = common::parse_integer(args[1]);
    if (index && dbs_.valid(*index)) db = static_cast<int>(*index);
  }
  return db;
}

void Server::run_block(Connection& conn, const std::vector<std::vector<std::string>>& commands,
                       protocol::ReplyWriter& reply) {
  reply.array(commands.size());
  begin_record_block();
  in_exec_ = true;
  // Inside a transaction a blocking command cannot wait: it answers as timed out. Memory was
  // checked for the whole transaction before it ran.
  for (const auto& args : commands) {
    const std::vector<std::string_view> views(args.begin(), args.end());
    std::span<const std::string_view> argv = views;
    // A command after a SELECT in a transaction over several nodes names its database
    // (exec_across); a client's own commands cannot: RINGKV.DB is no command to queue.
    if (const auto frame = cluster::parse_peer_frame(argv, dbs_.count()); frame && frame->db) {
      conn.set_db(*frame->db);
      argv = argv.subspan(2);
    }
    run(Origin::transaction(conn), argv, reply);
  }
  in_exec_ = false;
  end_record_block();
}

void Server::watch(engine::CommandContext& ctx) {
  Connection& conn = connection_of(ctx);
  Transaction& tx = conn.transaction();
  if (tx.active) {
    ctx.reply.error(kWatchInMulti);
    return;
  }
  watch_keys(conn, ctx.db, ctx.argv.subspan(1));
  ctx.reply.ok();
}

void Server::watch_keys(Connection& conn, int db, std::span<const std::string_view> keys) {
  Transaction& tx = conn.transaction();
  // Already doomed: no need to watch more.
  if (tx.watched_changed) return;
  for (std::string_view k : keys) {
    std::pair<int, std::string> watched(db, k);
    if (std::find(tx.watched.begin(), tx.watched.end(), watched) != tx.watched.end()) continue;
    // A key already expired when watched does not count as changed later.
    dbs_[db].peek(watched.second);
    watchers_[db][watched.second].push_back(conn.id());
    tx.watched.push_back(std::move(watched));
  }
}

void Server::unwatch(engine::CommandContext& ctx) {
  unwatch_all(connection_of(ctx));
  ctx.reply.ok();
}

void Server::unwatch_all(Connection& conn) {
  unwatch_here(conn);
  conn.transaction().unwatched();
  // WATCHes held on peers go with the client's transaction links.
  if (cluster_) cluster_->transaction_end(conn.id());
}

void Server::unwatch_here(Connection& conn) {
  Transaction& tx = conn.transaction();
  for (const auto& [db, key] : tx.watched) {
    auto& watchers = watchers_[db];
    auto it = watchers.find(key);
    if (it == watchers.end()) continue;
    std::erase(it->second, conn.id());
    if (it->second.empty()) watchers.erase(it);
  }
  tx.watched.clear();
  tx.watched_changed = false;
}

void Server::key_modified(std::string_view key) {
  changes_++;
  key_changed(events_db_, key);
}

void Server::key_written_in(int db, std::string_view key) {
  changes_++;
  key_changed(db, key);
}

void Server::key_changed(int db, std::string_view key, bool dropped) {
  invalidate_watchers(db, key);
  tracking_key_changed(key);
  if (migration_) migration_->key_changed(db, key, dropped);
  // A blocked client may have to learn that its key changed under it (XREADGROUP answers that
  // its stream is gone, expired or deleted); the others find nothing new and keep waiting.
  if (blocked_.waited_on(db, key)) ready_keys_.emplace_back(db, key);
}

void Server::data_changed(std::string_view key) {
  changes_++;
  if (migration_) migration_->key_changed(events_db_, key);
}

void Server::invalidate_watchers(int db, std::string_view key) {
  auto& watchers = watchers_[db];
  if (watchers.empty()) return;
  auto it = watchers.find(key);
  if (it == watchers.end()) return;
  for (uint64_t id : it->second) {
    if (Connection* c = clients_.find(id)) c->transaction().watched_changed = true;
  }
}

void Server::database_replaced(int db, int replaced_with) {
  // Blocked clients learn of a flush as of a deletion of their keys (XREADGROUP answers that
  // its stream is gone); after SWAPDB their keys may hold something to serve.
  for (std::string& key : blocked_.waited_keys(db)) ready_keys_.emplace_back(db, std::move(key));
  for (const auto& [key, ids] : watchers_[db]) {
    if (dbs_[db].peek(key) == nullptr &&
        (replaced_with < 0 || dbs_[replaced_with].peek(key) == nullptr)) {
      continue;
    }
    for (uint64_t id : ids) {
      if (Connection* c = clients_.find(id)) c->transaction().watched_changed = true;
    }
  }
}

void Server::keyspace_flushing() {
  changes_++;
  tracking_flushed();
  if (migration_) migration_->keyspace_flushed();
  database_replaced(events_db_, -1);
}

void Server::all_keyspaces_flushing() {
  changes_++;
  tracking_flushed();
  if (migration_) migration_->keyspace_flushed();
  for (int db = 0; db < dbs_.count(); ++db) database_replaced(db, -1);
}

void Server::swap_databases(int a, int b) {
  // As Redis's SWAPDB: a watcher of a key that exists in either database fails (it now holds
  // something else, or nothing).
  database_replaced(a, b);
  database_replaced(b, a);
  dbs_[a].swap_contents(dbs_[b]);
  changes_++;
  // A ring change copying keys meanwhile sends both databases again.
  if (migration_) migration_->keyspace_flushed();
}

}  // namespace ringkv::server
