// Cluster: relay, split/merge and fan-out of commands over the ring.
#include "cluster/cluster.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <cstdio>

#include "cluster/cluster_internal.h"
#include "common/numbers.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// How often link timeouts are checked.
constexpr uint64_t kTimeoutCheckMs = 50;

// A request frame; relayed for a RESP3 client, it carries the RINGKV.RESP3 prefix.
void append_command(std::string& f, std::span<const std::string_view> argv, bool resp3) {
  protocol::append_request_header(f, argv.size() + (resp3 ? 1 : 0));
  if (resp3) protocol::append_request_bulk(f, "RINGKV.RESP3");
  for (auto a : argv) protocol::append_request_bulk(f, a);
}

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

Cluster::Cluster(uv_loop_t* loop, const conf::ClusterOptions& options, LocalExecutor local)
    : loop_(loop),
      options_(options),
      local_(std::move(local)),
      self_(options.self),
      ring_(build_ring(options, self_)),
      routing_(ring_),
      router_(routing_, routing_.index_of(self_)),
      self_full_(ring_.index_of(self_)) {
  peers_.resize(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i == self_full_) continue;
    peers_[i] = std::make_unique<PeerState>();
    peers_[i]->address = ring_.nodes()[i].address;
  }
  rebuild_routing();
}

void Cluster::rebuild_routing() {
  std::vector<hashring::Member> live;
  for (size_t i = 0; i < ring_.size(); ++i) {
    // A peer that refuses our links is misconfigured, not down: its keys fail rather than move.
    if (i == self_full_ || peers_[i]->up || !peers_[i]->refused_by_peer.empty() ||
        options_.on_peer_down != conf::kPeerDownEject) {
      live.push_back(ring_.nodes()[i]);
    }
  }
  routing_.set_members(live);
  routing_to_full_.clear();
  for (const auto& m : routing_.nodes()) routing_to_full_.push_back(ring_.index_of(m.address));
  router_ = Router(routing_, routing_.index_of(self_));
}

Cluster::~Cluster() = default;

void Cluster::start() {
  uv_check_init(loop_, &flush_check_);
  flush_check_.data = this;
  // Frames queued while handling this iteration's client input go out in one write per link.
  uv_check_start(&flush_check_, [](uv_check_t* h) {
    auto* self = static_cast<Cluster*>(h->data);
    for (auto& p : self->peers_) {
      if (!p) continue;
      for (auto& l : p->links) {
        if (l && l->needs_flush()) l->flush();
      }
      if (p->health && p->health->needs_flush()) p->health->flush();
    }
    for (auto& [id, slot] : self->blocking_links_) {
      if (slot.second->needs_flush()) slot.second->flush();
    }
    for (auto& [id, t] : self->transaction_links_) {
      if (t.link->needs_flush()) t.link->flush();
    }
    // Closing a retired link fails what it still carried (a client that went away).
    for (auto& l : self->retired_links_) l->close("client closed");
    self->retired_links_.clear();
  });
  uv_timer_init(loop_, &timeout_timer_);
  timeout_timer_.data = this;
  uv_timer_start(
      &timeout_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Cluster*>(t->data);
        uint64_t now = uv_now(self->loop_);
        for (auto& p : self->peers_) {
          if (!p) continue;
          for (auto& l : p->links) {
            if (l) l->check_timeouts(now);
          }
          if (p->health) p->health->check_timeouts(now);
        }
      },
      kTimeoutCheckMs, kTimeoutCheckMs);
  uv_timer_init(loop_, &health_timer_);
  health_timer_.data = this;
  uint64_t interval = static_cast<uint64_t>(options_.health_interval_ms);
  uv_timer_start(
      &health_timer_, [](uv_timer_t* t) { static_cast<Cluster*>(t->data)->check_health(); },
      interval, interval);
  started_ = true;
}

void Cluster::check_health() {
  for (size_t i = 0; i < peers_.size(); ++i) {
    if (!peers_[i]) continue;
    PeerState& peer = *peers_[i];
    if (peer.ping_in_flight) {
      // Unanswered for a whole interval: that ping failed (its late answer is ignored).
      peer.ping_in_flight = false;
      peer.ping_seq++;
      ping_failed(peer, "timeout");
    }
    if (!peer.health) {
      // A down peer is probed again at least once an interval.
      uint64_t interval = static_cast<uint64_t>(options_.health_interval_ms);
      peer.health = make_link(
          peer, LinkOptions{std::min<uint64_t>(interval,
                                               static_cast<uint64_t>(options_.connect_timeout_ms)),
                            interval, interval});
    }
    peer.ping_in_flight = true;
    const uint64_t seq = ++peer.ping_seq;
    peer.health->send("*1\r\n$4\r\nPING\r\n", [this, i, seq](bool ok, std::string_view reply) {
      PeerState& p = *peers_[i];
      if (p.ping_seq != seq) return;
      p.ping_in_flight = false;
      if (ok && reply == "+PONG\r\n") {
        ping_succeeded(p);
      } else {
        // reply is "ERR peer ... unavailable: <reason>" (or an unexpected reply)
        size_t colon = reply.rfind(": ");
        std::string_view reason = ok || colon == std::string_view::npos
                                      ? std::string_view("unexpected reply to PING")
                                      : reply.substr(colon + 2);
        ping_failed(p, reason);
      }
    });
  }
}

void Cluster::ping_succeeded(PeerState& peer) {
  peer.failures = 0;
  peer.last_seen_ms = uv_now(loop_);
  if (peer.up) return;
  peer.up = true;
  spdlog::warn("peer {} is up again", peer.address);
  // Relay links waiting out a reconnect delay from while it was down may connect right away.
  for (auto& l : peer.links) {
    if (l) l->reset_backoff();
  }
  if (options_.on_peer_down == conf::kPeerDownEject) {
    rebuild_routing();
    spdlog::warn("peer {} is back on the ring; its keys go to it again", peer.address);
  }
}

void Cluster::ping_failed(PeerState& peer, std::string_view reason) {
  peer.failures++;
  peer.last_failure = reason;
  if (!peer.up || peer.failures < options_.failure_limit) return;
  peer.up = false;
  peer.times_down++;
  spdlog::warn("peer {} is down after {} failed pings ({})", peer.address, peer.failures, reason);
  // Blocking requests wait without a timeout: a peer known down answers them now.
  std::vector<PeerLink*> waiting;
  for (auto& [id, slot] : blocking_links_) {
    if (peers_[slot.first].get() == &peer) waiting.push_back(slot.second.get());
  }
  for (PeerLink* link : waiting) link->close("down");
  if (options_.on_peer_down == conf::kPeerDownEject) {
    rebuild_routing();
    spdlog::warn("peer {} ejected from the ring; its keys go to the next owners", peer.address);
  }
}

void Cluster::stop() {
  if (!started_) return;
  started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_check_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&timeout_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&health_timer_), nullptr);
  for (auto& p : peers_) {
    if (!p) continue;
    if (p->health) p->health->close("node shutting down");
    p->health.reset();
    // Requests still waiting get an answer, so their clients can be flushed and closed.
    for (auto& l : p->links) {
      if (l) l->close("node shutting down");
    }
    p->links.clear();
  }
}

PeerLink& Cluster::link_for(size_t node, uint64_t client_id) {
  PeerState& peer = *peers_[node];
  size_t pool = static_cast<size_t>(std::max<int64_t>(1, options_.pool_size));
  if (peer.links.empty()) peer.links.resize(pool);
  auto& link = peer.links[client_id % pool];
  if (!link) {
    link = make_link(peer, LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms),
                                       static_cast<uint64_t>(options_.request_timeout_ms)});
  }
  return *link;
}

bool Cluster::ring_mismatch(const PeerState& peer) {
  return peer.refused_by_peer == kRingMismatch || peer.refused_here == kRingMismatch;
}

std::string Cluster::unavailable_error(const PeerState& peer) const {
  std::string reason;
  if (!peer.refused_by_peer.empty()) {
    reason = "link refused (" + peer.refused_by_peer + ")";
  } else if (!peer.up) {
    reason = "down";
  } else {
    return {};
  }
  return "ERR peer " + peer.address + " unavailable: " + reason;
}

void Cluster::send_to(size_t node, std::span<const std::string_view> argv,
                      const std::vector<size_t>* groups, size_t step, uint64_t client_id,
                      protocol::RespVersion resp, PeerLink::ReplyCallback cb) {
  if (node == router_.self()) {
    std::string out;
    protocol::ReplyWriter w(out, resp);
    if (groups == nullptr) {
      local_(argv, w);
    } else {
      std::vector<std::string_view> sub;
      sub.reserve(1 + groups->size() * step);
      sub.push_back(argv[0]);
      for (size_t g : *groups) {
        for (size_t k = 0; k < step; ++k) sub.push_back(argv[g + k]);
      }
      local_(sub, w);
    }
    cb(true, out);
    return;
  }
  const size_t full = routing_to_full_[node];
  if (std::string why = unavailable_error(*peers_[full]); !why.empty()) {
    // Known down (fail mode) or refusing: answer at once instead of waiting for a timeout.
    relay_errors_++;
    cb(false, why);
    return;
  }
  PeerLink& link = link_for(full, client_id);
  std::string& f = link.frame_buffer();
  bool resp3 = resp == protocol::RespVersion::kResp3;
  size_t n = groups == nullptr ? argv.size() : 1 + groups->size() * step;
  if (groups == nullptr) {
    append_command(f, argv, resp3);
  } else {
    protocol::append_request_header(f, n + (resp3 ? 1 : 0));
    if (resp3) protocol::append_request_bulk(f, "RINGKV.RESP3");
    protocol::append_request_bulk(f, argv[0]);
    for (size_t g : *groups) {
      for (size_t k = 0; k < step; ++k) protocol::append_request_bulk(f, argv[g + k]);
    }
  }
  relayed_++;
  link.commit([this, cb = std::move(cb)](bool ok, std::string_view reply) {
    if (!ok) relay_errors_++;
    cb(ok, reply);
  });
}

void Cluster::execute(const Route& route, const engine::CommandSpec& spec,
                      std::span<const std::string_view> argv, uint64_t client_id,
                      protocol::RespVersion resp, ReplyDone done) {
  if (route.kind == RouteKind::kRemote && (spec.flags & engine::kBlocking)) {
    execute_blocking(route.node, argv, client_id, resp, std::move(done));
    return;
  }
  if (route.kind == RouteKind::kRemote) {
    send_to(route.node, argv, nullptr, 1, client_id, resp,
            [done = std::move(done)](bool ok, std::string_view reply) {
              if (ok) {
                done(reply);
              } else {
                done(error_reply(reply));
              }
            });
    return;
  }
  if (route.kind == RouteKind::kFanOut && spec.name == "scan") {
    execute_scan(argv, client_id, resp, std::move(done));
    return;
  }

  const bool write = (spec.flags & engine::kWrite) != 0;
  const ReplyMerge::Kind kind = spec.merge;
  if (route.kind == RouteKind::kSplit) {
    split_++;
    const size_t first = static_cast<size_t>(spec.first_key);
    auto m =
        std::make_shared<ReplyMerge>(kind, write, resp, route.fragments.size(), std::move(done));
    for (size_t i = 0; i < route.fragments.size(); ++i) {
      std::vector<size_t> positions;
      for (size_t g : route.fragments[i].groups) positions.push_back((g - first) / route.key_step);
      m->set_positions(i, std::move(positions));
    }
    for (size_t i = 0; i < route.fragments.size(); ++i) {
      send_to(route.fragments[i].node, argv, &route.fragments[i].groups, route.key_step, client_id,
              resp, [m, i](bool ok, std::string_view reply) { m->part_done(i, ok, reply); });
    }
    return;
  }

  // Keyspace-wide: every node routed to, self included.
  fanout_++;
  auto m = std::make_shared<ReplyMerge>(kind, write, resp, routing_.size(), std::move(done));
  for (size_t node = 0; node < routing_.size(); ++node) {
    send_to(node, argv, nullptr, 1, client_id, resp,
            [m, node](bool ok, std::string_view reply) { m->part_done(node, ok, reply); });
  }
}

void Cluster::execute_blocking(size_t node, std::span<const std::string_view> argv,
                               uint64_t client_id, protocol::RespVersion resp, ReplyDone done) {
  const size_t full = routing_to_full_[node];
  PeerState& peer = *peers_[full];
  if (std::string why = unavailable_error(peer); !why.empty()) {
    relay_errors_++;
    done(error_reply(why));
    return;
  }
  // No request timeout: the command's own timeout (possibly forever) runs on the peer, and a
  // dead or hung peer is caught by the link closing or by the health checks.
  auto& slot = blocking_links_[client_id];
  if (!slot.second || slot.first != full) {
    if (slot.second) retired_links_.push_back(std::move(slot.second));
    slot = {full, make_link(peer, LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms), 0,
                                              static_cast<uint64_t>(options_.connect_timeout_ms)})};
  }
  PeerLink& link = *slot.second;
  append_command(link.frame_buffer(), argv, resp == protocol::RespVersion::kResp3);
  relayed_++;
  link.commit([this, client_id, done = std::move(done)](bool ok, std::string_view reply) {
    if (!ok) relay_errors_++;
    done(ok ? std::string(reply) : error_reply(reply));
    // The wait is over: give the connection back (after this callback returns).
    auto it = blocking_links_.find(client_id);
    if (it != blocking_links_.end()) {
      retired_links_.push_back(std::move(it->second.second));
      blocking_links_.erase(it);
    }
  });
}

Cluster::TransactionLink& Cluster::transaction_link(size_t node, uint64_t client_id) {
  const size_t full = routing_to_full_[node];
  auto& t = transaction_links_[client_id];
  if (!t.link || t.node != full) {
    if (t.link) retired_links_.push_back(std::move(t.link));
    t.node = full;
    t.link =
        make_link(*peers_[full], LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms),
                                             static_cast<uint64_t>(options_.request_timeout_ms),
                                             static_cast<uint64_t>(options_.connect_timeout_ms)});
    t.connects = 0;
  }
  return t;
}

void Cluster::transaction_send(size_t node, uint64_t client_id,
                               std::span<const std::string_view> argv, protocol::RespVersion resp,
                               ReplyDone done) {
  const size_t full = routing_to_full_[node];
  if (std::string why = unavailable_error(*peers_[full]); !why.empty()) {
    relay_errors_++;
    done(error_reply(why));
    return;
  }
  TransactionLink& t = transaction_link(node, client_id);
  append_command(t.link->frame_buffer(), argv, resp == protocol::RespVersion::kResp3);
  relayed_++;
  t.link->commit([this, done = std::move(done)](bool ok, std::string_view reply) {
    if (!ok) relay_errors_++;
    done(ok ? std::string(reply) : error_reply(reply));
  });
  if (t.connects == 0) t.connects = t.link->stats().connects;
}

void Cluster::transaction_exec(size_t node, uint64_t client_id,
                               const std::vector<std::vector<std::string>>& queued,
                               protocol::RespVersion resp, ReplyDone done) {
  const size_t full = routing_to_full_[node];
  auto existing = transaction_links_.find(client_id);
  const bool watched = existing != transaction_links_.end() && existing->second.node == full;
  if (watched && existing->second.link->stats().connects != existing->second.connects) {
    // The connection that held the WATCHes is gone: treat it as a changed key.
    transaction_end(client_id);
    std::string out;
    protocol::ReplyWriter(out, resp).null_array();
    done(out);
    return;
  }
  if (std::string why = unavailable_error(*peers_[full]); !why.empty()) {
    relay_errors_++;
    transaction_end(client_id);
    done(error_reply(why));
    return;
  }
  TransactionLink& t = transaction_link(node, client_id);
  const bool resp3 = resp == protocol::RespVersion::kResp3;
  std::string& f = t.link->frame_buffer();
  static constexpr std::string_view kMulti[] = {"MULTI"};
  static constexpr std::string_view kExec[] = {"EXEC"};
  append_command(f, kMulti, resp3);
  for (const auto& args : queued) {
    std::vector<std::string_view> argv(args.begin(), args.end());
    append_command(f, argv, resp3);
  }
  append_command(f, kExec, resp3);
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
    t.link->commit([fail_once](bool ok, std::string_view reply) {
      if (!ok) fail_once(reply);
    });
  }
  t.link->commit([this, client_id, failed, fail_once, done](bool ok, std::string_view reply) {
    if (!ok) {
      fail_once(reply);
    } else if (!*failed) {
      done(reply);
    }
    transaction_end(client_id);
  });
}

void Cluster::transaction_end(uint64_t client_id) {
  auto it = transaction_links_.find(client_id);
  if (it == transaction_links_.end()) return;
  retired_links_.push_back(std::move(it->second.link));
  transaction_links_.erase(it);
}

void Cluster::client_closed(uint64_t client_id) {
  challenges_.erase(client_id);
  transaction_end(client_id);
  auto it = blocking_links_.find(client_id);
  if (it == blocking_links_.end()) return;
  retired_links_.push_back(std::move(it->second.second));
  blocking_links_.erase(it);
}

void Cluster::execute_scan(std::span<const std::string_view> argv, uint64_t client_id,
                           protocol::RespVersion resp, ReplyDone done) {
  uint64_t cursor = 0;
  if (!common::parse_scan_cursor(argv[1], cursor)) {
    // Let the command report the bad cursor exactly as it would alone.
    std::string out;
    protocol::ReplyWriter w(out, resp);
    local_(argv, w);
    done(out);
    return;
  }
  const size_t nodes = routing_.size();
  const ScanStep step = scan_step(cursor, nodes);
  std::vector<std::string> args(argv.begin(), argv.end());
  args[1] = std::to_string(step.node_cursor);
  std::vector<std::string_view> views(args.begin(), args.end());
  fanout_++;
  send_to(step.node, views, nullptr, 1, client_id, resp,
          [done = std::move(done), node = step.node, nodes, resp](bool ok, std::string_view reply) {
            done(ok ? cluster_scan_reply(reply, node, nodes, resp) : error_reply(reply));
          });
}

std::string Cluster::link_state(const PeerState& p) const {
  std::string state = "idle";
  for (const auto& l : p.links) {
    if (!l) continue;
    if (l->state() == PeerLink::State::kReady) return "connected";
    if (l->state() == PeerLink::State::kBackoff) state = "broken:" + l->last_error();
    const bool opening =
        l->state() == PeerLink::State::kConnecting || l->state() == PeerLink::State::kHandshaking;
    if (opening && state == "idle") state = "connecting";
  }
  for (char& c : state) {
    if (c == ' ') c = '_';
  }
  return state;
}

std::string Cluster::health_fields(const PeerState& p) const {
  std::string out = "state=";
  out += p.up ? "up" : "down";
  out += ",last-seen-ms=";
  out += p.last_seen_ms == 0 ? std::string("-1") : std::to_string(uv_now(loop_) - p.last_seen_ms);
  out += ",failures=" + std::to_string(p.failures);
  out += ",times-down=" + std::to_string(p.times_down);
  if (options_.on_peer_down == conf::kPeerDownEject) {
    out += ",ejected=";
    out += p.up ? "no" : "yes";
  }
  return out;
}

std::string Cluster::info_text() const {
  size_t linked = 0, mismatched = 0, refused = 0, down = 0;
  for (const auto& p : peers_) {
    if (!p) continue;
    if (link_state(*p) == "connected") linked++;
    if (ring_mismatch(*p)) mismatched++;
    if (!p->refused_by_peer.empty() || !p->refused_here.empty()) refused++;
    if (!p->up) down++;
  }
  std::string out;
  auto line = [&](std::string_view k, const std::string& v) {
    out.append(k);
    out += ':';
    out += v;
    out += "\r\n";
  };
  line("cluster_state", refused ? "misconfigured" : down ? "degraded" : "ok");
  line("cluster_members", std::to_string(ring_.size()));
  line("cluster_self", self_);
  line("cluster_peers_up", std::to_string(peers_.size() - 1 - down));
  line("cluster_peers_down", std::to_string(down));
  line("cluster_peers_linked", std::to_string(linked));
  line("cluster_ring_mismatches", std::to_string(mismatched));
  line("cluster_links_refused", std::to_string(refused));
  line("cluster_secret", options_.secret.empty() ? "no" : "yes");
  line("cluster_on_peer_down", options_.on_peer_down);
  line("cluster_routing_members", std::to_string(routing_.size()));
  line("cluster_replicas", std::to_string(ring_.replicas()));
  line("cluster_hash", ring_.scheme().name);
  line("cluster_ring_version", std::to_string(routing_.version()));
  line("cluster_ring_fingerprint", fingerprint_hex(ring_.fingerprint()));
  return out;
}

std::string Cluster::nodes_text(size_t self_keys) const {
  std::string out;
  for (size_t i = 0; i < ring_.size(); ++i) {
    const auto& m = ring_.nodes()[i];
    out += m.address;
    if (i == self_full_) {
      out += " self up connected";
    } else {
      const PeerState& p = *peers_[i];
      out += p.up ? " peer up " : " peer down ";
      out += link_state(p);
      if (ring_mismatch(p)) out += " ring-mismatch";
      if (!p.refused_by_peer.empty()) {
        out += " refused-by-peer:" + printable(p.refused_by_peer, 200, '_');
      }
      if (!p.refused_here.empty()) out += " refused-here:" + printable(p.refused_here, 200, '_');
    }
    out += " vnodes=" + std::to_string(ring_.replicas() * m.weight);
    out += " weight=" + std::to_string(m.weight);
    if (i == self_full_) {
      out += " keys=" + std::to_string(self_keys);
    } else {
      out += " " + health_fields(*peers_[i]);
    }
    out += "\n";
  }
  return out;
}

std::string Cluster::info_section() const {
  std::string out = "cluster_enabled:1\r\n";
  out += "cluster_members:" + std::to_string(ring_.size()) + "\r\n";
  out += "relayed_requests:" + std::to_string(relayed_) + "\r\n";
  out += "relay_errors:" + std::to_string(relay_errors_) + "\r\n";
  out += "split_requests:" + std::to_string(split_) + "\r\n";
  out += "fanout_requests:" + std::to_string(fanout_) + "\r\n";
  for (const auto& p : peers_) {
    if (!p) continue;
    uint64_t req = 0, err = 0, inflight = 0;
    for (const auto& l : p->links) {
      if (!l) continue;
      req += l->stats().requests;
      err += l->stats().errors;
      inflight += l->in_flight();
    }
    out += "peer:" + p->address + "," + health_fields(*p) + ",requests=" + std::to_string(req) +
           ",errors=" + std::to_string(err) + ",in_flight=" + std::to_string(inflight) + "\r\n";
  }
  return out;
}

}  // namespace ringkv::cluster
