// The command pipeline: the one path of every command, from a client, a peer's relay link, a
// split or fanned-out part, a blocked client served again, a transaction's body or the
// append-only file being loaded. Each step is decided once, here; the origin (pipeline.h) says
// which steps apply.
#include "server/pipeline.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "cluster/cluster.h"
#include "cluster/peer_frame.h"
#include "common/numbers.h"
#include "engine/commands/acl.h"
#include "engine/commands/pubsub.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// "POST" and "Host:" are no commands but the first words of an HTTP request: a web page making a
// browser talk to a node (cross-protocol scripting) sends its request line and headers first, and
// would have its later lines run as commands. As Redis does, such a connection is closed at once,
// before anything else it sent runs or any reply leaves.
bool is_http_request(std::string_view name) {
  return engine::equals_ignore_case(name, "post") || engine::equals_ignore_case(name, "host:");
}

// Redis's warning, logged at most once a minute so that an attack cannot flood the log.
void warn_cross_protocol_attack() {
  static int64_t logged_ms = 0;
  const int64_t now = Server::unix_now_ms();
  if (logged_ms != 0 && now - logged_ms <= 60000) return;
  logged_ms = now;
  spdlog::warn(
      "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: "
      "commands to Redis. This is likely due to an attacker attempting to use Cross Protocol "
      "Scripting to compromise your Redis instance. Connection aborted.");
}

// A node without the lease of a majority serves none of its keys (see Cluster::lease_valid).
constexpr std::string_view kNoMajorityError =
    "CLUSTERDOWN this node cannot reach a majority of the cluster's members";
// A client's request held longer than request-timeout while the ring switches.
constexpr std::string_view kRingSwitchingError =
    "TRYAGAIN the cluster ring is still changing after request-timeout";
// A request a peer routed by an earlier ring (queued while this node was down, or sent by a peer
// that has not taken up the ring yet) for a key this node does not own: run here, its write would
// reach neither the owner nor its replicas, and be dropped by the next copy.
constexpr std::string_view kNotOwnerError =
    "TRYAGAIN the ring changed: this member no longer serves the key (failed over, gone, or the "
    "key moved)";
// SCRIPT DEBUG runs the script on the node the client is connected to.
constexpr std::string_view kDebugElsewhereError =
    "ERR SCRIPT DEBUG: the script's keys are served by another node; connect to that node to "
    "debug it";
constexpr std::string_view kSwapdbReplicatedError =
    "ERR SWAPDB is not supported in a cluster with replication-factor > 1";

}  // namespace

bool Server::execute(Connection& conn, std::span<const std::string_view> argv,
                     protocol::ReplyWriter& writer) {
  if (conn.is_peer()) return execute_frame(conn, argv, writer);
  // CLIENT PAUSE holds clients' requests (never a peer's: a pause is this node's only).
  if (clients_paused() && paused_request(conn, argv)) return false;
  if (cluster_ && cluster_->holds_clients() && must_wait_for_ring(argv)) {
    const auto limit = static_cast<uint64_t>(config_.cluster.request_timeout_ms);
    if (migration_->hold(conn, limit)) return false;
    // Held for request-timeout (the lease is not back, or the ring still switches): answered
    // with the refusal it would get now, as no request waits longer.
    std::string error;
    refuse(Origin::client(conn), cluster_->lease_pending() ? kNoMajorityError : kRingSwitchingError,
           writer, engine::resolve_client_command(argv, error));
    return true;
  }
  if (cluster_) migration_->not_held(conn);
  // A key locked by a cross-node transaction: the request waits for it.
  const LockCheck check = lock_check(conn, argv, writer);
  if (check != LockCheck::kRun) return check == LockCheck::kAnswered;
  stats_.total_commands_processed++;
  limit_tracking_table();
  running_client_ = conn.id();
  run(Origin::client(conn), argv, writer);
  running_client_ = 0;
  tracking_after_request(conn);
  return true;
}

bool Server::execute_frame(Connection& conn, std::span<const std::string_view> argv,
                           protocol::ReplyWriter& writer) {
  using Kind = cluster::PeerFrameKind;
  const engine::Result<cluster::PeerFrame> parsed = cluster::parse_peer_frame(argv, dbs_.count());
  if (!parsed) {
    writer.error(parsed.error());
    stats_.total_error_replies++;
    return true;
  }
  const cluster::PeerFrame& frame = *parsed;
  // A peer's frame runs in the database its RINGKV.DB prefix names, else in database 0: the link
  // is shared by clients of every database (a blocking link keeps it while its client waits).
  if (!conn.control_link()) conn.set_db(frame.db.value_or(0));
  // A peer's request for keys waits while this node is about to hold its lease (it just
  // started, or lost it a moment ago); peers' ring-change, copy and stream frames never wait.
  // So do a peer's requests for keys and transactions while the ring switches here (see
  // Cluster::switching_ring).
  const bool switching = cluster_->switching_ring();
  if (switching && frame.kind == Kind::kTransaction) {
    migration_->hold(conn);
    return false;
  }
  if (!conn.control_link() && conn.replication_source().empty() &&
      (switching || cluster_->lease_pending()) && relayed_keyed(frame)) {
    migration_->hold(conn);
    return false;
  }
  const LockCheck check =
      lock_check(conn, frame.kind == Kind::kCommand ? frame.args : decltype(frame.args){}, writer);
  if (check != LockCheck::kRun) return check == LockCheck::kAnswered;
  stats_.total_commands_processed++;
  if (frame.kind == Kind::kRingControl) {
    writer.raw(cluster_->ring_control(frame.args));
    return true;
  }
  if (!conn.control_link() && replica_frame(conn, frame, writer)) return true;
  // A member being failed over (or failed over without knowing it yet) gets no lease from here.
  if (frame.kind == Kind::kCommand && frame.args.size() == 1 &&
      engine::equals_ignore_case(frame.args[0], "ping") &&
      cluster_->fenced(conn.peer_name(), conn.link_fingerprint())) {
    writer.error("ERR fenced: this member is failing over " + conn.peer_name());
    return true;
  }
  if (conn.control_link()) {
    writer.error("ERR a control link carries RINGKV.RING frames only");
    return true;
  }
  switch (frame.kind) {
    case Kind::kTransaction:
      if (txn_frame(conn, frame.args, writer)) return true;
      stats_.total_commands_processed--;  // run again when its keys are released
      return false;
    case Kind::kShardSubscribers:
    case Kind::kShardMessage:
      shard_frame(frame, writer);
      return true;
    case Kind::kTrack:
    case Kind::kInvalidate:
      tracking_frame(frame, writer);
      return true;
    case Kind::kImport:
      import_frame(frame.args, writer);
      return true;
    case Kind::kKeyspaceMessage:
      keyspace_frame(frame.args, writer);
      return true;
    case Kind::kView:
      conn.set_link_fingerprint(cluster_->peer_view(conn.peer_name(), frame.args[0]));
      writer.ok();
      return true;
    case Kind::kMigrate:
      if (!cluster_->accepts_copy(frame.version)) {
        writer.error("ERR no ring change to version " + std::to_string(frame.version) + " here");
        return true;
      }
      if (engine::equals_ignore_case(frame.args[0], cluster::kResumeFrame)) {
        writer.raw(migration_->resume(frame.args));
        return true;
      }
      applying_copy_ = true;
      run(Origin::migration(conn), frame.args, writer);
      applying_copy_ = false;
      return true;
    case Kind::kCommand:
      run_relayed(conn, frame, writer);
      return true;
    case Kind::kRingControl:
    case Kind::kReplication:
    case Kind::kReplicaWait:
      break;  // answered above
  }
  return true;
}

void Server::run_relayed(Connection& conn, const cluster::PeerFrame& frame,
                         protocol::ReplyWriter& writer) {
  // A relayed script carries its caller's user.
  std::shared_ptr<engine::acl::User> user;
  if (!frame.user.empty()) {
    user = users_.find(frame.user);
    if (!user) {
      writer.error("NOPERM the script's user '" + std::string(frame.user) +
                   "' does not exist on this node");
      stats_.total_error_replies++;
      return;
    }
  }
  // A relayed request of a RESP3 client has its reply written in RESP3 on this (RESP2) link.
  const protocol::RespVersion version = writer.version();
  if (frame.resp3) writer.set_version(protocol::RespVersion::kResp3);
  // The script runs to its end inside run() (a busy one stops this link's reading meanwhile), so
  // the user is this link's only for the frame.
  if (user) conn.set_user(std::move(user));
  run(Origin::peer(conn), frame.args, writer);
  conn.set_user(nullptr);
  writer.set_version(version);
}

bool Server::relayed_keyed(const cluster::PeerFrame& frame) {
  if (frame.kind != cluster::PeerFrameKind::kCommand) return false;
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_command(frame.args, error);
  return spec != nullptr && (spec->first_key() > 0 || spec->find_keys != nullptr);
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
  if (origin.is_client() && is_http_request(argv[0])) {
    warn_cross_protocol_attack();
    origin.conn->close();
    return Outcome::kDone;
  }
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
    // A known command with the wrong arity counts as a rejected call of it, as in Redis.
    const engine::CommandSpec* row = origin.uses_client_names()
                                         ? engine::find_client_command(argv[0])
                                         : engine::find_command(argv[0]);
    if (row != nullptr && !row->subcommands.empty()) {
      row = argv.size() > 1 ? engine::find_subcommand(*row, argv[1]) : nullptr;
    }
    if (row != nullptr) observed_.commands.of(*row).rejected_calls++;
    refuse(origin, error, writer, nullptr);
    return Outcome::kDone;
  }
  if (!origin.is_client()) {
    // A transaction's commands are checked again at EXEC: the rules may have changed since they
    // were queued.
    if (origin.kind == Origin::Kind::kTransaction && refused_by_acl(origin, *spec, argv, writer)) {
      return Outcome::kDone;
    }
    if (origin.refused_while_busy() && refused_while_busy(origin, *spec, writer)) {
      return Outcome::kDone;
    }
    return run(origin, *spec, argv, writer);
  }
  // As Redis, unknown commands and wrong arities are reported before NOAUTH, and a refused
  // command is the client's last one (CLIENT LIST's and ACL LOG's cmd=).
  origin.conn->set_last_command(spec);
  // Then a protected command the configuration does not allow (DEBUG: enable-debug-command;
  // MODULE LOAD/LOADEX/UNLOAD: no module is ever loaded, as enable-module-command "no").
  if ((spec->flags & engine::kProtected) &&
      (spec->name != "debug" || !debug_allowed(origin.conn))) {
    refuse(
        origin,
        spec->name == "debug" ? protocol::err::kDebugNotAllowed : protocol::err::kModuleNotAllowed,
        writer, spec);
    return Outcome::kDone;
  }
  if (auth_required(*origin.conn) && (spec->flags & engine::kNoAuth) == 0) {
    refuse(origin, protocol::err::kNoAuth, writer, spec);
    return Outcome::kDone;
  }
  if (refused_by_acl(origin, *spec, argv, writer)) return Outcome::kDone;
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
  if (cluster_ && origin.needs_lease() && (spec.first_key() > 0 || spec.find_keys != nullptr)) {
    if (!cluster_->lease_valid()) {
      refuse(origin, kNoMajorityError, writer, &spec);
      return Outcome::kDone;
    }
    if (!serves_keys(origin, spec, argv)) {
      refuse(origin, kNotOwnerError, writer, &spec);
      return Outcome::kDone;
    }
  }
  // One clock reading gives the stores their time and the command its start (the end of the
  // command before it in the same input, when there is one).
  const uint64_t start_us = command_start_us();
  dbs_.set_now(static_cast<int64_t>(start_us / 1000));
  if (origin.checks_memory() && refused_for_memory(spec, conn, writer)) return Outcome::kDone;
  if (origin.checks_writes() && refused_writes(spec, argv, conn, writer)) return Outcome::kDone;
  // Key events, WATCH and records of this command are its database's (a script's commands run
  // nested inside EVAL's, a transaction's inside EXEC's: the outer command's is put back).
  const int db = origin.database();
  struct EventsDb {
    int& current;
    int outer;
    ~EventsDb() { current = outer; }
  } events_db{events_db_, events_db_};
  events_db_ = db;
  const uint64_t errors = errors_written_;
  // As Redis, monitors see a script as it starts, before the commands it calls (EVAL is
  // skip_monitor: it is shown here only); other commands once they ran (EXEC after its body).
  if (!monitors_.empty() && runs_script(spec)) feed_monitors(origin, spec, argv, start_us);

  engine::BlockRequest block;
  engine::CommandContext ctx{
      argv, writer,  dbs_[db], conn, this, &spec, origin.can_block() ? &block : nullptr,
      this, &pubsub_};
  ctx.db = db;
  ctx.timed_out = origin.timed_out;
  ctx.blocked_retry = origin.kind == Origin::Kind::kBlockedRetry;
  ctx.ready_key = origin.ready_key;
  ctx.from_script = origin.kind == Origin::Kind::kScript;
  // A node's part of a keyspace-wide command covers its own keys, not the copies it holds; nor,
  // for DBSIZE, KEYS, SCAN and RANDOMKEY while a ring change moves keys, those it was given or
  // gave away, which their other holder counts (a flush still empties everything held).
  if ((spec.flags & engine::kKeyspaceWide) &&
      (origin.kind == Origin::Kind::kPart || origin.kind == Origin::Kind::kPeer) &&
      (replicating() || ((spec.flags & engine::kReadonly) && cluster_->moving_keys()))) {
    ctx.owned = &owned_;
  }
  if (replicating() && origin.waits_for_replicas()) {
    call_replicated(origin, spec, ctx);
  } else {
    call(spec, ctx, origin.records());
  }
  if (cluster_ && (spec.flags & engine::kWrite) && !replicating() && !cluster_->failed().empty()) {
    migration_->write_ran(db, spec, argv);
  }
  if (cluster_ && origin.forwards_publish()) {
    // Its reply counts this node's receivers, as Redis Cluster's does.
    static const engine::CommandSpec* const kPublish = engine::find_command("publish");
    if (&spec == kPublish) {
      const std::string_view frame[] = {cluster::kKeyspaceMessage, argv[1], argv[2]};
      forward_messages(frame);
    }
  }
  if ((spec.flags & engine::kReadonly) != 0 && conn != nullptr && conn->tracking_state().on) {
    track_reads(origin, spec, argv);
  }
  if (block.active) {
    // A client served again that still finds nothing keeps its place in the queue.
    if (origin.kind != Origin::Kind::kBlockedRetry) {
      // Monitors see a blocking command when it first runs, as in Redis.
      if (!monitors_.empty() && monitored_after_run(spec)) {
        feed_monitors(origin, spec, argv, start_us);
      }
      block_client(*conn, argv, std::move(block));
    }
    return Outcome::kWaiting;
  }
  observe(origin, spec, argv, start_us, errors_written_ != errors);
  // Not while a script runs: its writes are served after it, as one.
  if (origin.serves_blocked() && !ready_keys_.empty() && !scripts_->running()) serve_ready_keys();
  return Outcome::kDone;
}

bool Server::serves_keys(const Origin& origin, const engine::CommandSpec& spec,
                         std::span<const std::string_view> argv) {
  // Failed over (or gone): no key is this member's.
  if (!cluster_->on_ring()) return false;
  // A peer's request on a link of this node's ring as it is was routed by that ring.
  if (origin.kind != Origin::Kind::kPeer ||
      cluster_->link_current(origin.conn->link_fingerprint())) {
    return true;
  }
  const hashring::HashRing& ring = cluster_->routing_ring();
  const std::string& self = cluster_->self_address();
  for (size_t pos : engine::key_positions(spec, argv)) {
    if (ring.owner_of(argv[pos]) != self) return false;
  }
  return true;
}

bool Server::relay(Connection& conn, const engine::CommandSpec& spec,
                   std::span<const std::string_view> argv, protocol::ReplyWriter& writer) {
  cluster::Route route = cluster_->router().route(spec, argv);
  if (route.kind == cluster::RouteKind::kLocal) return false;
  static const engine::CommandSpec* const kSwapdb = engine::find_command("swapdb");
  if (&spec == kSwapdb && replicating()) {
    // Each node holds copies of several primaries' keys: its swap would mix theirs.
    refuse(Origin::client(conn), kSwapdbReplicatedError, writer, &spec);
    return true;
  }
  if (conn.script_debug() != engine::ClientSession::ScriptDebug::kOff &&
      spec.name.starts_with("eval")) {
    // The debugger talks to the client from the node that runs the script: this one.
    refuse(Origin::client(conn), kDebugElsewhereError, writer, &spec);
    return true;
  }
  note_relayed_write(conn, spec, argv, route);
  // (Before an atomic multi-key read too: it runs under its keys' locks, which hold until long
  // after the owners heard of the reader.)
  if (conn.tracking_state().on && ((spec.flags & engine::kReadonly) != 0 || runs_script(spec))) {
    track_remote_reads(conn, spec, argv, route);
  }
  if (config_.cluster.atomic_multikey && relay_atomic(conn, spec, argv, route, writer)) {
    return true;
  }
  Connection::ReplySlot slot = conn.reserve_reply();
  const uint64_t start_us = command_start_us();
  dbs_.set_now(static_cast<int64_t>(start_us / 1000));
  // The node the client used shows the command to its monitors as it hands it on (the owner
  // shows it again when it runs it).
  if (!monitors_.empty() && (monitored_after_run(spec) || runs_script(spec))) {
    feed_monitors(Origin::client(conn), spec, argv, start_us);
  }
  // A blocking command blocks its client here too: later requests wait for its answer, as they
  // would on the node that holds the key.
  const bool blocking = (spec.flags & engine::kBlocking) != 0;
  if (blocking) conn.block();
  // Its command stats here count the round trip to its owners: what the client waited.
  // A script relayed to its keys' owner runs there with this client's rights.
  std::vector<std::string_view> as_user;
  if (conn.user() != nullptr && runs_script(spec)) {
    std::string no_digits;  // the prefix names no database: Cluster::execute adds that one
    as_user = cluster::peer_prefix_args({.user = conn.user()->name()}, no_digits);
    as_user.insert(as_user.end(), argv.begin(), argv.end());
    argv = as_user;
  }
  cluster_->execute(route, spec, argv, conn.id(), writer.version(), conn.db(),
                    [this, slot, blocking, start_us, &spec](std::string_view reply) {
                      const bool failed = protocol::err::is_error_reply(reply);
                      if (failed) count_error_reply(reply);
                      const uint64_t end_us = unix_now_us();
                      observed_.commands.record(spec, end_us > start_us ? end_us - start_us : 0,
                                                failed, config_.log.latency_tracking);
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
  if (changes_ == changes && !propagation.forced()) return;
  if (!propagation.replaced()) {
    record(ctx.argv, &spec);
    return;
  }
  for (const std::vector<std::string>& command : propagation.commands()) record(command);
}

void Server::refuse(const Origin& origin, std::string_view error, protocol::ReplyWriter& writer,
                    const engine::CommandSpec* spec) {
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  if (spec != nullptr) observed_.commands.of(*spec).rejected_calls++;
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
  const bool may_run = !auth_required(conn);
  // tls-cluster: a peer proves who it is with its certificate too, whatever tls-auth-clients
  // asks of clients.
  if (config_.tls.cluster && !engine::equals_ignore_case(argv[0], cluster::kPeerChallenge) &&
      !conn.tls_peer_verified()) {
    writer.error(
        "ERR peer link refused: tls-cluster requires a TLS link with a certificate the CAs "
        "verify");
    stats_.total_error_replies++;
    conn.close_after_reply();
    return;
  }
  cluster::PeerVerdict verdict = engine::equals_ignore_case(argv[0], cluster::kPeerChallenge)
                                     ? cluster_->challenge_peer(conn.id(), argv.subspan(1))
                                     : cluster_->accept_peer(conn.id(), argv.subspan(1), may_run);
  writer.raw(verdict.reply);
  if (verdict.outcome == cluster::PeerVerdict::kChallenged) return;
  if (verdict.outcome == cluster::PeerVerdict::kAccepted) {
    // From now on everything on this link runs here (and is never routed again).
    conn.set_peer(true);
    conn.set_control_link(verdict.control);
    conn.set_peer_identity(std::move(verdict.address), verdict.fingerprint);
    conn.set_authenticated(true);
    conn.set_user(nullptr);
    return;
  }
  // Requests a refused peer pipelined behind its handshake must not run as a client's.
  count_error_reply(verdict.reply);
  conn.close_after_reply();
}

bool Server::refused_by_acl(const Origin& origin, const engine::CommandSpec& spec,
                            std::span<const std::string_view> argv, protocol::ReplyWriter& writer) {
  // Peers' frames carry no user (the node the client is connected to checked it).
  const engine::acl::User* user = origin.conn != nullptr ? origin.conn->user() : nullptr;
  if (user == nullptr || user->unrestricted()) return false;
  const engine::AclRefusal refusal = engine::check_acl(*user, spec, argv);
  if (refusal.reason == engine::acl::Denial::kNone) return false;
  engine::AclContext context = engine::AclContext::kMulti;
  if (origin.kind == Origin::Kind::kScript) {
    context = engine::AclContext::kLua;
  } else if (origin.is_client() && !origin.conn->in_transaction()) {
    context = engine::AclContext::kToplevel;
  }
  engine::log_acl_denial(users_, *origin.conn, refusal.reason, context, refusal.object,
                         user->name(), acl_log_max_len());
  if (origin.is_client()) {
    refuse(origin, engine::noperm_error(refusal.reason, spec), writer, &spec);
    return true;
  }
  stats_.total_error_replies++;
  if (origin.kind == Origin::Kind::kScript) {
    writer.error(engine::noperm_script_error(refusal.reason));
  } else {
    writer.error(engine::noperm_exec_error(refusal.reason));
  }
  return true;
}

bool Server::answer_in_pubsub_context(Connection& conn, const engine::CommandSpec& spec,
                                      std::span<const std::string_view> argv,
                                      protocol::ReplyWriter& writer) {
  // RESP3 carries messages as pushes, so a RESP3 subscriber may run anything.
  if (conn.resp() != protocol::RespVersion::kResp2 || pubsub_.total_subscriptions(conn.id()) == 0) {
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
  return true;
}

}  // namespace ringkv::server
