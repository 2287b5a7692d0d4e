// The command pipeline: the one path of every command, from a client, a peer's relay link, a
// split or fanned-out part, a blocked client served again, a transaction's body or the
// append-only file being loaded. Each step is decided once, here; the origin (pipeline.h) says
// which steps apply.
#include "server/pipeline.h"

#include <chrono>

#include "cluster/cluster.h"
#include "common/numbers.h"
#include "engine/commands/pubsub.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

bool is_error(std::string_view reply) { return !reply.empty() && reply[0] == '-'; }

// A node without the lease of a majority serves none of its keys (see Cluster::lease_valid).
constexpr std::string_view kNoMajorityError =
    "CLUSTERDOWN this node cannot reach a majority of the cluster's members";

}  // namespace

bool Server::execute(Connection& conn, std::span<const std::string_view> argv,
                     protocol::ReplyWriter& writer) {
  if (cluster_ && !conn.is_peer() && cluster_->holds_clients() && must_wait_for_ring(argv)) {
    migration_->hold(conn);
    return false;
  }
  // A peer's request for keys waits too while this node is about to hold its lease (it just
  // started, or lost it a moment ago); peers' ring-change, copy and stream frames never wait.
  if (cluster_ && conn.is_peer() && !conn.control_link() && conn.replication_source().empty() &&
      cluster_->lease_pending() && relayed_keyed(argv)) {
    migration_->hold(conn);
    return false;
  }
  // A key locked by a cross-node transaction: the request waits for it (not a peer's ring-change
  // or replication frames, which are copies, not requests).
  if (!locks_.empty() && !conn.control_link() && conn.replication_source().empty()) {
    const LockCheck check = check_locks(conn, argv, writer);
    if (check == LockCheck::kHeld) return false;
    if (check == LockCheck::kAnswered) {
      stats_.total_commands_processed++;
      return true;
    }
  }
  stats_.total_commands_processed++;
  if (!conn.is_peer()) {
    run(Origin::client(conn), argv, writer);
    return true;
  }
  if (engine::equals_ignore_case(argv[0], cluster::kRingControl)) {
    writer.raw(cluster_->ring_control(argv.subspan(1)));
    return true;
  }
  if (!conn.control_link() && replica_frame(conn, argv, writer)) return true;
  // A member being failed over (or failed over without knowing it yet) gets no lease from here.
  if (argv.size() == 1 && engine::equals_ignore_case(argv[0], "ping") &&
      cluster_->fenced(conn.peer_name(), conn.link_fingerprint())) {
    writer.error("ERR fenced: this member is failing over " + conn.peer_name());
    return true;
  }
  if (conn.control_link()) {
    writer.error("ERR a control link carries RINGKV.RING frames only");
    return true;
  }
  if (engine::equals_ignore_case(argv[0], cluster::kTxnFrame)) {
    if (txn_frame(conn, argv.subspan(1), writer)) return true;
    stats_.total_commands_processed--;  // run again when its keys are released
    return false;
  }
  if (argv.size() > 2 && engine::equals_ignore_case(argv[0], cluster::kMigrateFrame)) {
    const std::optional<int64_t> version = common::parse_integer(argv[1]);
    if (!version || *version < 1 || !cluster_->accepts_copy(static_cast<uint64_t>(*version))) {
      writer.error("ERR no ring change to version " + std::string(argv[1]) + " here");
      return true;
    }
    applying_copy_ = true;
    run(Origin::migration(conn), argv.subspan(2), writer);
    applying_copy_ = false;
    return true;
  }
  // A relayed request of a RESP3 client carries a prefix: its reply is written in RESP3 on this
  // (RESP2) link.
  if (argv.size() > 1 && engine::equals_ignore_case(argv[0], cluster::kResp3Prefix)) {
    const protocol::RespVersion version = writer.version();
    writer.set_version(protocol::RespVersion::kResp3);
    run(Origin::peer(conn), argv.subspan(1), writer);
    writer.set_version(version);
    return true;
  }
  run(Origin::peer(conn), argv, writer);
  return true;
}

bool Server::relayed_keyed(std::span<const std::string_view> argv) {
  if (argv.size() > 1 && engine::equals_ignore_case(argv[0], cluster::kResp3Prefix)) {
    argv = argv.subspan(1);
  }
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_command(argv, error);
  return spec != nullptr && (spec->first_key > 0 || spec->find_keys != nullptr);
}

bool Server::must_wait_for_ring(std::span<const std::string_view> argv) {
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_client_command(argv, error);
  if (spec == nullptr) return false;  // answered with its error at once
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  if (spec == kExec) return true;
  std::vector<std::string_view> args(argv.begin(), argv.end());
  if (std::string_view original = engine::original_command_name(argv[0]); !original.empty()) {
    args[0] = original;
  }
  const cluster::Route route = cluster_->router().route(*spec, args);
  return route.kind != cluster::RouteKind::kLocal || route.node != hashring::HashRing::kNoNode;
}

Outcome Server::run(const Origin& origin, std::span<const std::string_view> argv,
                    protocol::ReplyWriter& writer) {
  std::string error;
  const engine::CommandSpec* spec = origin.uses_client_names()
                                        ? engine::resolve_client_command(argv, error)
                                        : engine::resolve_command(argv, error);
  if (spec == nullptr) {
    if (origin.is_client() && cluster_ &&
        (engine::equals_ignore_case(argv[0], cluster::kPeerHandshake) ||
         engine::equals_ignore_case(argv[0], cluster::kPeerChallenge))) {
      peer_handshake(*origin.conn, argv, writer);
      return Outcome::kDone;
    }
    refuse(origin, error, writer, nullptr);
    return Outcome::kDone;
  }
  if (!origin.is_client()) {
    if (origin.refused_while_busy() && refused_while_busy(origin, *spec, writer)) {
      return Outcome::kDone;
    }
    return run(origin, *spec, argv, writer);
  }
  // As Redis, unknown commands and wrong arities are reported before NOAUTH.
  if (!origin.conn->authenticated() && !config_.security.requirepass.empty() &&
      (spec->flags & engine::kNoAuth) == 0) {
    refuse(origin, protocol::err::kNoAuth, writer, spec);
    return Outcome::kDone;
  }
  if (refused_while_busy(origin, *spec, writer)) return Outcome::kDone;
  // A renamed command goes on under its table name: relayed, queued in MULTI or blocked, it is
  // resolved again without the client's names.
  if (std::string_view original = engine::original_command_name(argv[0]); !original.empty()) {
    std::vector<std::string_view> renamed(argv.begin(), argv.end());
    renamed[0] = original;
    return run(origin, *spec, renamed, writer);
  }
  return run(origin, *spec, argv, writer);
}

Outcome Server::run(const Origin& origin, const engine::CommandSpec& spec,
                    std::span<const std::string_view> argv, protocol::ReplyWriter& writer) {
  Connection* conn = origin.conn;
  if (origin.is_request()) conn->set_last_command(&spec);
  if (origin.is_client()) {
    if (answer_in_pubsub_context(*conn, spec, argv, writer)) return Outcome::kDone;
    if (cluster_ && transaction_in_cluster(*conn, spec, argv, writer)) return Outcome::kDone;
  }
  if (origin.is_request() && queue_in_transaction(*conn, spec, argv, writer)) {
    return Outcome::kDone;
  }
  if (origin.is_client() && cluster_ && relay(*conn, spec, argv, writer)) return Outcome::kDone;
  if (cluster_ && origin.needs_lease() && !cluster_->lease_valid() &&
      (spec.first_key > 0 || spec.find_keys != nullptr)) {
    refuse(origin, kNoMajorityError, writer, &spec);
    return Outcome::kDone;
  }
  store_.set_now(unix_now_ms());
  if (origin.checks_memory() && refused_for_memory(spec, conn, writer)) return Outcome::kDone;

  engine::BlockRequest block;
  engine::CommandContext ctx{
      argv, writer,  store_, conn, this, &spec, origin.can_block() ? &block : nullptr,
      this, &pubsub_};
  ctx.timed_out = origin.timed_out;
  ctx.blocked_retry = origin.kind == Origin::Kind::kBlockedRetry;
  ctx.ready_key = origin.ready_key;
  ctx.from_script = origin.kind == Origin::Kind::kScript;
  // A node's part of a keyspace-wide command covers its own keys, not the copies it holds.
  if ((spec.flags & engine::kKeyspaceWide) && replicating() &&
      (origin.kind == Origin::Kind::kPart || origin.kind == Origin::Kind::kPeer)) {
    ctx.owned = &owned_;
  }
  if (replicating() && origin.waits_for_replicas()) {
    call_replicated(origin, spec, ctx);
  } else {
    call(spec, ctx, origin.records());
  }
  if (block.active) {
    // A client served again that still finds nothing keeps its place in the queue.
    if (origin.kind != Origin::Kind::kBlockedRetry) block_client(*conn, argv, std::move(block));
    return Outcome::kWaiting;
  }
  // Not while a script runs: its writes are served after it, as one.
  if (origin.serves_blocked() && !ready_keys_.empty() && !scripts_->running()) serve_ready_keys();
  return Outcome::kDone;
}

bool Server::relay(Connection& conn, const engine::CommandSpec& spec,
                   std::span<const std::string_view> argv, protocol::ReplyWriter& writer) {
  cluster::Route route = cluster_->router().route(spec, argv);
  if (route.kind == cluster::RouteKind::kLocal) return false;
  if (config_.cluster.atomic_multikey && relay_atomic(conn, spec, argv, route, writer)) {
    return true;
  }
  note_relayed_write(conn, spec, argv, route);
  Connection::ReplySlot slot = conn.reserve_reply();
  store_.set_now(unix_now_ms());
  // A blocking command blocks its client here too: later requests wait for its answer, as they
  // would on the node that holds the key.
  const bool blocking = (spec.flags & engine::kBlocking) != 0;
  if (blocking) conn.block();
  cluster_->execute(route, spec, argv, conn.id(), writer.version(),
                    [this, slot, blocking](std::string_view reply) {
                      if (is_error(reply)) stats_.total_error_replies++;
                      slot.fill(reply, blocking);
                    });
  return true;
}

void Server::call(const engine::CommandSpec& spec, engine::CommandContext& ctx, bool records) {
  if (!records || (!aof_.wants_records() && !replicating())) {
    spec.handler(ctx);
    return;
  }
  engine::Propagation propagation;
  ctx.propagation = &propagation;
  const uint64_t changes = changes_;
  spec.handler(ctx);
  ctx.propagation = nullptr;
  if (changes_ == changes) return;
  if (!propagation.replaced()) {
    record(ctx.argv);
    return;
  }
  for (const std::vector<std::string>& command : propagation.commands()) record(command);
}

void Server::refuse(const Origin& origin, std::string_view error, protocol::ReplyWriter& writer,
                    const engine::CommandSpec* spec) {
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  stats_.total_error_replies++;
  Connection* conn = origin.is_request() ? origin.conn : nullptr;
  if (conn != nullptr && spec == kExec) {
    // As Redis: a refused EXEC discards the transaction and says why.
    conn->transaction().end();
    unwatch_all(*conn);
    writer.error(std::string(protocol::err::kExecAbortBecause) + std::string(error));
    return;
  }
  writer.error(error);
  if (conn != nullptr) transaction_refused(*conn);
}

void Server::peer_handshake(Connection& conn, std::span<const std::string_view> argv,
                            protocol::ReplyWriter& writer) {
  const bool may_run = conn.authenticated() || config_.security.requirepass.empty();
  cluster::PeerVerdict verdict = engine::equals_ignore_case(argv[0], cluster::kPeerChallenge)
                                     ? cluster_->challenge_peer(conn.id(), argv.subspan(1))
                                     : cluster_->accept_peer(conn.id(), argv.subspan(1), may_run);
  writer.raw(verdict.reply);
  if (verdict.outcome == cluster::PeerVerdict::kChallenged) return;
  if (verdict.outcome == cluster::PeerVerdict::kAccepted) {
    // From now on everything on this link runs here (and is never routed again).
    conn.set_peer(true);
    conn.set_control_link(verdict.control);
    conn.set_peer_identity(std::move(verdict.address), std::move(verdict.fingerprint));
    conn.set_authenticated(true);
    return;
  }
  // Requests a refused peer pipelined behind its handshake must not run as a client's.
  stats_.total_error_replies++;
  conn.close_after_reply();
}

bool Server::answer_in_pubsub_context(Connection& conn, const engine::CommandSpec& spec,
                                      std::span<const std::string_view> argv,
                                      protocol::ReplyWriter& writer) {
  // RESP3 carries messages as pushes, so a RESP3 subscriber may run anything.
  if (conn.resp() != protocol::RespVersion::kResp2 || pubsub_.subscription_count(conn.id()) == 0) {
    return false;
  }
  if (spec.flags & engine::kSubscribedOk) {
    if (spec.name != "ping") return false;
    engine::CommandContext ctx{argv, writer, store_, &conn, this, &spec};
    engine::cmd_ping_subscribed(ctx);
    return true;
  }
  writer.error(
      "ERR Can't execute '" + engine::command_fullname(spec) +
      "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
      "context");
  stats_.total_error_replies++;
  return true;
}

}  // namespace ringkv::server
