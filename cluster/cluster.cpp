// Cluster: relay, split/merge and fan-out of commands over the ring.
#include "cluster/cluster.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>

#include "cluster/cluster_internal.h"
#include "common/numbers.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// How often link timeouts are checked.
constexpr uint64_t kTimeoutCheckMs = 50;

hashring::HashRing build_ring(const conf::ClusterOptions& options, const std::string& self) {
  auto scheme = hashring::scheme_named(options.hash);
  hashring::HashRing ring(scheme ? *scheme : hashring::balanced_scheme(),
                          static_cast<uint32_t>(options.replicas));
  std::vector<hashring::Member> members;
  members.push_back({self, 1});
  for (const auto& p : options.peers) {
    members.push_back({p.addr, static_cast<uint32_t>(p.weight)});
  }
  ring.set_members(members);
  return ring;
}

}  // namespace

Cluster::Cluster(uv_loop_t* loop, const conf::ClusterOptions& options, std::string_view dir,
                 LocalExecutor local)
    : loop_(loop),
      options_(options),
      local_(std::move(local)),
      ring_dir_(dir),
      self_(options.self),
      ring_(build_ring(options, self_)),
      routing_(ring_),
      router_(routing_, routing_.index_of(self_)),
      self_full_(ring_.index_of(self_)) {
  replication_ = std::make_unique<Replication>(
      Replication::Env{loop_,
                       [this](const std::string& address) {
                         // Writes wait for the replica however long: its health decides.
                         const auto t = static_cast<uint64_t>(options_.connect_timeout_ms);
                         return make_link(peer(address), LinkOptions{t, 0, t});
                       },
                       [this](const std::string& address) { return peer(address).up; },
                       [this](const std::string& address) { return peer(address).last_seen_ms; }},
      self_, static_cast<size_t>(options_.replication_factor),
      static_cast<size_t>(options_.repl_backlog_size),
      static_cast<uint64_t>(options_.repl_batch_ms));
  load_ring();
  index_peers();
  rebuild_routing();
}

Cluster::PeerState& Cluster::peer(std::string_view address) {
  auto it = known_peers_.find(std::string(address));
  if (it != known_peers_.end()) return *it->second;
  auto state = std::make_unique<PeerState>(
      std::string(address), static_cast<size_t>(std::max<int64_t>(1, options_.pool_size)),
      LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms),
                  static_cast<uint64_t>(options_.request_timeout_ms)},
      [this](PeerState& peer, LinkOptions o) { return make_link(peer, o); });
  PeerState& ref = *state;
  known_peers_.emplace(std::string(address), std::move(state));
  return ref;
}

void Cluster::index_peers() {
  self_full_ = ring_.index_of(self_);
  peers_.assign(ring_.size(), nullptr);
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i != self_full_) peers_[i] = &peer(ring_.nodes()[i].address);
  }
}

void Cluster::rebuild_routing() {
  // Members failed over own no keys (failover.cpp decides which, with a majority).
  routing_ = live_ring(ring_.nodes(), failed_);
  routing_to_full_.clear();
  for (const auto& m : routing_.nodes()) routing_to_full_.push_back(ring_.index_of(m.address));
  router_ = Router(routing_, routing_.index_of(self_));
  routing_epoch_++;
  replication_->set_routing(routing_, ring_version_, ring_);
}

Cluster::~Cluster() = default;

void Cluster::start() {
  uv_check_init(loop_, &flush_check_);
  flush_check_.data = this;
  // Frames queued while handling this iteration's client input go out in one write per link.
  uv_check_start(&flush_check_, [](uv_check_t* h) {
    auto* self = static_cast<Cluster*>(h->data);
    for (auto& [address, p] : self->known_peers_) p->pool.flush();
    for (auto* links : {&self->migration_links_, &self->control_links_}) {
      for (auto& [address, link] : *links) {
        if (link->needs_flush()) link->flush();
      }
    }
    for (auto& [id, b] : self->blocking_links_) {
      if (b.link && b.link->needs_flush()) b.link->flush();
    }
    self->for_each_transaction_link([](PeerLink& link) {
      if (link.needs_flush()) link.flush();
    });
    self->replication_->flush();
    // Closing a retired link fails what it still carried (a client that went away).
    for (auto& l : self->retired_links_) l->close(LinkErrorKind::kAbandoned);
    self->retired_links_.clear();
  });
  uv_timer_init(loop_, &timeout_timer_);
  timeout_timer_.data = this;
  uv_timer_start(
      &timeout_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Cluster*>(t->data);
        uint64_t now = uv_now(self->loop_);
        for (auto& [address, p] : self->known_peers_) p->pool.check_timeouts(now);
        for (auto& [address, link] : self->control_links_) link->check_timeouts(now);
        self->for_each_transaction_link([now](PeerLink& link) { link.check_timeouts(now); });
      },
      kTimeoutCheckMs, kTimeoutCheckMs);
  uv_timer_init(loop_, &change_timer_);
  change_timer_.data = this;
  uv_timer_init(loop_, &recovery_timer_);
  recovery_timer_.data = this;
  uv_timer_start(
      &recovery_timer_, [](uv_timer_t* t) { static_cast<Cluster*>(t->data)->recover(); }, 1000,
      1000);
  uv_timer_init(loop_, &health_timer_);
  health_timer_.data = this;
  uint64_t interval = static_cast<uint64_t>(options_.health_interval_ms);
  // A lease outlives a few lost pings; a member that lost it stops serving before the others
  // would fail it over (they need failure-limit failed pings to see it down).
  lease_ms_ = interval * static_cast<uint64_t>(options_.failure_limit + 1);
  lease_lost_since_ = uv_now(loop_);
  uv_timer_start(
      &health_timer_, [](uv_timer_t* t) { static_cast<Cluster*>(t->data)->check_health(); },
      interval, interval);
  replication_->start();
  started_ = true;
  // The first pings now: the lease (and the peers' health) are known before the first interval.
  check_health();
}

void Cluster::check_health() {
  update_lease();
  for (size_t i = 0; i < peers_.size(); ++i) {
    if (!peers_[i]) continue;
    PeerState& peer = *peers_[i];
    if (peer.ping_in_flight) {
      // Unanswered for a whole interval: that ping failed (its late answer is ignored).
      peer.ping_in_flight = false;
      peer.ping_seq++;
      ping_failed(peer, "timeout");
    }
    // A down peer is probed again at least once an interval.
    const uint64_t interval = static_cast<uint64_t>(options_.health_interval_ms);
    PeerLink& health = peer.pool.health(LinkOptions{
        std::min<uint64_t>(interval, static_cast<uint64_t>(options_.connect_timeout_ms)), interval,
        interval});
    peer.ping_in_flight = true;
    const uint64_t seq = ++peer.ping_seq;
    PeerState* ps = &peer;
    const uint64_t sent = uv_now(loop_);
    PeerLink* link = &health;  // alive while it calls back
    health.send("*1\r\n$4\r\nPING\r\n",
                [this, ps, seq, sent, link](std::string_view reply, const LinkError* error) {
                  PeerState& p = *ps;
                  if (p.ping_seq != seq) return;
                  p.ping_in_flight = false;
                  if (error == nullptr && reply == "+PONG\r\n") {
                    // Another connection answers than the last one that did: that one broke.
                    const uint64_t connects = link->stats().connects;
                    if (p.health_connects != 0 && connects != p.health_connects && peer_lost_) {
                      peer_lost_(p.address);
                    }
                    p.health_connects = connects;
                    p.granted_ms = sent;
                    ping_succeeded(p);
                  } else {
                    // A peer that fences this node failed it over, or is about to: a link that
                    // was accepted before is not refused for a ring mismatch, so its ring is
                    // asked for here (this node serves nothing stale meanwhile: no lease).
                    if (error == nullptr && reply.starts_with("-ERR fenced")) {
                      catch_up_from(p.address);
                    }
                    ping_failed(p, error ? error->reason() : "unexpected reply to PING");
                  }
                });
  }
}

void Cluster::ping_succeeded(PeerState& peer) {
  peer.failures = 0;
  peer.last_seen_ms = uv_now(loop_);
  update_lease();
  drive_restart_check();
  if (peer.up) return;
  peer.up = true;
  spdlog::warn("peer {} is up again", peer.address);
  replication_->peer_state_changed(peer.address, true);
  // Relay links waiting out a reconnect delay from while it was down may connect right away.
  peer.pool.reset_backoff();
  maybe_restore();
}

void Cluster::ping_failed(PeerState& peer, std::string_view reason) {
  peer.failures++;
  peer.last_failure = reason;
  if (!peer.up || peer.failures < options_.failure_limit) return;
  peer.up = false;
  peer.times_down++;
  spdlog::warn("peer {} is down after {} failed pings ({})", peer.address, peer.failures, reason);
  if (peer_lost_) peer_lost_(peer.address);
  replication_->peer_state_changed(peer.address, false);
  // Blocking requests wait without a timeout: a peer known down answers them now.
  std::vector<PeerLink*> waiting;
  for (auto& [id, b] : blocking_links_) {
    if (b.peer == &peer) waiting.push_back(b.link.get());
  }
  for (PeerLink* link : waiting) link->close(LinkErrorKind::kDown);
  // Requests already relayed to a hung peer fail now rather than at their timeout (their
  // outcome is unknown, as with any request a peer took and did not answer).
  peer.pool.fail_relays(LinkErrorKind::kDown);
  for (auto& link : peer.idle_transaction_links) retired_links_.push_back(std::move(link));
  peer.idle_transaction_links.clear();
  for_each_transaction_link([&peer](PeerLink& link) {
    if (link.address() == peer.address && link.in_flight() > 0) link.close(LinkErrorKind::kDown);
  });
  maybe_fail_over();
}

void Cluster::stop() {
  if (!started_) return;
  started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_check_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&timeout_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&health_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&change_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&recovery_timer_), nullptr);
  replication_->stop();
  for (auto& [address, link] : control_links_) link->close(LinkErrorKind::kShutdown);
  for (auto& [address, p] : known_peers_) {
    p->pool.close(LinkErrorKind::kShutdown);
    for (auto& link : p->idle_transaction_links) link->close(LinkErrorKind::kShutdown);
  }
  for (auto& [address, link] : migration_links_) link->close(LinkErrorKind::kShutdown);
  for_each_transaction_link([](PeerLink& link) { link.close(LinkErrorKind::kShutdown); });
}

bool Cluster::ring_mismatch(const PeerState& peer) {
  return peer.refused_by_peer == kRingMismatch || peer.refused_here == kRingMismatch;
}

std::optional<LinkError> Cluster::unavailable_error(const PeerState& peer) const {
  if (!peer.refused_by_peer.empty()) {
    return LinkError{LinkErrorKind::kRefused, peer.address, peer.refused_by_peer};
  }
  if (!peer.up) return LinkError{LinkErrorKind::kDown, peer.address, {}};
  return std::nullopt;
}

void Cluster::send_to(size_t node, const engine::CommandSpec& spec,
                      std::span<const std::string_view> argv, const std::vector<size_t>* groups,
                      size_t step, uint64_t client_id, protocol::RespVersion resp, int db,
                      PeerLink::ReplyCallback cb) {
  std::vector<std::string_view> fragment;
  if (groups != nullptr) {
    fragment.reserve(1 + groups->size() * step);
    fragment.push_back(argv[0]);
    for (size_t g : *groups) {
      for (size_t k = 0; k < step; ++k) fragment.push_back(argv[g + k]);
    }
    argv = fragment;
  }
  if (node == router_.self()) {
    std::string out;
    protocol::ReplyWriter w(out, resp);
    local_(spec, argv, db, w);
    cb(out, nullptr);
    return;
  }
  const size_t full = routing_to_full_[node];
  if (std::optional<LinkError> why = unavailable_error(*peers_[full])) {
    // Known down (fail mode) or refusing: answer at once instead of waiting for a timeout.
    cb({}, &*why);
    return;
  }
  PeerLink& link = peers_[full]->pool.link_for(client_id);
  append_peer_frame(link.frame_buffer(), {db, resp == protocol::RespVersion::kResp3}, argv);
  relayed_++;
  // (The caller's callback counts a failed reply in relay_errors_: wrapped here, it would cost
  // every relayed request another allocation.)
  link.commit(std::move(cb));
}

void Cluster::send_frame(std::string_view address, std::span<const std::string_view> argv) {
  // Subscribers leaving during shutdown must not reopen links.
  if (!started_) return;
  const size_t node = routing_.index_of(address);
  if (node == hashring::HashRing::kNoNode || node == router_.self()) return;
  PeerState& peer = *peers_[routing_to_full_[node]];
  if (unavailable_error(peer)) return;
  PeerLink& link = peer.pool.link_for(0);
  append_peer_frame(link.frame_buffer(), {}, argv);
  link.commit([](std::string_view, const LinkError*) {});
}

void Cluster::execute(const Route& route, const engine::CommandSpec& spec,
                      std::span<const std::string_view> argv, uint64_t client_id,
                      protocol::RespVersion resp, int db, ReplyDone done) {
  if (route.kind == RouteKind::kCrossSlot) {
    done(error_reply(kCrossSlotError));
    return;
  }
  if (route.kind == RouteKind::kRemote && (spec.flags & engine::kBlocking)) {
    execute_blocking(route.node, spec, argv, client_id, resp, db, std::move(done));
    return;
  }
  if (route.kind == RouteKind::kRemote) {
    send_to(route.node, spec, argv, nullptr, 1, client_id, resp, db,
            [this, done = std::move(done)](std::string_view reply, const LinkError* error) {
              if (error != nullptr) relay_errors_++;
              done(error ? error_reply(error->text()) : reply);
            });
    return;
  }
  if (route.kind == RouteKind::kFanOut && spec.name == "scan") {
    execute_scan(spec, argv, client_id, resp, db, std::move(done));
    return;
  }

  const bool write = (spec.flags & engine::kWrite) != 0;
  const ReplyMerge::Kind kind = spec.merge;
  if (route.kind == RouteKind::kSplit) {
    split_++;
    auto m =
        std::make_shared<ReplyMerge>(kind, write, resp, route.fragments.size(), std::move(done));
    for (size_t i = 0; i < route.fragments.size(); ++i) {
      m->set_positions(i, fragment_positions(spec, route, route.fragments[i]));
    }
    for (size_t i = 0; i < route.fragments.size(); ++i) {
      send_to(route.fragments[i].node, spec, argv, &route.fragments[i].groups, route.key_step,
              client_id, resp, db, [this, m, i](std::string_view reply, const LinkError* error) {
                if (error != nullptr) relay_errors_++;
                m->part_done(i, error == nullptr, error ? error->text() : reply);
              });
    }
    return;
  }

  // Keyspace-wide: every node routed to, self included.
  fanout_++;
  auto m = std::make_shared<ReplyMerge>(kind, write, resp, routing_.size(), std::move(done));
  for (size_t node = 0; node < routing_.size(); ++node) {
    send_to(node, spec, argv, nullptr, 1, client_id, resp, db,
            [this, m, node](std::string_view reply, const LinkError* error) {
              if (error != nullptr) relay_errors_++;
              m->part_done(node, error == nullptr, error ? error->text() : reply);
            });
  }
}

void Cluster::execute_blocking(size_t node, const engine::CommandSpec& spec,
                               std::span<const std::string_view> argv, uint64_t client_id,
                               protocol::RespVersion resp, int db, ReplyDone done) {
  PeerState& peer = *peers_[routing_to_full_[node]];
  if (std::optional<LinkError> why = unavailable_error(peer)) {
    relay_errors_++;
    done(error_reply(why->text()));
    return;
  }
  BlockingRelay& b = blocking_links_[client_id];
  if (b.link) retired_links_.push_back(std::move(b.link));
  b.argv.assign(argv.begin(), argv.end());
  b.spec = &spec;
  b.resp = resp;
  b.db = db;
  b.done = std::move(done);
  send_blocking(client_id, b, peer);
}

void Cluster::send_blocking(uint64_t client_id, BlockingRelay& b, PeerState& peer) {
  // No request timeout: the command's own timeout (possibly forever) runs on the peer, and a
  // dead or hung peer is caught by the link closing or by the health checks.
  b.peer = &peer;
  b.link = make_link(peer, LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms), 0,
                                       static_cast<uint64_t>(options_.connect_timeout_ms)});
  const uint64_t seq = ++b.seq;
  std::vector<std::string_view> argv(b.argv.begin(), b.argv.end());
  append_peer_frame(b.link->frame_buffer(), {b.db, b.resp == protocol::RespVersion::kResp3}, argv);
  relayed_++;
  b.link->commit([this, client_id, seq](std::string_view reply, const LinkError* error) {
    auto it = blocking_links_.find(client_id);
    // Sent again elsewhere (its keys moved): this link's answer no longer counts.
    if (it == blocking_links_.end() || it->second.seq != seq) return;
    if (error != nullptr) relay_errors_++;
    ReplyDone done = std::move(it->second.done);
    // The wait is over: give the connection back (after this callback returns).
    retired_links_.push_back(std::move(it->second.link));
    blocking_links_.erase(it);
    done(error ? error_reply(error->text()) : std::string(reply));
  });
}

void Cluster::reroute_blocking() {
  std::vector<uint64_t> ids;
  for (const auto& [client_id, b] : blocking_links_) ids.push_back(client_id);
  for (uint64_t client_id : ids) {
    auto it = blocking_links_.find(client_id);
    if (it == blocking_links_.end()) continue;
    BlockingRelay& b = it->second;
    std::vector<std::string_view> argv(b.argv.begin(), b.argv.end());
    const Route route = router_.route(*b.spec, argv);
    // Its keys are here now: it waits on this node, over a link of its own like any other.
    PeerState* target = route.kind == RouteKind::kRemote  ? peers_[routing_to_full_[route.node]]
                        : route.kind == RouteKind::kLocal ? &peer(self_)
                                                          : nullptr;
    if (target == nullptr || target == b.peer) continue;
    retired_links_.push_back(std::move(b.link));
    send_blocking(client_id, b, *target);
  }
}

Cluster::TransactionLink& Cluster::transaction_link(size_t node, uint64_t client_id) {
  PeerState* peer = peers_[routing_to_full_[node]];
  std::vector<TransactionLink>& links = transaction_links_[client_id];
  for (TransactionLink& t : links) {
    if (t.node == peer) return t;
  }
  TransactionLink t{peer, nullptr, 0};
  if (!peer->idle_transaction_links.empty()) {
    t.link = std::move(peer->idle_transaction_links.back());
    peer->idle_transaction_links.pop_back();
  } else {
    t.link = make_link(*peer, transaction_link_options());
  }
  links.push_back(std::move(t));
  return links.back();
}

void Cluster::transaction_send(size_t node, uint64_t client_id,
                               std::span<const std::string_view> argv, protocol::RespVersion resp,
                               int db, ReplyDone done) {
  const size_t full = routing_to_full_[node];
  if (std::optional<LinkError> why = unavailable_error(*peers_[full])) {
    relay_errors_++;
    done(error_reply(why->text()));
    return;
  }
  TransactionLink& t = transaction_link(node, client_id);
  append_peer_frame(t.link->frame_buffer(), {db, resp == protocol::RespVersion::kResp3}, argv);
  relayed_++;
  t.link->commit([this, done = std::move(done)](std::string_view reply, const LinkError* error) {
    if (error != nullptr) relay_errors_++;
    done(error ? error_reply(error->text()) : std::string(reply));
  });
  if (t.connects == 0) t.connects = t.link->stats().connects;
}

void Cluster::transaction_exec(size_t node, uint64_t client_id, std::span<const std::string> ahead,
                               const std::vector<std::vector<std::string>>& queued,
                               protocol::RespVersion resp, int db, ReplyDone done) {
  const size_t full = routing_to_full_[node];
  auto existing = transaction_links_.find(client_id);
  const TransactionLink* watched = nullptr;
  if (existing != transaction_links_.end()) {
    for (const TransactionLink& t : existing->second) {
      if (t.node == peers_[full]) watched = &t;
    }
  }
  if (watched != nullptr && watched->link->stats().connects != watched->connects) {
    // The connection that held the WATCHes is gone: treat it as a changed key.
    transaction_end(client_id);
    std::string out;
    protocol::ReplyWriter(out, resp).null_array();
    done(out);
    return;
  }
  if (std::optional<LinkError> why = unavailable_error(*peers_[full])) {
    relay_errors_++;
    transaction_end(client_id);
    done(error_reply(why->text()));
    return;
  }
  TransactionLink& t = transaction_link(node, client_id);
  const bool resp3 = resp == protocol::RespVersion::kResp3;
  std::string& f = t.link->frame_buffer();
  static constexpr std::string_view kMulti[] = {"MULTI"};
  static constexpr std::string_view kExec[] = {"EXEC"};
  if (!ahead.empty()) {
    // A frame of the caller's that must reach the peer before the block (RINGKV.TRACK).
    const std::vector<std::string_view> argv(ahead.begin(), ahead.end());
    append_peer_frame(f, {}, argv);
    t.link->commit([](std::string_view, const LinkError*) {});
  }
  // The block's commands run at EXEC, in EXEC's database.
  append_peer_frame(f, {db, resp3}, kMulti);
  for (const auto& args : queued) {
    std::vector<std::string_view> argv(args.begin(), args.end());
    append_peer_frame(f, {db, resp3}, argv);
  }
  append_peer_frame(f, {db, resp3}, kExec);
  relayed_ += queued.size() + 2;
  // MULTI's and the QUEUED replies were already given to the client when it queued; only
  // EXEC's reply (or the first failure) goes back.
  auto failed = std::make_shared<bool>(false);
  auto fail_once = [this, failed, done](std::string_view reply) {
    if (*failed) return;
    *failed = true;
    relay_errors_++;
    done(error_reply(reply));
  };
  for (size_t i = 0; i < queued.size() + 1; ++i) {
    t.link->commit([fail_once](std::string_view, const LinkError* error) {
      if (error != nullptr) fail_once(error->text());
    });
  }
  PeerState* peer = peers_[full];
  t.link->commit([this, client_id, peer, failed, fail_once, done](std::string_view reply,
                                                                  const LinkError* error) {
    if (error != nullptr) {
      fail_once(error->text());
    } else if (!*failed) {
      done(reply);
    }
    // EXEC dropped the WATCHes there: the link serves the next transaction, unless it failed.
    auto it = transaction_links_.find(client_id);
    if (it == transaction_links_.end()) return;
    for (auto l = it->second.begin(); l != it->second.end(); ++l) {
      if (l->node != peer) continue;
      give_back_transaction_link(*peer, std::move(l->link), !*failed);
      it->second.erase(l);
      break;
    }
    if (it->second.empty()) transaction_links_.erase(it);
  });
}

void Cluster::wait_remote(const std::string& address, uint64_t client_id, const std::string& key,
                          int64_t numreplicas, int64_t timeout_ms, ReplyDone done) {
  PeerState& p = peer(address);
  if (std::optional<LinkError> why = unavailable_error(p)) {
    done(error_reply(why->text()));
    return;
  }
  PeerLink& link = p.pool.link_for(client_id);
  const std::string_view ask[] = {kWaitFrame, "TICKET", key};
  append_peer_frame(link.frame_buffer(), {}, ask);
  PeerState* ps = &p;
  link.commit([this, ps, client_id, key, numreplicas, timeout_ms, done = std::move(done)](
                  std::string_view reply, const LinkError* error) {
    if (error != nullptr) return done(error_reply(error->text()));
    if (reply.empty() || reply[0] != '+') return done(reply);
    // The wait itself may take long: it must not hold up the replies of the shared link.
    std::vector<std::string> args{std::string(kWaitFrame), "FOR", std::to_string(numreplicas),
                                  std::to_string(timeout_ms)};
    for (std::string_view w : common::split_words(line_text(reply))) args.emplace_back(w);
    std::string frame;
    protocol::append_request_header(frame, args.size());
    for (const auto& a : args) protocol::append_request_bulk(frame, a);
    const auto t = static_cast<uint64_t>(options_.connect_timeout_ms);
    // One link per primary and key waited for: a write's keys of one primary may have
    // different replicas, each set waited for on its own.
    const auto id = std::make_pair(client_id, ps->address + ' ' + key);
    auto& slot = wait_links_[id];
    if (slot) retired_links_.push_back(std::move(slot));
    slot = make_link(*ps, LinkOptions{t, 0, t});
    PeerLink* l = slot.get();
    l->send(frame, [this, id, l, done](std::string_view r, const LinkError* e) {
      auto it = wait_links_.find(id);
      if (it != wait_links_.end() && it->second.get() == l) {
        retired_links_.push_back(std::move(it->second));
        wait_links_.erase(it);
      }
      done(e != nullptr ? error_reply(e->text()) : std::string(r));
    });
    l->flush();
  });
}

void Cluster::transaction_end(uint64_t client_id) {
  auto it = transaction_links_.find(client_id);
  if (it == transaction_links_.end()) return;
  for (TransactionLink& t : it->second) retired_links_.push_back(std::move(t.link));
  transaction_links_.erase(it);
}

void Cluster::client_closed(uint64_t client_id) {
  challenges_.erase(client_id);
  transaction_end(client_id);
  for (auto it = wait_links_.lower_bound({client_id, std::string()});
       it != wait_links_.end() && it->first.first == client_id;) {
    retired_links_.push_back(std::move(it->second));
    it = wait_links_.erase(it);
  }
  auto it = blocking_links_.find(client_id);
  if (it == blocking_links_.end()) return;
  retired_links_.push_back(std::move(it->second.link));
  blocking_links_.erase(it);
}

void Cluster::execute_scan(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                           uint64_t client_id, protocol::RespVersion resp, int db, ReplyDone done) {
  uint64_t cursor = 0;
  if (!common::parse_scan_cursor(argv[1], cursor)) {
    // Let the command report the bad cursor exactly as it would alone.
    std::string out;
    protocol::ReplyWriter w(out, resp);
    local_(spec, argv, db, w);
    done(out);
    return;
  }
  const size_t nodes = routing_.size();
  const uint16_t tag = scan_tag(routing_.fingerprint());
  const ScanStep step = scan_step(cursor, nodes, tag);
  std::vector<std::string> args(argv.begin(), argv.end());
  args[1] = std::to_string(step.node_cursor);
  std::vector<std::string_view> views(args.begin(), args.end());
  fanout_++;
  send_to(step.node, spec, views, nullptr, 1, client_id, resp, db,
          [this, done = std::move(done), node = step.node, nodes, tag, resp](
              std::string_view reply, const LinkError* error) {
            if (error != nullptr) relay_errors_++;
            done(error ? error_reply(error->text())
                       : cluster_scan_reply(reply, node, nodes, tag, resp));
          });
}

}  // namespace ringkv::cluster
