// Server: the server's side of replication — writes whose replies wait for replicas
// (replica-acks), the replica's intake of a primary's stream, WAIT, ROLE and INFO replication.
// The streams themselves are cluster::Replication's.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "cluster/cluster.h"
#include "common/numbers.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

std::string integer_reply(int64_t n) { return ":" + std::to_string(n) + "\r\n"; }

// A ticket as RINGKV.WAIT frames carry it: "<mixed> <stream id>:<offset> ...".
std::string encode_ticket(const cluster::ReplTicket& t) {
  std::string out = t.mixed ? "1" : "0";
  for (const auto& [id, offset] : t.parts) {
    out += " " + std::to_string(id) + ":" + std::to_string(offset);
  }
  return out;
}

std::optional<cluster::ReplTicket> decode_ticket(std::span<const std::string_view> words) {
  if (words.empty()) return std::nullopt;
  cluster::ReplTicket t;
  t.mixed = words[0] == "1";
  for (size_t i = 1; i < words.size(); ++i) {
    const size_t colon = words[i].find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::optional<int64_t> id = common::parse_integer(words[i].substr(0, colon));
    const std::optional<int64_t> offset = common::parse_integer(words[i].substr(colon + 1));
    if (!id || !offset || *id < 0 || *offset < 0) return std::nullopt;
    t.parts.emplace_back(static_cast<uint64_t>(*id), static_cast<uint64_t>(*offset));
  }
  return t;
}

}  // namespace

void Server::call_replicated(const Origin& origin, const engine::CommandSpec& spec,
                             engine::CommandContext& ctx) {
  cluster::Replication& repl = cluster_->replication();
  std::string& out = ctx.reply.buffer();
  const size_t mark = out.size();
  repl.begin_ticket();
  call(spec, ctx, origin.records());
  const cluster::ReplTicket& ticket = repl.take_ticket();
  if (ticket.empty()) return;
  Connection& conn = *origin.conn;
  if (origin.is_client()) {
    conn.set_last_write({}, {}, ticket);
  }
  const size_t acks = static_cast<size_t>(config_.cluster.replica_acks);
  if (acks == 0) return;
  // The reply waits in the client's place until enough replicas have the writes; a replica that
  // does not answer in time gets the client an error (the write stays applied here).
  std::string reply = out.substr(mark);
  out.resize(mark);
  Connection::ReplySlot slot = conn.reserve_reply();
  const uint64_t limit = static_cast<uint64_t>(config_.cluster.request_timeout_ms) / 2;
  const size_t parts = ticket.parts.size();
  repl.wait(ticket, acks, uv_now(loop_) + limit, true,
            [this, slot, reply = std::move(reply), acks, parts, limit](size_t acked, bool enough) {
              if (enough) return slot.fill(reply);
              const std::string error = "-NOREPLICAS the write was applied on its primary, but " +
                                        std::to_string(acked) + " of the " +
                                        std::to_string(std::min(acks, parts)) +
                                        " replica acknowledgements it needs came within " +
                                        std::to_string(limit) + " ms\r\n";
              count_error_reply(error);
              slot.fill(error);
            });
}

void Server::note_relayed_write(Connection& conn, const engine::CommandSpec& spec,
                                std::span<const std::string_view> argv,
                                const cluster::Route& route) {
  if (!replicating() || (spec.flags & (engine::kWrite | engine::kMayReplicate)) == 0) return;
  if (route.kind == cluster::RouteKind::kLocal || route.kind == cluster::RouteKind::kFanOut) return;
  // Keys of several owners that are not split run only as an atomic multi-key command; else the
  // command is refused (CROSSSLOT) and the client's last write stays what it was.
  if (route.kind == cluster::RouteKind::kCrossSlot && !config_.cluster.atomic_multikey) return;
  engine::key_positions(spec, argv, key_scratch_);
  if (key_scratch_.empty()) return;
  if (route.kind == cluster::RouteKind::kRemote && key_scratch_.size() == 1) {
    const std::string& address = cluster_->routing_ring().nodes()[route.node].address;
    return conn.set_last_write(address, argv[key_scratch_[0]], {});
  }
  std::vector<std::string_view> keys;
  for (size_t pos : key_scratch_) keys.push_back(argv[pos]);
  note_written_keys(conn, keys);
}

void Server::note_transaction_writes(Connection& conn,
                                     std::span<const std::vector<std::string>> commands) {
  if (!replicating()) return;
  std::vector<std::string_view> keys;
  std::vector<std::string_view> views;
  for (const std::vector<std::string>& command : commands) {
    views.assign(command.begin(), command.end());
    std::string error;
    const engine::CommandSpec* spec = engine::resolve_command(views, error);
    if (spec == nullptr || (spec->flags & (engine::kWrite | engine::kMayReplicate)) == 0) continue;
    engine::key_positions(*spec, views, key_scratch_);
    for (size_t pos : key_scratch_) keys.push_back(command[pos]);
  }
  // A transaction that writes nothing leaves the client's last write as it was.
  if (!keys.empty()) note_written_keys(conn, keys);
}

void Server::note_written_keys(Connection& conn, std::span<const std::string_view> keys) {
  // Keys of one primary may have different replicas: one wait per replica set, on its primary
  // (this node: ""), for that key's streams as they are when WAIT comes.
  std::vector<Connection::LastWrite>& last = conn.last_writes();
  last.clear();
  const hashring::HashRing& ring = cluster_->routing_ring();
  const size_t factor = cluster_->replication().factor();
  std::vector<std::vector<size_t>> sets;
  std::vector<size_t> pref;
  for (std::string_view key : keys) {
    ring.preference(key, factor, pref);
    if (pref.empty() || std::find(sets.begin(), sets.end(), pref) != sets.end()) continue;
    sets.push_back(pref);
    const std::string& address = ring.nodes()[pref[0]].address;
    last.push_back(Connection::LastWrite{
        address == cluster_->self_address() ? "" : address, std::string(key), {}});
  }
}

bool Server::replica_frame(Connection& conn, const cluster::PeerFrame& frame,
                           protocol::ReplyWriter& writer) {
  cluster::Replication& repl = cluster_->replication();
  if (frame.kind == cluster::PeerFrameKind::kReplicaWait) {
    wait_frame(conn, frame.args, writer);
    return true;
  }
  std::string& primary = conn.replication_source();
  if (frame.kind == cluster::PeerFrameKind::kReplication && !frame.args.empty() &&
      common::equals_ignore_case(frame.args[0], "hello")) {
    // A primary this node is failing over (it restarted, or continued, before the change ended):
    // the copies of its keys here are about to be the ones served, and a full copy from it
    // would drop them first. Its stream opens again once the change ended either way.
    if (frame.args.size() > 1 && cluster_->fenced(frame.args[1], conn.link_fingerprint())) {
      writer.raw("-TRYAGAIN a failover of " + std::string(frame.args[1]) +
                 " is prepared here: the copies of its keys stay as they are until it ends\r\n");
      return true;
    }
    writer.raw(repl.on_frame(frame.args, conn.id(), primary));
    if (cluster::Replication::Source* source = repl.current_source(primary, conn.id())) {
      // Named in CLIENT LIST after the primary whose stream it carries.
      conn.set_name("repl-from-" + primary);
      conn.stream_ran(source->offset, true);
    }
    return true;
  }
  if (frame.kind != cluster::PeerFrameKind::kReplication && primary.empty()) return false;
  if (frame.kind == cluster::PeerFrameKind::kReplication && !frame.args.empty() &&
      common::equals_ignore_case(frame.args[0], "getack")) {
    // Not a frame of the stream: the primary asks for the offset this node ran up to.
    if (repl.current_source(primary, conn.id()) != nullptr) conn.ack_stream();
    return true;
  }
  // A stream's frame is answered only when refused; what ran is acknowledged when asked.
  std::string& out = writer.buffer();
  const size_t mark = out.size();
  cluster::Replication::Source* source = stream_frame(conn, frame, writer);
  const bool refused = out.size() > mark && out[mark] == '-';
  if (!refused) out.resize(mark);
  if (source == nullptr) return true;
  // A refused frame is missing from this node's copy: the stream copies everything again.
  if (refused) repl.frame_refused(*source);
  conn.stream_ran(source->offset);
  return true;
}

cluster::Replication::Source* Server::stream_frame(Connection& conn,
                                                   const cluster::PeerFrame& frame,
                                                   protocol::ReplyWriter& writer) {
  cluster::Replication& repl = cluster_->replication();
  const std::string& primary = conn.replication_source();
  cluster::Replication::Source* source = repl.current_source(primary, conn.id());
  if (source == nullptr) {
    writer.error("ERR not the current replication stream of " +
                 (primary.empty() ? std::string("any primary") : primary));
    return nullptr;
  }
  if (repl.primary_removed(*source, primary)) {
    // Neither run nor counted, the copy left as it is: no refusal that would spoil it.
    writer.raw(std::string(cluster::Replication::kRemovedError) + "the stream of " + primary +
               " opened under ring version " + std::to_string(source->ring_version) +
               ", which this node no longer routes by\r\n");
    return nullptr;
  }
  if (frame.kind == cluster::PeerFrameKind::kReplication) {
    writer.raw(repl.on_frame(frame.args, conn.id(), conn.replication_source()));
    return source;
  }
  const std::span<const std::string_view> argv = frame.args;
  std::string error;  // set only when the frame is refused (no allocation per frame)
  const engine::CommandSpec* spec = nullptr;
  if (frame.kind == cluster::PeerFrameKind::kCommand && !frame.resp3 && frame.user.empty()) {
    spec = engine::resolve_command(argv, error);
  }
  if (spec == nullptr) {
    repl.frame_applied(*source);
    writer.error(error.empty() ? "ERR a replication stream carries writes only" : error);
    return source;
  }
  if (!repl.accepts_writes(*source, primary, *spec, argv)) {
    repl.frame_applied(*source);
    writer.error("ERR the stream of " + primary + " opened under ring version " +
                 std::to_string(source->ring_version) + ", this node's ring changed since");
    return source;
  }
  // The primary decides when its keys expire (it sends their deletion): nothing expires here
  // while its writes run, as while loading a file.
  // (Every database: an EXEC runs its block's SELECTs.)
  const bool loading = store_.loading();
  dbs_.set_loading(true);
  applying_copy_ = true;
  run(Origin::replica(conn), *spec, argv, writer);
  applying_copy_ = false;
  dbs_.set_loading(loading);
  repl.frame_applied(*source);
  return source;
}

void Server::wait_frame(Connection& conn, std::span<const std::string_view> args,
                        protocol::ReplyWriter& writer) {
  cluster::Replication& repl = cluster_->replication();
  // RINGKV.WAIT TICKET <key>: what the key's replicas must acknowledge, answered at once on the
  // link that carried the client's write (so it is counted).
  if (args.size() == 2 && common::equals_ignore_case(args[0], "ticket")) {
    writer.raw("+" + encode_ticket(repl.ticket_for(args[1])) + "\r\n");
    return;
  }
  // RINGKV.WAIT FOR <numreplicas> <timeout ms> <ticket...>: on a link of the client's own.
  const std::optional<int64_t> need =
      args.size() >= 4 ? common::parse_integer(args[1]) : std::nullopt;
  const std::optional<int64_t> timeout =
      args.size() >= 4 ? common::parse_integer(args[2]) : std::nullopt;
  const std::optional<cluster::ReplTicket> ticket =
      need && timeout && *timeout >= 0 && common::equals_ignore_case(args[0], "for")
          ? decode_ticket(args.subspan(3))
          : std::nullopt;
  if (!ticket) {
    writer.error("ERR malformed RINGKV.WAIT");
    return;
  }
  Connection::ReplySlot slot = conn.reserve_reply();
  const uint64_t deadline = *timeout == 0 ? 0 : uv_now(loop_) + static_cast<uint64_t>(*timeout);
  repl.wait(*ticket, static_cast<size_t>(std::max<int64_t>(0, *need)), deadline, false,
            [slot](size_t acked, bool) { slot.fill(integer_reply(static_cast<int64_t>(acked))); });
}

void Server::wait_replicas(engine::CommandContext& ctx, int64_t numreplicas, int64_t timeout_ms) {
  Connection& conn = connection_of(ctx);
  const int64_t replicas =
      replicating() ? static_cast<int64_t>(cluster_->replication().factor()) - 1 : 0;
  const std::vector<Connection::LastWrite> last =
      replicating() ? conn.last_writes() : std::vector<Connection::LastWrite>{};
  if (last.empty()) {
    // Nothing written (or no replicas): every replica has all of it. Asked for more, it waits
    // out the timeout as Redis does (inside MULTI it never waits).
    if (ctx.timed_out || numreplicas <= replicas || ctx.block == nullptr) {
      return ctx.reply.integer(replicas);
    }
    ctx.block->active = true;
    ctx.block->timeout_ms = timeout_ms;
    return;
  }
  cluster::Replication& repl = cluster_->replication();
  const size_t need = static_cast<size_t>(std::max<int64_t>(0, numreplicas));
  if (ctx.block == nullptr) {
    // Inside MULTI: the count now (this node's part; a peer's counts as not acknowledged yet).
    int64_t min = replicas;
    for (const Connection::LastWrite& w : last) {
      min = std::min<int64_t>(min, w.address.empty()
                                       ? static_cast<int64_t>(repl.acknowledged(
                                             w.key.empty() ? w.ticket : repl.ticket_for(w.key)))
                                       : 0);
    }
    return ctx.reply.integer(min);
  }
  // The answer is the smallest count over the nodes the last write touched.
  struct Gather {
    size_t pending;
    int64_t min;
    std::string error;
    Connection::ReplySlot slot;
  };
  auto g = std::make_shared<Gather>(
      Gather{last.size(), std::numeric_limits<int64_t>::max(), {}, conn.reserve_reply()});
  conn.block();
  auto part_done = [this, g](std::string_view reply) {
    if (!reply.empty() && reply[0] == ':') {
      g->min = std::min<int64_t>(
          g->min, common::parse_integer(reply.substr(1, reply.size() - 3)).value_or(0));
    } else if (g->error.empty()) {
      g->error = std::string(reply);
    }
    if (--g->pending > 0) return;
    if (!g->error.empty()) count_error_reply(g->error);
    g->slot.fill(g->error.empty() ? integer_reply(g->min) : g->error, true);
  };
  const uint64_t deadline = timeout_ms == 0 ? 0 : uv_now(loop_) + static_cast<uint64_t>(timeout_ms);
  for (const Connection::LastWrite& w : last) {
    if (w.address.empty()) {
      repl.wait(w.key.empty() ? w.ticket : repl.ticket_for(w.key), need, deadline, false,
                [part_done](size_t acked, bool) {
                  part_done(integer_reply(static_cast<int64_t>(acked)));
                });
    } else {
      cluster_->wait_remote(w.address, conn.id(), w.key, numreplicas, timeout_ms, part_done);
    }
  }
}

void Server::role(engine::CommandContext& ctx) {
  if (!replicating()) return engine::ServerControl::role(ctx);
  const cluster::Replication& repl = cluster_->replication();
  // As Redis's, the list has the replicas connected now (a member down is left out).
  std::vector<cluster::ReplicaStatus> replicas = repl.replicas();
  std::erase_if(replicas,
                [](const cluster::ReplicaStatus& r) { return r.state == "disconnected"; });
  ctx.reply.array(3);
  ctx.reply.bulk("master");
  ctx.reply.integer(static_cast<int64_t>(repl.total_offset()));
  ctx.reply.array(replicas.size());
  for (const cluster::ReplicaStatus& r : replicas) {
    const size_t colon = r.address.rfind(':');
    ctx.reply.array(3);
    ctx.reply.bulk(r.address.substr(0, colon));
    ctx.reply.bulk(colon == std::string::npos ? "" : r.address.substr(colon + 1));
    ctx.reply.bulk(std::to_string(r.acked));
  }
}

std::string Server::replication_info() const {
  std::string out;
  auto field = [&out](std::string_view name, const std::string& value) {
    out.append(name);
    out += ':';
    out += value;
    out += "\r\n";
  };
  // As Redis, while min-replicas-to-write is on: the replicas that count for it (this node's
  // streams, whatever the keys).
  auto good_replicas_field = [this](auto& field) {
    if (min_replicas_on()) field("min_slaves_good_slaves", std::to_string(good_replicas({})));
  };
  if (!replicating()) {
    // A master without replicas, as Redis reports one: no stream offset, no backlog.
    field("role", "master");
    field("connected_slaves", "0");
    good_replicas_field(field);
    field("master_failover_state", "no-failover");
    field("master_replid", run_id_);
    field("master_replid2", std::string(40, '0'));
    field("master_repl_offset", "0");
    field("second_repl_offset", "-1");
    field("repl_backlog_active", "0");
    field("repl_backlog_size", std::to_string(config_.cluster.repl_backlog_size));
    field("repl_backlog_first_byte_offset", "0");
    field("repl_backlog_histlen", "0");
    return out;
  }
  const cluster::Replication& repl = cluster_->replication();
  const std::vector<cluster::ReplicaStatus> replicas = repl.replicas();
  const uint64_t now = uv_now(loop_);
  size_t online = 0;
  for (const auto& r : replicas) online += r.state == "online" ? 1 : 0;
  // Every node is a primary of its keys and a replica of its neighbours': the role is "master"
  // as tools expect, the replicas are those of this node's keys, and the primaries whose keys
  // it holds are listed after them.
  field("role", "master");
  field("connected_slaves", std::to_string(online));
  good_replicas_field(field);
  for (size_t i = 0; i < replicas.size(); ++i) {
    const cluster::ReplicaStatus& r = replicas[i];
    const size_t colon = r.address.rfind(':');
    field("slave" + std::to_string(i),
          "ip=" + r.address.substr(0, colon) + ",port=" + r.address.substr(colon + 1) +
              ",state=" + r.state + ",offset=" + std::to_string(r.acked) +
              ",lag=" + std::to_string(r.lag_ms / 1000) + ",lag_ms=" + std::to_string(r.lag_ms) +
              ",behind=" + std::to_string(r.offset - r.acked) + ",full_syncs=" +
              std::to_string(r.full_syncs) + ",partial_syncs=" + std::to_string(r.partial_syncs));
  }
  field("master_failover_state", "no-failover");
  field("master_repl_offset", std::to_string(repl.total_offset()));
  field("repl_backlog_active", "1");
  field("repl_backlog_size", std::to_string(repl.backlog_bytes()));
  field("replication_factor", std::to_string(repl.factor()));
  field("replica_acks", std::to_string(config_.cluster.replica_acks));
  const std::vector<cluster::SourceStatus> sources = repl.sources();
  field("replica_of", std::to_string(sources.size()));
  for (size_t i = 0; i < sources.size(); ++i) {
    const cluster::SourceStatus& s = sources[i];
    const size_t colon = s.address.rfind(':');
    field("primary" + std::to_string(i),
          "ip=" + s.address.substr(0, colon) + ",port=" + s.address.substr(colon + 1) +
              ",state=" + (s.synced ? "synced" : "sync") + ",offset=" + std::to_string(s.offset) +
              ",last_io_seconds_ago=" +
              std::to_string(s.last_frame_ms == 0 ? 0 : (now - s.last_frame_ms) / 1000));
  }
  return out;
}

}  // namespace ringkv::server
