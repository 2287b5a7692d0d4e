// Cluster: the text of CLUSTER INFO, CLUSTER NODES and INFO cluster — each peer's link and
// health state, the ring's parameters and the relay counters.
#include <uv.h>

#include <cstdio>
#include <string>

#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"

namespace ringkv::cluster {

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
    if (p->pool.state() == "connected") linked++;
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
  line("cluster_ring_version", std::to_string(ring_version_));
  line("cluster_ring_fingerprint", fingerprint_hex(view_fingerprint()));
  const CopyProgress progress = host_ ? host_->copy_progress() : CopyProgress{};
  line("cluster_migration_state", migrating(progress) ? "migrating" : "idle");
  line("cluster_keys_to_move", std::to_string(progress.to_move));
  line("cluster_keys_moved", std::to_string(progress.moved));
  line("cluster_restores_resumed", std::to_string(progress.resumed));
  line("cluster_restores_full", std::to_string(progress.resumed_full));
  line("cluster_replication_factor", std::to_string(options_.replication_factor));
  line("cluster_replica_acks", std::to_string(options_.replica_acks));
  line("cluster_failed", std::to_string(failed_.size()));
  line("cluster_failed_members", members_list_text(failed_));
  line("cluster_lease", !failover_enabled() ? "none" : lease_valid() ? "valid" : "lost");
  line("cluster_votes", std::to_string(votes_total()));
  line("cluster_votes_needed", std::to_string(votes_needed()));
  line("cluster_tie_breaker", tie_breaker_counts() ? options_.tie_breaker : "-");
  line("cluster_failover", failover_coverage());
  if (pending_) {
    line("cluster_pending_version", std::to_string(pending_version_));
    line("cluster_change_phase", phase_ == Phase::kPrepared ? "prepared"
                                 : phase_ == Phase::kPaused ? "paused"
                                                            : "switching");
    line("cluster_relays_in_flight", std::to_string(relays_in_flight()));
    line("cluster_copy", std::string(progress.failed   ? "failed"
                                     : progress.copied ? "copied"
                                                       : "copying") +
                             (progress.flushed ? ",flushed" : ""));
  }
  if (!last_change_.empty()) line("cluster_last_change", printable(last_change_, 300));
  return out;
}

std::string Cluster::nodes_text(size_t self_keys) const {
  const std::vector<ReplicaStatus> replicas = replication_->replicas();
  std::string out;
  for (size_t i = 0; i < ring_.size(); ++i) {
    const auto& m = ring_.nodes()[i];
    out += m.address;
    // A change in progress: members it removes are leaving (keys moving away from them).
    const bool leaving = pending_ && !pending_->contains(m.address);
    if (i == self_full_) {
      out += " self up connected";
    } else {
      const PeerState& p = *peers_[i];
      out += p.up ? " peer up " : " peer down ";
      out += p.pool.state();
      if (ring_mismatch(p)) out += " ring-mismatch";
      if (!p.refused_by_peer.empty()) {
        out += " refused-by-peer:" + printable(p.refused_by_peer, 200, '_');
      }
      if (!p.refused_here.empty()) out += " refused-here:" + printable(p.refused_here, 200, '_');
    }
    if (leaving) out += " leaving";
    if (is_failed(m.address)) out += " failed";
    // This node's stream to it, when it keeps copies of this node's keys.
    for (const ReplicaStatus& r : replicas) {
      if (r.address == m.address) {
        out += " replica=" + r.state + ",behind=" + std::to_string(r.offset - r.acked) +
               ",lag-ms=" + std::to_string(r.lag_ms);
      }
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
  if (pending_) {
    // Members the change adds: joining until it commits.
    for (const auto& m : pending_->nodes()) {
      if (ring_.contains(m.address)) continue;
      out += m.address + (m.address == self_ ? " self" : " peer") +
             " joining vnodes=" + std::to_string(ring_.replicas() * m.weight) +
             " weight=" + std::to_string(m.weight) + "\n";
    }
  }
  return out;
}

std::string Cluster::info_section() const {
  // Redis Cluster's protocol (slots, MOVED) is not spoken here: cluster-aware tools and
  // clients (redis-cli --cluster, redis-py's RedisCluster) must treat each node as the
  // standalone server it looks like to a client, which any node is (it answers every key).
  std::string out = "cluster_enabled:0\r\n";
  out += "cluster_members:" + std::to_string(ring_.size()) + "\r\n";
  out += "cluster_ring_version:" + std::to_string(ring_version_) + "\r\n";
  const CopyProgress progress = host_ ? host_->copy_progress() : CopyProgress{};
  out += std::string("cluster_migration_state:") + (migrating(progress) ? "migrating" : "idle") +
         "\r\n";
  out += "cluster_keys_to_move:" + std::to_string(progress.to_move) + "\r\n";
  out += "cluster_keys_moved:" + std::to_string(progress.moved) + "\r\n";
  out += "cluster_restores_resumed:" + std::to_string(progress.resumed) + "\r\n";
  out += "cluster_restores_full:" + std::to_string(progress.resumed_full) + "\r\n";
  out += "relayed_requests:" + std::to_string(relayed_) + "\r\n";
  out += "relay_errors:" + std::to_string(relay_errors_) + "\r\n";
  out += "split_requests:" + std::to_string(split_) + "\r\n";
  out += "fanout_requests:" + std::to_string(fanout_) + "\r\n";
  // One line per peer in the shape of Redis's "slave0:ip=...,port=..." lines, so INFO parsers
  // (redis-py's info(), exporters) read it as a map.
  size_t n = 0;
  for (const auto& p : peers_) {
    if (!p) continue;
    const PoolTotals t = p->pool.totals();
    char per_reply[32];
    std::snprintf(
        per_reply, sizeof per_reply, "%.2f",
        t.replies == 0 ? 0.0 : static_cast<double>(t.reply_usec) / static_cast<double>(t.replies));
    out += "peer" + std::to_string(n++) + ":addr=" + p->address + "," + health_fields(*p) +
           ",requests=" + std::to_string(t.requests) + ",errors=" + std::to_string(t.errors) +
           ",in_flight=" + std::to_string(t.in_flight) + ",replies=" + std::to_string(t.replies) +
           ",usec_per_reply=" + per_reply + "\r\n";
  }
  return out;
}

std::string Cluster::failover_coverage() const {
  if (!failover_enabled()) return "off";
  // Which live member could be lost with the others still a majority (able to fail it over).
  const size_t live = votes_left(failed_);
  size_t coverable = 0;
  size_t members = 0;
  for (const auto& m : ring_.nodes()) {
    if (is_failed(m.address)) continue;
    members++;
    if (live - votes_of(m.address) >= votes_needed()) coverable++;
  }
  if (members > 0 && coverable == members) return "every-member";
  if (coverable == 0) return "none";
  return "not-the-tie-breaker";
}

}  // namespace ringkv::cluster
