// Cluster: failover — members failed over and restored by ring changes a majority decides, the
// lease that keeps a node cut off from the majority from serving its keys, and catching up with
// a ring that changed while this node was away. See Cluster::failover_enabled().
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"
#include "cluster/ring_change_state.h"
#include "common/numbers.h"

namespace ringkv::cluster {

namespace {

uint64_t fnv1a(std::string_view word) {
  uint64_t h = 1469598103934665603ull;
  for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

uint64_t fold(uint64_t fp, uint64_t h) { return (fp ^ h) * 1099511628211ull; }

}  // namespace

uint64_t Cluster::factor_salt(int64_t replication_factor) {
  // Members that would keep another number of copies must not link, or one sweeps as foreign
  // the copies another hands it. Nothing with no replicas: fingerprints stay as they were.
  if (replication_factor <= 1) return 0;
  return fnv1a("replication-factor " + std::to_string(replication_factor));
}

uint64_t Cluster::view_fingerprint(const hashring::HashRing& ring,
                                   const std::vector<std::string>& failed) const {
  // FNV-1a over the failed addresses, folded into the ring's: equal to the ring's own
  // fingerprint while none is failed (rings persisted before failover existed still match).
  uint64_t fp = ring.fingerprint();
  for (const std::string& a : failed) fp = fold(fp, fnv1a(a));
  return factor_salt_ == 0 ? fp : fold(fp, factor_salt_);
}

uint64_t Cluster::change_target(std::span<const hashring::Member> members,
                                std::vector<std::string> failed) const {
  hashring::HashRing ring(ring_.scheme(), ring_.replicas());
  ring.set_members(std::vector<hashring::Member>(members.begin(), members.end()));
  std::sort(failed.begin(), failed.end());
  return view_fingerprint(ring, failed);
}

const std::string& Cluster::coordinated_target(Coordination& c) const {
  if (c.target.empty()) c.target = fingerprint_hex(change_target(c.members, c.failed));
  return c.target;
}

hashring::HashRing Cluster::live_ring(std::span<const hashring::Member> members,
                                      const std::vector<std::string>& failed) const {
  hashring::HashRing ring(ring_.scheme(), ring_.replicas());
  std::vector<hashring::Member> live;
  for (const auto& m : members) {
    if (!list_contains(failed, m.address)) live.push_back(m);
  }
  ring.set_members(live);
  return ring;
}

hashring::HashRing Cluster::kept_keys_ring() const {
  if (!is_failed(self_)) return routing_;
  std::vector<std::string> others = failed_;
  std::erase(others, self_);
  return live_ring(ring_.nodes(), others);
}

bool Cluster::lease_valid() const {
  if (!failover_enabled() || !started_) return true;
  return restart_check_ == RestartCheck::kNone && uv_now(loop_) < lease_until_;
}

bool Cluster::lease_pending() const {
  if (lease_valid()) return false;
  if (restart_check_ != RestartCheck::kNone) return true;
  return lease_lost_since_ != 0 && uv_now(loop_) - lease_lost_since_ < lease_ms_;
}

void Cluster::check_after_restart() {
  if (!failover_enabled() || options_.replication_factor < 2 || ring_.size() < 2 ||
      is_failed(self_)) {
    return;
  }
  restart_check_ = RestartCheck::kAsking;
  replication_->hold_streams(true);
}

void Cluster::end_restart_check(std::string_view why) {
  spdlog::warn("after the restart: {}", why);
  restart_check_ = RestartCheck::kNone;
  seen_answers_.clear();
  seen_asked_.clear();
  replication_->hold_streams(false);
  update_lease();
  if (host_) host_->release_held();
}

void Cluster::drive_restart_check() {
  if (restart_check_ == RestartCheck::kNone || !started_) return;
  const uint64_t now = uv_now(loop_);
  if (restart_check_since_ == 0) restart_check_since_ = now;
  if (is_failed(self_))
    return end_restart_check("failed over; it is restored once the others copy it its keys");
  // Long enough for a failover and its lease wait, and then some.
  const uint64_t give_up_ms = std::max<uint64_t>(5000, 4 * lease_ms_);
  if (restart_check_ == RestartCheck::kAsking && now - restart_check_since_ > give_up_ms) {
    return end_restart_check(
        "no member answered whether it held copies of this node's keys in time; "
        "serving the keys it holds");
  }
  if (restart_check_ == RestartCheck::kReturning && now - restart_check_since_ > give_up_ms) {
    // A member held copies of its keys: they may be newer than these (writes acknowledged after
    // the state this node restarted from). Serving these would answer older values and copy them
    // over the replicas' newer ones, so it waits, however long the others take (a ring change in
    // progress refuses to start its failover).
    spdlog::warn("after the restart: still waiting to be failed over and restored");
    restart_check_since_ = now;
  }
  if (restart_check_ == RestartCheck::kAsking) {
    size_t live_peers = 0;
    for (size_t i = 0; i < ring_.size(); ++i) {
      if (i == self_full_ || peers_[i] == nullptr || is_failed(peers_[i]->address)) continue;
      live_peers++;
      if (seen_answers_.count(peers_[i]->address) != 0 || !peers_[i]->up) continue;
      const std::string address = peers_[i]->address;
      if (!seen_asked_.insert(address).second) continue;
      control(address, {"RINGKV.RING", "SEEN", self_},
              [this, address](std::string_view reply, bool ok) {
                seen_asked_.erase(address);
                if (!ok || restart_check_ != RestartCheck::kAsking) return;
                const bool complete = reply == "+1\r\n";
                const bool incomplete = reply == "+2\r\n";
                // A copy cut off in the middle of a full copy, or predating the ring, is less
                // complete than this node's keys (a failover would promote it) — unless this
                // node restarted with nothing at all (no file to load).
                if (incomplete && (host_ == nullptr || host_->key_count() > 0)) {
                  return end_restart_check(
                      "the copy of this node's keys on " + address +
                      " is incomplete (its full copy was cut off, or it predates the ring); "
                      "serving the keys this node holds");
                }
                if (complete || incomplete) {
                  spdlog::warn(
                      "restarted{} while {} held {} of this node's keys: asking to be failed "
                      "over and restored from them",
                      incomplete ? " empty" : "", address,
                      incomplete ? "an incomplete copy" : "copies");
                  restart_check_ = RestartCheck::kReturning;
                  drive_restart_check();
                } else {
                  seen_answers_.insert(address);
                }
              });
    }
    if (restart_check_ == RestartCheck::kAsking && seen_answers_.size() >= live_peers) {
      return end_restart_check("no member held copies of this node's keys");
    }
    // Peers down since the start answer nothing: after a while, those that answered decide.
    if (restart_check_ == RestartCheck::kAsking && now - restart_check_since_ > 2 * lease_ms_ &&
        !seen_answers_.empty()) {
      return end_restart_check("no member that answers held copies of this node's keys");
    }
    return;
  }
  // Returning: the member that proposes failovers (not this node) fails it over.
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i == self_full_ || peers_[i] == nullptr || is_failed(peers_[i]->address)) continue;
    if (!peers_[i]->up) continue;
    control(peers_[i]->address, {"RINGKV.RING", "RETURNING", self_, std::to_string(ring_version_)},
            [](std::string_view, bool) {});
    break;
  }
}

bool Cluster::fenced(std::string_view address, uint64_t link_fingerprint) const {
  if (!failover_enabled()) return false;
  // A failover of it is prepared here: its pings no longer renew its lease.
  if (pending_ && list_contains(pending_failed_, address) && !is_failed(address)) return true;
  // Failed over, and still on the ring it had before (it does not know yet).
  return is_failed(address) && !link_current(link_fingerprint);
}

void Cluster::update_lease() {
  if (!failover_enabled()) return;
  const uint64_t now = uv_now(loop_);
  // This node's votes and those of the peers that granted it most recently make a majority: the
  // lease lasts from the oldest grant needed.
  const size_t need = votes_needed();
  std::vector<std::pair<uint64_t, size_t>> grants;  // (granted at, votes)
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i != self_full_ && peers_[i] != nullptr && peers_[i]->granted_ms != 0) {
      grants.emplace_back(peers_[i]->granted_ms, votes_of(peers_[i]->address));
    }
  }
  std::sort(grants.begin(), grants.end(), std::greater<>());
  size_t votes = votes_of(self_);
  lease_until_ = votes >= need ? UINT64_MAX : 0;
  for (const auto& [granted, v] : grants) {
    if (votes >= need) break;
    votes += v;
    if (votes >= need) lease_until_ = granted + lease_ms_;
  }
  const bool valid = now < lease_until_;
  if (valid && lease_lost_since_ != 0) {
    if (lease_held_) spdlog::warn("a majority of the members answers again");
    lease_held_ = true;
    lease_lost_since_ = 0;
    if (host_) host_->release_held();
  } else if (!valid && lease_lost_since_ == 0) {
    lease_lost_since_ = now;
    spdlog::warn(
        "fewer than a majority of the members answered within {} ms: this node serves none of "
        "its keys until they do{}",
        lease_ms_,
        ring_.size() == 2 && !tie_breaker_counts()
            ? " (2 members are a majority only together: add a third member or set [cluster] "
              "tie-breaker)"
            : "");
  } else if (!valid && now - lease_lost_since_ >= lease_ms_ && host_) {
    // Requests that waited for the lease are answered now (with an error).
    host_->release_held();
  }
}

size_t Cluster::votes_of(std::string_view address) const {
  if (!ring_.contains(address)) return 0;
  return tie_breaker_counts() && address == options_.tie_breaker ? 2 : 1;
}

size_t Cluster::votes_left(const std::vector<std::string>& failed) const {
  size_t votes = 0;
  for (const auto& m : ring_.nodes()) {
    if (!list_contains(failed, m.address)) votes += votes_of(m.address);
  }
  return votes;
}

std::string Cluster::proposer() const {
  for (size_t i = 0; i < ring_.size(); ++i) {
    const std::string& a = ring_.nodes()[i].address;
    if (is_failed(a)) continue;
    if (i == self_full_ || (peers_[i] != nullptr && peers_[i]->up)) return a;
  }
  return self_;
}

void Cluster::maybe_fail_over() {
  maybe_take_over_change();
  maybe_resolve_orphaned_change();
  // Only a node in touch with a majority proposes (one cut off, or just restarted on an old
  // ring, sees everybody down).
  if (!failover_enabled() || !started_ || change_ || phase_ != Phase::kIdle || !lease_valid()) {
    return;
  }
  if (is_failed(self_) || proposer() != self_ || uv_now(loop_) < failover_retry_at_ms_) return;
  std::vector<std::string> newly;
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i == self_full_ || peers_[i] == nullptr) continue;
    const PeerState& p = *peers_[i];
    if (!p.up && !is_failed(p.address)) newly.push_back(p.address);
  }
  if (newly.empty()) return;
  // The members it leaves vote on it: with too few of them (a majority answered this node's
  // pings, yet more members are down than a majority can spare) it is not proposed.
  std::vector<std::string> failed = failed_;
  failed.insert(failed.end(), newly.begin(), newly.end());
  if (votes_left(failed) < votes_needed()) return;
  start_failover(newly, false);
}

void Cluster::maybe_take_over_change() {
  if (!failover_enabled() || !started_ || change_ || !pending_ || !lease_valid()) return;
  if (pending_coordinator_ == self_ || pending_coordinator_.empty() || is_failed(self_)) return;
  // Only a failover: a majority completes it without its coordinator. (A membership change or
  // a restore needs every participant, the coordinator too.)
  if (!pending_failover()) return;
  const size_t i = ring_.index_of(pending_coordinator_);
  if (i == hashring::HashRing::kNoNode || peers_[i] == nullptr || peers_[i]->up) return;
  // One member takes over: the one that proposes failovers now that the coordinator is down.
  if (proposer() != self_) return;
  // It completes the change rather than abort it: the coordinator may have committed it before
  // it failed. A coordinator that was only hung drives the same change when it comes back, and
  // a member that committed version N refuses to prepare it again, so nothing diverges.
  spdlog::warn("taking over the ring change to version {}: its coordinator {} is down",
               pending_version_, pending_coordinator_);
  resume_change();
}

void Cluster::maybe_resolve_orphaned_change() {
  if (!started_ || change_ || !pending_ || resolving_ || joining_here()) return;
  if (pending_coordinator_ == self_ || pending_coordinator_.empty()) return;
  // A failover is taken over instead: a majority completes it (maybe_take_over_change).
  if (pending_failover()) return;
  const size_t at = ring_.index_of(pending_coordinator_);
  if (at == hashring::HashRing::kNoNode || at == self_full_ || peers_[at] == nullptr ||
      peers_[at]->up) {
    return;
  }
  std::vector<std::string> parts = pending_participants();
  std::erase(parts, pending_coordinator_);
  if (parts.empty()) return;
  struct Answers {
    size_t waiting = 0;
    bool committed = false;  // some participant committed: the change is committed
    std::string missing;     // the first participant that did not answer, and why
    std::string newer;       // the first participant on a later ring
  };
  auto answers = std::make_shared<Answers>();
  answers->waiting = parts.size();
  resolving_ = true;
  const uint64_t version = pending_version_;
  const std::string v = std::to_string(version);
  const std::string target = fingerprint_hex(pending_target());
  for (const std::string& p : parts) {
    // (This node's own answer comes at once, and fences it too.)
    std::vector<std::string> fence{"RINGKV.RING", "FENCE", v, std::string(kForWord), target};
    if (!ring_.contains(p)) fence.emplace_back("JOINING");
    control(p, std::move(fence),
            [this, answers, version, p, parts](std::string_view reply, bool ok) {
              if (!ok && answers->missing.empty())
                answers->missing = p + ": " + failure_text(reply);
              if (ok && reply == kFenceCommitted) answers->committed = true;
              if (ok && reply == kFenceNewer && answers->newer.empty()) answers->newer = p;
              if (--answers->waiting > 0) return;
              resolving_ = false;
              if (!pending_ || pending_version_ != version || change_) return;
              // The change (or another of its version) was committed and the ring changed
              // since: that ring, not this node's copy of the change, is the one to take.
              if (!answers->newer.empty()) {
                spdlog::warn("ring change to version {}: {} is on a later ring; taking it up",
                             version, answers->newer);
                catch_up_from(answers->newer);
                return;
              }
              // Aborting needs every participant's word that it did not commit (the coordinator
              // commits last: had it committed, every other one would have).
              if (!answers->committed && !answers->missing.empty()) {
                spdlog::warn(
                    "ring change to version {}: cannot resolve it without its "
                    "coordinator {} yet ({})",
                    version, pending_coordinator_, answers->missing);
                return;
              }
              decide_orphaned_change(version, answers->committed, parts);
            });
  }
}

void Cluster::decide_orphaned_change(uint64_t version, bool commit,
                                     const std::vector<std::string>& participants) {
  spdlog::warn("ring change to version {}: its coordinator {} is down; its members {} it", version,
               pending_coordinator_, commit ? "commit" : "abort");
  std::vector<std::string> decision{"RINGKV.RING", commit ? "COMMIT" : "ABORT",
                                    std::to_string(version), std::string(kForWord),
                                    fingerprint_hex(pending_target())};
  if (commit) decision.emplace_back("RESOLVED");
  // The others first: this node stays fenced with the change (and resolves it again on its
  // next try) until every other participant took the decision.
  std::vector<std::string> others = participants;
  std::erase(others, self_);
  auto left = std::make_shared<size_t>(others.size());
  auto all_took = std::make_shared<bool>(true);
  auto apply_here = [this, decision, version] {
    if (!pending_ || pending_version_ != version) return;
    const std::vector<std::string_view> args(decision.begin() + 1, decision.end());
    ring_control(args);
  };
  if (others.empty()) return apply_here();
  for (const std::string& o : others) {
    control(o, decision, [left, all_took, apply_here](std::string_view, bool took) {
      if (!took) *all_took = false;
      if (--*left == 0 && *all_took) apply_here();
    });
  }
}

std::string Cluster::failover_veto(const std::vector<std::string>& failed,
                                   const std::vector<std::string>& requested) const {
  if (!replication_->enabled()) return {};
  for (const std::string& a : failed) {
    if (is_failed(a) || a == self_ || list_contains(requested, a)) continue;
    const Replication::CopyState copy = replication_->copy_state(a);
    if (copy == Replication::CopyState::kComplete) continue;
    return std::string(kIncompleteCopyReply) + self_ + "'s copy of " + a + "'s keys is " +
           (copy == Replication::CopyState::kNone
                ? "missing (no stream from it since " + self_ + " started)"
            : copy == Replication::CopyState::kStale
                ? "stale (made under an earlier ring; the keys it gained since are not all copied)"
                : "incomplete (its full copy was cut off)") +
           ": failing it over would lose keys; it waits for " + a + " to return\r\n";
  }
  return {};
}

void Cluster::start_failover(const std::vector<std::string>& newly, bool requested) {
  std::vector<std::string> failed = failed_;
  failed.insert(failed.end(), newly.begin(), newly.end());
  std::sort(failed.begin(), failed.end());
  auto c = std::make_unique<Coordination>();
  c->kind = Coordination::kFailover;
  c->version = ring_version_ + 1;
  c->members.assign(ring_.nodes().begin(), ring_.nodes().end());
  c->failed = failed;
  if (requested) c->requested = newly;
  for (const auto& m : ring_.nodes()) {
    if (!list_contains(failed, m.address)) c->participants.push_back(m.address);
  }
  c->step_started_ms = uv_now(loop_);
  change_ = std::move(c);
  spdlog::warn("failing over {} (ring version {}{})", members_list_text(newly), change_->version,
               requested ? ", as it asked after a restart" : "");
  drive_change();
}

void Cluster::maybe_restore() {
  if (!failover_enabled() || !started_ || change_ || phase_ != Phase::kIdle || !lease_valid()) {
    return;
  }
  if (failed_.empty() || is_failed(self_) || proposer() != self_) return;
  std::vector<std::string> back;
  for (const std::string& a : failed_) {
    const size_t i = ring_.index_of(a);
    if (i != hashring::HashRing::kNoNode && peers_[i] != nullptr && peers_[i]->up &&
        peers_[i]->refused_by_peer.empty()) {
      back.push_back(a);
    }
  }
  if (back.empty()) return;
  // A restore copies keys like a join: every live member takes part.
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i == self_full_ || peers_[i] == nullptr || is_failed(peers_[i]->address)) continue;
    if (!peers_[i]->up) return;
  }
  auto c = std::make_unique<Coordination>();
  c->kind = Coordination::kRestore;
  c->version = ring_version_ + 1;
  c->members.assign(ring_.nodes().begin(), ring_.nodes().end());
  for (const std::string& a : failed_) {
    if (!list_contains(back, a)) c->failed.push_back(a);
  }
  for (const auto& m : ring_.nodes()) {
    if (!list_contains(c->failed, m.address)) c->participants.push_back(m.address);
  }
  c->step_started_ms = uv_now(loop_);
  change_ = std::move(c);
  spdlog::warn("restoring {}: it answers again (ring version {})", members_list_text(back),
               change_->version);
  drive_change();
}

std::string Cluster::ring_text() const {
  std::string out = "+" + std::to_string(ring_version_) + " " + members_list_text(failed_);
  for (const auto& m : ring_.nodes()) out += " " + m.address + "=" + std::to_string(m.weight);
  return out + "\r\n";
}

void Cluster::catch_up_ring() {
  if (change_) return;
  for (PeerState* p : peers_) {
    if (p != nullptr && (ring_mismatch(*p) || p->on_other_ring)) catch_up_from(p->address);
  }
}

void Cluster::catch_up_from(const std::string& address) {
  if (change_) return;
  control(address, {"RINGKV.RING", "GET"}, [this, address](std::string_view reply, bool ok) {
    if (!ok || change_) return;
    // It answered: either its ring is taken up below, or it is the one behind (it asks too).
    if (auto it = known_peers_.find(address); it != known_peers_.end()) {
      it->second->on_other_ring = false;
    }
    const std::vector<std::string_view> w = common::split_words(line_text(reply));
    if (w.size() < 3) return;
    const std::optional<int64_t> version = common::parse_integer(w[0]);
    if (!version || *version <= static_cast<int64_t>(ring_version_)) return;
    std::vector<std::string> failed = parse_members_list(w[1]);
    std::vector<hashring::Member> members;
    for (size_t i = 2; i < w.size(); ++i) {
      std::optional<hashring::Member> m = hashring::parse_member(w[i]);
      if (!m) return;
      members.push_back(*m);
    }
    // Its ring is the change prepared here: that change is committed (by its coordinator, or by
    // the members that resolved it), and this node commits it too, as its step would (the
    // copies its switch gave the replicas count).
    if (pending_ && pending_version_ == static_cast<uint64_t>(*version) &&
        change_target(members, failed) == pending_target()) {
      spdlog::warn("the ring change to version {} was committed by {}", *version, address);
      const std::string v = std::to_string(*version);
      const std::string_view args[] = {"COMMIT", v, "RESOLVED"};
      ring_control(args);
      return;
    }
    spdlog::warn("the ring changed to version {} while this node was away; taking it up", *version);
    // A change prepared here meanwhile is over, one way or the other.
    end_pending();
    close_migration_links();
    apply_ring(std::move(members), std::move(failed), static_cast<uint64_t>(*version));
    save_ring();
    reroute_blocking();
    if (host_) {
      host_->copy_end(kept_keys_ring(), self_);
      host_->release_held();
    }
  });
}

}  // namespace ringkv::cluster
