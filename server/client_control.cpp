// Client controls on the server's side: CLIENT LIST/KILL over the registry, the disconnection
// of clients whose ACL user was deleted or lost channels, CLIENT PAUSE (the clients' requests
// held until the pause ends), CLIENT UNBLOCK, and client-side caching (CLIENT TRACKING):
// remembering what tracking clients read and sending invalidations as Redis 7.0 does — RESP3
// pushes on the client's connection, or, redirected, pushes or __redis__:invalidate messages on
// another client's.
#include "engine/commands/client_control.h"

#include <algorithm>
#include <map>

#include "common/numbers.h"
#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {

namespace {

constexpr std::string_view kInvalidateChannel = "__redis__:invalidate";
// Client-side caching between nodes: RINGKV.TRACK <reader's node> <key>... asks a key's owner to
// report the keys' next change; the owner does with RINGKV.INVALIDATE <key>.

// Asks peer `node` to report the next change of `keys` to this node (RINGKV.TRACK), on client
// `client_id`'s link, so that the owner knows before it serves the client's reads that follow
// there (tracking is by key name, whatever the database, as in Redis: the frame names none).
void send_track_frame(cluster::Cluster& cluster, uint64_t client_id, size_t node,
                      std::span<const std::string_view> keys) {
  if (keys.empty()) return;
  // Only run here when `node` is this one, which it never is: any row does.
  static const engine::CommandSpec* const kGet = engine::find_command("get");
  std::vector<std::string_view> frame{cluster::kTrackFrame, cluster.self_address()};
  frame.insert(frame.end(), keys.begin(), keys.end());
  cluster::Route to_owner;
  to_owner.kind = cluster::RouteKind::kRemote;
  to_owner.node = node;
  cluster.execute(to_owner, *kGet, frame, client_id, protocol::RespVersion::kResp2, 0,
                  [](std::string_view) {});
}

}  // namespace

std::string Server::client_list(std::span<const uint64_t> ids,
                                std::optional<engine::ClientKind> kind) {
  return clients_.list(ids, kind);
}

size_t Server::kill_clients(const engine::ClientKillFilter& filter) {
  return clients_.kill(filter);
}

void Server::disconnect_users(std::span<const engine::acl::User* const> users,
                              engine::ClientSession* self) {
  if (users.empty()) return;
  clients_.for_each([&](Connection& conn) {
    if (conn.closing() || std::find(users.begin(), users.end(), conn.user()) == users.end()) {
      return;
    }
    // As Redis: logged out at once, then closed (the caller after its reply).
    conn.set_user(users_.default_user());
    conn.set_authenticated(false);
    if (&conn == self) {
      conn.close_after_reply();
    } else {
      conn.close();
    }
  });
}

void Server::user_channels_changed(const engine::acl::User& user) {
  clients_.for_each([&](Connection& conn) {
    if (conn.closing() || conn.user() != &user || pubsub_.subscription_count(conn.id()) == 0) {
      return;
    }
    bool allowed = true;
    for (const std::string& pattern : pubsub_.subscriptions(conn.id(), true)) {
      allowed = allowed && user.channel_allowed(pattern, true);
    }
    for (const std::string& channel : pubsub_.subscriptions(conn.id(), false)) {
      allowed = allowed && user.channel_allowed(channel, false);
    }
    if (!allowed) conn.close();
  });
}

void Server::pause_clients(int64_t until_ms, bool all) {
  // A pause already running keeps its later end and its stricter kind, as Redis's pauseClients.
  if (clients_paused()) {
    until_ms = std::max(until_ms, pause_until_ms_);
    all = all || pause_all_;
  }
  pause_until_ms_ = std::max<int64_t>(until_ms, 1);
  pause_all_ = all;
  arm_pause_timer();
}

void Server::unpause_clients() {
  pause_until_ms_ = 0;
  pause_all_ = false;
  uv_timer_stop(&pause_timer_);
  std::vector<uint64_t> ids;
  ids.swap(paused_);
  // Resumed in the order they were paused: each runs its held request at the end of this loop
  // iteration (and is held again if another pause began meanwhile).
  for (uint64_t id : ids) {
    if (Connection* conn = clients_.find(id)) conn->resume();
  }
}

void Server::arm_pause_timer() {
  const int64_t now = unix_now_ms();
  const int64_t left = pause_until_ms_ > now ? pause_until_ms_ - now : 0;
  uv_timer_start(
      &pause_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Server*>(t->data);
        if (unix_now_ms() < self->pause_until_ms_) {
          self->arm_pause_timer();  // the loop's clock ran ahead of the wall clock
        } else {
          self->unpause_clients();
        }
      },
      static_cast<uint64_t>(left), 0);
}

bool Server::paused_request(Connection& conn, std::span<const std::string_view> argv) {
  if (unix_now_ms() >= pause_until_ms_) {
    unpause_clients();
    return false;
  }
  bool wait = pause_all_;
  if (!wait) {
    // Unknown commands, wrong arities and NOAUTH are answered at once, as Redis checks them
    // before the pause.
    std::string error;
    const engine::CommandSpec* spec = engine::resolve_client_command(argv, error);
    if (spec == nullptr || (auth_required(conn) && (spec->flags & engine::kNoAuth) == 0)) {
      return false;
    }
    static const engine::CommandSpec* const kExec = engine::find_command("exec");
    constexpr uint32_t kMayWrite = engine::kWrite | engine::kMayReplicate;
    wait = (spec->flags & kMayWrite) != 0 ||
           (spec == kExec && conn.transaction().active && (conn.transaction().flags & kMayWrite));
  }
  if (!wait) return false;
  if (std::find(paused_.begin(), paused_.end(), conn.id()) == paused_.end()) {
    paused_.push_back(conn.id());
  }
  return true;
}

bool Server::unblock_client(uint64_t id, bool error) {
  Connection* conn = clients_.find(id);
  if (conn == nullptr || conn->is_peer() || blocked_.find(id) == nullptr) return false;
  if (!error) {
    // Answered as its timeout would answer it.
    rerun_blocked(*conn, true);
    return true;
  }
  blocked_.remove(id);
  conn->late_reply_writer().error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
  conn->unblock();
  arm_block_timer();
  return true;
}

void Server::track_prefixes(uint64_t id, std::span<const std::string> prefixes, bool add) {
  for (const std::string& prefix : prefixes) tracking_.set_prefix(id, prefix, add);
}

void Server::track_reads(const Origin& origin, const engine::CommandSpec& spec,
                         std::span<const std::string_view> argv) {
  // A script's reads are remembered as its commands run, not from EVAL's keys; shard channels
  // are no keys to cache.
  if (runs_script(spec) || (spec.flags & engine::kPubsub) != 0) return;
  Connection& conn = *origin.conn;
  if (conn.is_peer() || !engine::tracking_remembers_reads(conn.tracking_state())) return;
  for (size_t pos : engine::key_positions(spec, argv)) tracking_.remember(conn.id(), argv[pos]);
}

void Server::tracking_key_changed(std::string_view key) {
  if (tracking_.has_prefixes()) tracking_.note_broadcast(key, running_client_);
  if (!peer_readers_.empty()) {
    if (auto it = peer_readers_.find(key); it != peer_readers_.end()) {
      const std::set<std::string> nodes = std::move(it->second);
      peer_readers_.erase(it);
      const std::string_view frame[] = {cluster::kInvalidateFrame, key};
      for (const std::string& node : nodes) cluster_->send_frame(node, frame);
    }
  }
  invalidate_readers(key);
}

void Server::invalidate_readers(std::string_view key) {
  if (tracking_.keys() == 0) return;
  for (uint64_t id : tracking_.take_readers(key)) {
    Connection* target = clients_.find(id);
    if (target == nullptr) continue;
    const engine::ClientTracking& t = target->tracking_state();
    // A client that turned tracking off, or on again in BCAST mode, hears nothing more of the
    // keys it read before.
    if (!t.on || t.bcast) continue;
    if (id == running_client_) {
      if (!t.noloop) self_invalidations_.emplace_back(std::string(key));
      continue;
    }
    const std::vector<std::string> keys{std::string(key)};
    send_invalidation(*target, &keys);
  }
}

void Server::limit_tracking_table() {
  const auto limit = static_cast<size_t>(config_.server.tracking_table_max_keys);
  if (limit == 0 || tracking_.keys() <= limit) {
    tracking_effort_ = 0;
    return;
  }
  // The invalidations reach every reader at once, the client about to run a command included.
  const uint64_t running = running_client_;
  running_client_ = 0;
  for (uint64_t effort = 100 * (tracking_effort_ + 1); effort > 0 && tracking_.keys() > limit;
       --effort) {
    const std::string key = tracking_.some_key();
    invalidate_readers(key);
  }
  running_client_ = running;
  tracking_effort_ = tracking_.keys() > limit ? tracking_effort_ + 1 : 0;
}

void Server::track_remote_reads(Connection& conn, const engine::CommandSpec& spec,
                                std::span<const std::string_view> argv,
                                const cluster::Route& route) {
  // A blocking read waits on a link of its own: its keys are not tracked across nodes.
  if ((spec.flags & (engine::kPubsub | engine::kBlocking)) != 0 ||
      !engine::tracking_remembers_reads(conn.tracking_state())) {
    return;
  }
  const std::vector<size_t> positions = engine::key_positions(spec, argv);
  for (size_t pos : positions) tracking_.remember(conn.id(), argv[pos]);
  // One RINGKV.TRACK per peer owner, with its keys.
  std::vector<std::pair<size_t, std::vector<std::string_view>>> per_node;
  if (route.kind == cluster::RouteKind::kRemote) {
    per_node.emplace_back(route.node, std::vector<std::string_view>{});
    for (size_t pos : positions) per_node.back().second.push_back(argv[pos]);
  } else if (route.kind == cluster::RouteKind::kSplit) {
    for (const cluster::Fragment& f : route.fragments) {
      if (f.node == cluster_->router().self()) continue;
      per_node.emplace_back(f.node, std::vector<std::string_view>{});
      for (size_t g : f.groups) per_node.back().second.push_back(argv[g]);
    }
  }
  for (auto& [node, keys] : per_node) send_track_frame(*cluster_, conn.id(), node, keys);
}

std::vector<std::string> Server::track_block_reads(
    Connection& conn, const std::vector<std::vector<std::string>>& block, size_t whole) {
  if (!conn.tracking_state().on || !engine::tracking_remembers_reads(conn.tracking_state())) {
    return {};
  }
  // The keys of the block's read-only commands, by peer owner (what runs here is remembered as
  // it runs). A split command (MGET) has its fragments' keys on their owners.
  std::map<size_t, std::vector<std::string_view>> per_node;
  std::vector<std::string_view> views;
  std::vector<size_t> positions;
  for (const std::vector<std::string>& command : block) {
    views.assign(command.begin(), command.end());
    std::string error;
    const engine::CommandSpec* spec = engine::resolve_command(views, error);
    if (spec == nullptr || (spec->flags & engine::kReadonly) == 0 ||
        (spec->flags & (engine::kPubsub | engine::kBlocking)) != 0) {
      continue;
    }
    engine::key_positions(*spec, views, positions);
    for (size_t pos : positions) {
      const size_t node = cluster_->routing_ring().owner_index(views[pos]);
      if (node == hashring::HashRing::kNoNode || node == cluster_->router().self()) continue;
      tracking_.remember(conn.id(), views[pos]);
      per_node[node].push_back(views[pos]);
    }
  }
  std::vector<std::string> ahead;
  for (auto& [node, keys] : per_node) {
    if (node != whole) {
      // Not on the link the block's part runs on: sent at once, it reaches the owner before
      // the part runs (that waits for the locks' round trip), and surely before the locks are
      // released, so no write comes between the read and the owner knowing of it.
      send_track_frame(*cluster_, conn.id(), node, keys);
      continue;
    }
    ahead = {std::string(cluster::kTrackFrame), cluster_->self_address()};
    ahead.insert(ahead.end(), keys.begin(), keys.end());
  }
  return ahead;
}

void Server::tracking_frame(const cluster::PeerFrame& frame, protocol::ReplyWriter& writer) {
  const std::span<const std::string_view> args = frame.args;
  if (frame.kind == cluster::PeerFrameKind::kTrack) {
    // Held to tracking-table-max-keys like this node's own readers' keys: past it, keys are
    // reported to their reading nodes as if written, and forgotten — before this frame's keys
    // are added, which are being read now (a few more than it adds, so that a lowered limit is
    // reached in a few frames).
    const auto limit = static_cast<size_t>(config_.server.tracking_table_max_keys);
    const std::span<const std::string_view> keys = args.subspan(1);
    auto it = peer_readers_.begin();
    for (size_t effort = keys.size() + 100; limit != 0 && effort > 0 && it != peer_readers_.end() &&
                                            peer_readers_.size() + keys.size() > limit;
         --effort) {
      if (std::find(keys.begin(), keys.end(), it->first) != keys.end()) {
        ++it;
        continue;
      }
      const std::string_view invalidate[] = {cluster::kInvalidateFrame, it->first};
      for (const std::string& node : it->second) cluster_->send_frame(node, invalidate);
      it = peer_readers_.erase(it);
    }
    for (std::string_view key : keys) {
      auto found = peer_readers_.find(key);
      if (found == peer_readers_.end()) {
        found = peer_readers_.emplace(std::string(key), std::set<std::string>{}).first;
      }
      found->second.emplace(args[0]);
    }
  } else {
    invalidate_readers(args[0]);
  }
  writer.ok();
}

void Server::tracking_flushed() {
  // The peers reading keys here flush their own part of the same FLUSHALL (it runs on every
  // node) and tell their clients then.
  peer_readers_.clear();
  clients_.for_each([this](Connection& conn) {
    if (!conn.tracking_state().on) return;
    if (conn.id() == running_client_) {
      self_invalidations_.emplace_back(std::nullopt);
    } else {
      send_invalidation(conn, nullptr);
    }
  });
  tracking_.forget_all_keys();
}

void Server::tracking_closed(Connection& conn) {
  const engine::ClientTracking& t = conn.tracking_state();
  if (!t.prefixes.empty()) track_prefixes(conn.id(), t.prefixes, false);
}

void Server::tracking_after_request(Connection& conn) {
  engine::ClientTracking& t = *conn.tracking();
  if (t.caching && !conn.in_transaction()) {
    static const engine::CommandSpec* const kClient = engine::find_command("client");
    const engine::CommandSpec* last = conn.last_command();
    const std::span<const engine::CommandSpec> family = kClient->subcommands;
    if (last < family.data() || last >= family.data() + family.size()) t.caching = false;
  }
  if (self_invalidations_.empty()) return;
  std::vector<std::optional<std::string>> pending;
  pending.swap(self_invalidations_);
  if (conn.closing()) return;
  for (const std::optional<std::string>& key : pending) {
    if (!key) {
      send_invalidation(conn, nullptr);
      continue;
    }
    const std::vector<std::string> keys{*key};
    send_invalidation(conn, &keys);
  }
}

void Server::send_invalidation(Connection& tracker, const std::vector<std::string>* keys) {
  engine::ClientTracking& t = *tracker.tracking();
  Connection* target = &tracker;
  if (t.redirect != 0) {
    target = clients_.find(t.redirect);
    if (target == nullptr || target->closing()) {
      // The client invalidations went to has gone: a RESP3 tracker is told so.
      t.broken_redirect = true;
      if (tracker.resp() == protocol::RespVersion::kResp3) {
        protocol::ReplyWriter w(tracker.push_buffer(), protocol::RespVersion::kResp3);
        w.push(2);
        w.bulk("tracking-redir-broken");
        w.integer(static_cast<int64_t>(t.redirect));
        tracker.output_added();
      }
      return;
    }
  }
  if (target->closing()) return;
  protocol::ReplyWriter w(target->push_buffer(), target->resp());
  if (target->resp() == protocol::RespVersion::kResp3) {
    w.push(2);
    w.bulk("invalidate");
  } else if (target != &tracker && pubsub_.total_subscriptions(target->id()) > 0) {
    // RESP2 has no pushes: a redirected invalidation is a message of __redis__:invalidate.
    w.array(3);
    w.bulk("message");
    w.bulk(kInvalidateChannel);
  } else {
    return;
  }
  if (keys == nullptr) {
    // Redis writes the tracking client's null, whatever the protocol of the one it reaches.
    protocol::ReplyWriter null_writer(target->push_buffer(), tracker.resp());
    null_writer.null();
  } else {
    w.array(keys->size());
    for (const std::string& key : *keys) w.bulk(key);
  }
  target->output_added();
  target->enforce_output_limits();
}

void Server::broadcast_invalidations() {
  tracking_.broadcast_done();
  for (auto& [prefix, broadcast] : tracking_.prefixes()) {
    if (broadcast.keys.empty()) continue;
    for (uint64_t id : broadcast.clients) {
      Connection* conn = clients_.find(id);
      if (conn == nullptr || !conn->tracking_state().on || !conn->tracking_state().bcast) continue;
      std::vector<std::string> keys;
      keys.reserve(broadcast.keys.size());
      for (const auto& [key, by] : broadcast.keys) {
        if (conn->tracking_state().noloop && by == id) continue;
        keys.push_back(key);
      }
      if (!keys.empty()) send_invalidation(*conn, &keys);
    }
    broadcast.keys.clear();
  }
}

}  // namespace ringkv::server
