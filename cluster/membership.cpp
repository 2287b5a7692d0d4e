// Cluster: live membership — the persisted ring, a change's participant side (RINGKV.RING
// control frames) and its coordinator (CLUSTER JOIN / LEAVE / SETWEIGHT). See membership.h.
#include "cluster/membership.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <span>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"
#include "cluster/ring_change_state.h"
#include "cluster/ring_file.h"
#include "common/numbers.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

constexpr std::string_view kPhaseNames[] = {"idle", "prepared", "paused", "switching"};

// The words after a step's version: JOINING (FENCE), RESOLVED (COMMIT), BY <coordinator>
// (ABORT), FOR <fingerprint> (every step after PREPARE), in any order.
struct StepWords {
  bool joining = false;
  bool resolved = false;
  std::string_view by;
  std::optional<uint64_t> target;
};

StepWords step_words(std::span<const std::string_view> words) {
  StepWords w;
  for (size_t i = 0; i < words.size(); ++i) {
    if (common::equals_ignore_case(words[i], "joining")) {
      w.joining = true;
    } else if (common::equals_ignore_case(words[i], "resolved")) {
      w.resolved = true;
    } else if (words[i] == kAbortByWord && i + 1 < words.size()) {
      w.by = words[++i];
    } else if (words[i] == kForWord && i + 1 < words.size()) {
      w.target = parse_fingerprint_hex(words[++i]);
    }
  }
  return w;
}

// "host:port" with a port from 1 to 65535 (an IPv6 host in brackets).
bool valid_address(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return false;
  const std::optional<int64_t> port = common::parse_integer(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return false;
  for (char c : text.substr(0, colon)) {
    if (c <= ' ' || c >= 127 || c == '=') return false;
  }
  return true;
}

bool parse_weight(std::string_view text, uint32_t& out) {
  const std::optional<int64_t> w = common::parse_integer(text);
  if (!w || *w < 1 || *w > 1000) return false;
  out = static_cast<uint32_t>(*w);
  return true;
}

// A fenced participant's refusal of its coordinator's step.
std::string fenced_reply(uint64_t version) {
  return std::string(kFencedReply) + "ring change to version " + std::to_string(version) +
         " is being resolved by its members without its coordinator\r\n";
}

}  // namespace

bool parse_ring_change(std::span<const std::string_view> args, RingChangeRequest& out,
                       std::string& error) {
  // args: JOIN addr [WEIGHT w] | LEAVE addr [FORCE] | SETWEIGHT addr w
  const std::string_view sub = args[0];
  if (args.size() < 2 || !valid_address(args[1])) {
    std::string name(sub);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    error = args.size() < 2 ? "ERR wrong number of arguments for 'cluster|" + name + "' command"
                            : "ERR Invalid node address specified: " + std::string(args[1]);
    return false;
  }
  out.address = std::string(args[1]);
  if (common::equals_ignore_case(sub, "join")) {
    out.kind = RingChangeRequest::kJoin;
    if (args.size() == 2) return true;
    if (args.size() == 4 && common::equals_ignore_case(args[2], "weight")) {
      if (parse_weight(args[3], out.weight)) return true;
      error = "ERR Invalid weight (an integer from 1 to 1000)";
      return false;
    }
  } else if (common::equals_ignore_case(sub, "leave")) {
    out.kind = RingChangeRequest::kLeave;
    if (args.size() == 2) return true;
    if (args.size() == 3 && common::equals_ignore_case(args[2], "force")) {
      out.force = true;
      return true;
    }
  } else {
    out.kind = RingChangeRequest::kSetWeight;
    if (args.size() == 3) {
      if (parse_weight(args[2], out.weight)) return true;
      error = "ERR Invalid weight (an integer from 1 to 1000)";
      return false;
    }
    error = "ERR wrong number of arguments for 'cluster|setweight' command";
    return false;
  }
  error = "ERR syntax error";
  return false;
}

void Cluster::load_ring() {
  ring_path_ = ring_file_path(ring_dir_);
  std::string error;
  std::optional<RingState> state = read_ring_file(ring_path_, error);
  if (!state) {
    if (!error.empty()) {
      spdlog::error("{} (the ring from the configuration is used)", error);
    }
    return;
  }
  if (state->members != std::vector<hashring::Member>(ring_.nodes().begin(), ring_.nodes().end())) {
    spdlog::warn(
        "the ring in {} (version {}: {}) differs from the configuration's peers ({}); "
        "the file wins",
        ring_path_, state->version, members_text(state->members),
        members_text({ring_.nodes().begin(), ring_.nodes().end()}));
  }
  ring_.set_members(state->members);
  failed_ = state->failed;
  if (!ring_.contains(self_)) {
    ring_.set_members(std::vector<hashring::Member>{{self_, 1}});
    failed_.clear();
  }
  ring_version_ = state->version;
  if (state->pending_version != 0) {
    pending_version_ = state->pending_version;
    pending_.emplace(ring_.scheme(), ring_.replicas());
    pending_->set_members(state->pending_members);
    pending_failed_ = state->pending_failed;
    pending_forced_ = state->pending_forced;
    pending_coordinator_ = state->coordinator;
    pending_fenced_ = state->fenced;
    pending_completes_ = state->completes;
    recovering_ = true;
    // Restarted in the middle of a change: keyed requests wait until it ends (recover(); a copy
    // starts again once the server is ready, see set_host()).
    phase_ = Phase::kPaused;
    spdlog::warn("a ring change to version {} was in progress; waiting for it to end",
                 pending_version_);
  }
}

void Cluster::save_ring() {
  RingState state;
  state.version = ring_version_;
  state.members.assign(ring_.nodes().begin(), ring_.nodes().end());
  state.failed = failed_;
  if (pending_) {
    state.pending_version = pending_version_;
    state.pending_members.assign(pending_->nodes().begin(), pending_->nodes().end());
    state.pending_failed = pending_failed_;
    state.pending_forced = pending_forced_;
    state.coordinator = pending_coordinator_;
    state.fenced = pending_fenced_;
    state.completes = pending_completes_;
  }
  std::string error = write_ring_file(ring_path_, state);
  if (!error.empty()) spdlog::error("cannot persist the ring: {}", error);
}

void Cluster::set_host(MembershipHost* host) {
  host_ = host;
  // Leftovers of a change this node committed but had not finished deleting when it stopped.
  // (With a change prepared the copy starts again when its coordinator says so.)
  if (host_ != nullptr && !pending_) host_->copy_end(kept_keys_ring(), self_);
}

void Cluster::apply_ring(std::vector<hashring::Member> members, std::vector<std::string> failed,
                         uint64_t version) {
  previous_fingerprint_ = view_fingerprint();
  const bool member = std::any_of(members.begin(), members.end(),
                                  [&](const hashring::Member& m) { return m.address == self_; });
  // A node that left is an empty ring of its own (it may join a cluster again).
  if (!member) {
    members = {{self_, 1}};
    failed.clear();
  }
  ring_.set_members(members);
  for (const std::string& a : failed) {
    if (!is_failed(a)) {
      failovers_seen_++;
      spdlog::warn(
          "peer {} failed over: its keys go to the next members of their preference "
          "lists",
          a);
    }
  }
  for (const std::string& a : failed_) {
    if (!list_contains(failed, a) && ring_.contains(a)) {
      spdlog::warn("peer {} is back on the ring; its keys go to it again", a);
    }
  }
  failed_ = std::move(failed);
  ring_version_ = version;
  // Health links open again with the new ring, so pings (the lease) count under it at once.
  for (auto& [address, p] : known_peers_) p->pool.drop_health();
  index_peers();
  for (auto& [address, p] : known_peers_) {
    if (!ring_.contains(address)) p->pool.close(LinkErrorKind::kShutdown);
  }
  rebuild_routing();
  if (view_fingerprint() != previous_fingerprint_) announce_view();
}

PeerLink& Cluster::migration_link(std::string_view address) {
  auto& link = migration_links_[std::string(address)];
  if (!link) {
    // Copies of big values take their time: no request timeout, the link closing fails them.
    link =
        make_link(peer(address), LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms), 0,
                                             static_cast<uint64_t>(options_.connect_timeout_ms)});
  }
  return *link;
}

void Cluster::end_pending() {
  pending_.reset();
  pending_failed_.clear();
  pending_forced_.clear();
  pending_version_ = 0;
  pending_coordinator_.clear();
  pending_fenced_ = false;
  pending_completes_ = false;
  change_from_fingerprint_.clear();
  recovering_ = false;
  copy_started_ = false;
  phase_ = Phase::kIdle;
}

void Cluster::close_migration_links() {
  for (auto& [address, link] : migration_links_) retired_links_.push_back(std::move(link));
  migration_links_.clear();
}

size_t Cluster::relays_in_flight() const {
  size_t n = 0;
  for (const auto& [address, p] : known_peers_) n += p->pool.totals().in_flight;
  for (const auto& [id, links] : transaction_links_) {
    for (const TransactionLink& t : links) n += t.link->in_flight();
  }
  // A cross-node transaction counts while it lives, even waiting for a lock here: the ring
  // must not change between its LOCKs and its RUNs.
  n += sessions_.size();
  return n;
}

std::string Cluster::state_text() const {
  // A node that restarted during the change reports its copy as failed until the coordinator
  // starts it again: what it had sent before is unknown.
  const CopyProgress progress = host_ ? host_->copy_progress() : CopyProgress{};
  ChangeState s;
  s.version = ring_version_;
  s.phase = kPhaseNames[static_cast<size_t>(phase_)];
  s.copied = progress.failed || (recovering_ && !copy_started_) ? 'x' : progress.copied ? '1' : '0';
  s.flushed = progress.flushed && replication_->drained_acknowledged();
  s.in_flight = writes_in_flight();
  s.keys = host_ ? host_->key_count() : 0;
  s.members = ring_.size();
  s.pending = pending_version_;
  s.coordinating = change_ != nullptr;
  s.factor = static_cast<uint64_t>(options_.replication_factor);
  return s.text();
}

std::string Cluster::ring_control(std::span<const std::string_view> args) {
  auto error = [](std::string_view text) { return "-ERR " + std::string(text) + "\r\n"; };
  if (args.empty()) return error("RINGKV.RING needs a subcommand");
  const std::string_view sub = args[0];
  if (common::equals_ignore_case(sub, "state")) return state_text();
  if (common::equals_ignore_case(sub, "get")) return ring_text();
  if (common::equals_ignore_case(sub, "seen") && args.size() == 2) {
    // Whether this node holds copies of that member's keys (it restarted and asks): +1 a
    // complete copy (or it is failed over), +2 one whose full copy was cut off or that predates
    // the ring (the member's own keys are then the more complete), +0 none.
    if (is_failed(args[1])) return "+1\r\n";
    switch (replication_->copy_state(args[1])) {
      case Replication::CopyState::kComplete:
        return "+1\r\n";
      case Replication::CopyState::kIncomplete:
      case Replication::CopyState::kStale:
        return "+2\r\n";
      case Replication::CopyState::kNone:
        break;
    }
    return "+0\r\n";
  }
  if (common::equals_ignore_case(sub, "functions") && args.size() == 2) {
    // The coordinator of this node's join gives it the cluster's function libraries first.
    if (change_ || phase_ != Phase::kIdle || !candidate()) {
      return error("only a node about to be joined takes function libraries");
    }
    const std::string failed = host_->restore_functions(args[1]);
    return failed.empty() ? "+OK\r\n" : error(failed);
  }
  if (common::equals_ignore_case(sub, "returning") && args.size() == 3) {
    // A member restarted with stale keys asks to be failed over (then restored).
    const std::string address(args[1]);
    if (!failover_enabled() || change_ || phase_ != Phase::kIdle || !ring_.contains(address) ||
        is_failed(address) || args[2] != std::to_string(ring_version_) || !lease_valid()) {
      return error("cannot fail " + address + " over now");
    }
    start_failover({address}, true);
    return "+OK\r\n";
  }
  const std::optional<int64_t> parsed =
      args.size() < 2 ? std::nullopt : common::parse_integer(args[1]);
  if (!parsed || *parsed < 1) return error("RINGKV.RING needs a version");
  const uint64_t version = static_cast<uint64_t>(*parsed);
  if (common::equals_ignore_case(sub, "prepare")) {
    if (args.size() < 5) return error("RINGKV.RING PREPARE needs the ring it changes");
    if (restart_check_ != RestartCheck::kNone) {
      return error("this node is checking its keys after a restart");
    }
    // Failed members ('!': at their own request) and members forced out ('~').
    std::vector<std::string> failed;
    std::vector<std::string> requested;
    std::vector<std::string> forced;
    for (std::string& a : parse_members_list(args[4])) {
      if (a.starts_with('~')) {
        forced.push_back(a.substr(1));
        continue;
      }
      if (a.starts_with('!')) {
        a.erase(0, 1);
        requested.push_back(a);
      }
      failed.push_back(std::move(a));
    }
    std::sort(failed.begin(), failed.end());
    const bool completes = args.back() == kCompletesWord;
    std::vector<hashring::Member> members;
    for (size_t i = 5; i < args.size() - (completes ? 1 : 0); ++i) {
      std::optional<hashring::Member> m = hashring::parse_member(args[i]);
      if (!m) return error("bad member " + std::string(args[i]));
      members.push_back(*m);
    }
    if (members.empty()) return error("a ring needs members");
    if (phase_ != Phase::kIdle) {
      // A retried prepare of the same change; not a new change that reuses the version of one
      // that was aborted without this node hearing of it (recover() learns that soon).
      if (pending_version_ == version && pending_failed_ == failed &&
          std::equal(members.begin(), members.end(), pending_->nodes().begin(),
                     pending_->nodes().end())) {
        if (pending_fenced_) return fenced_reply(version);
        if (pending_coordinator_ == args[3]) {
          if (completes && !pending_completes_) {
            pending_completes_ = true;
            save_ring();
          }
          return "+OK\r\n";
        }
        // The same change from another member: it takes the change over from a coordinator
        // that failed. Only if this node sees that coordinator down too (a majority's view).
        const size_t at = ring_.index_of(pending_coordinator_);
        if (at != hashring::HashRing::kNoNode && at != self_full_ && peers_[at] != nullptr &&
            !peers_[at]->up) {
          spdlog::warn("ring change to version {}: {} takes it over from {}, which is down",
                       version, args[3], pending_coordinator_);
          pending_coordinator_ = std::string(args[3]);
          pending_completes_ = completes;
          save_ring();
          return "+OK\r\n";
        }
        // Or beside it, when neither aborts the change: a failover's coordinator restarted and
        // the member that took the change over from it both drive it to the same commit, and
        // each needs the votes of the members that recorded the other one.
        if (completes && pending_completes_) return "+OK\r\n";
        return error("ring change to version " + std::to_string(version) + " is coordinated by " +
                     pending_coordinator_ + ", which answers here");
      }
      return error("another ring change (version " + std::to_string(pending_version_) +
                   ") is in progress here");
    }
    if (host_ && host_->copy_progress().sweeping) {
      return error(
          "this node is still deleting the keys it gave away in the last change; "
          "try again shortly");
    }
    // A candidate joins whatever version the cluster is at.
    if (version != ring_version_ + 1 && !candidate()) {
      // Changes committed while this node was away (hung through one that did not fail it over):
      // its peers accept its links under the ring before, so nothing else tells it. It takes up
      // the coordinator's ring, and the coordinator's next try finds it there.
      if (version > ring_version_ + 1) catch_up_from(std::string(args[3]));
      return error("ring version " + std::to_string(version) + " does not follow this node's " +
                   std::to_string(ring_version_));
    }
    // A member restored serves keys as soon as the change commits: it must hold its lease.
    if (restoring_here() || (is_failed(self_) && !list_contains(failed, self_))) {
      if (!lease_valid()) return error("this node has no lease from a majority yet");
    }
    // A failover needs this node to see the member down too (a majority's view, not one node's).
    for (const std::string& a : failed) {
      if (is_failed(a) || a == self_ || !ring_.contains(a) || list_contains(requested, a)) {
        continue;
      }
      const PeerState& p = peer(a);
      if (p.up && p.failures == 0) return error("member " + a + " answers here");
    }
    if (std::string veto = failover_veto(failed, requested); !veto.empty()) return veto;
    pending_version_ = version;
    pending_.emplace(ring_.scheme(), ring_.replicas());
    pending_->set_members(members);
    pending_failed_ = std::move(failed);
    pending_forced_ = std::move(forced);
    // The members still on the old ring link with this node until the change ends.
    change_from_fingerprint_ = std::string(args[2]);
    pending_coordinator_ = std::string(args[3]);
    pending_completes_ = completes;
    phase_ = Phase::kPrepared;
    save_ring();
    spdlog::info("ring change to version {} prepared: {}{}", version, members_text(members),
                 pending_failed_.empty() ? "" : " failed " + members_list_text(pending_failed_));
    // Back from being failed over with copies elsewhere: what this node holds may be stale.
    if (restoring_here() && options_.replication_factor > 1 && host_) {
      host_->prepare_restore(live_ring(pending_->nodes(), pending_failed_));
    }
    return "+OK\r\n";
  }
  // A step names its change (kForWord): one of another change of this version is not ours, and
  // a ring committed at this version is that change only if it is the ring the change moves to.
  const StepWords words = step_words(args.subspan(2));
  const bool ours = pending_ && pending_version_ == version &&
                    (!words.target || *words.target == pending_target());
  const bool committed =
      !ours && ring_version_ >= version &&
      (!words.target || ring_version_ > version || *words.target == view_fingerprint());
  if (common::equals_ignore_case(sub, "fence")) {
    // A member resolving the change without its coordinator: from now on this node refuses the
    // coordinator's steps of it, and says whether it committed it. (A node the change adds had
    // a ring version of its own before: it committed only if it is on a ring of several now.)
    if (committed && (!words.joining || ring_.size() > 1)) {
      const bool later = words.target && !words.joining && ring_version_ > version;
      return std::string(later ? kFenceNewer : kFenceCommitted);
    }
    if (!ours) return std::string(kFenceAborted);
    if (!pending_fenced_) {
      pending_fenced_ = true;
      save_ring();
      spdlog::warn("ring change to version {}: fenced, its members resolve it without {}", version,
                   pending_coordinator_);
    }
    return std::string(kFenceHeld);
  }
  // Once the commit round began, a change neither held nor committed here was aborted.
  const std::string no_change = std::string(kNoChangeReply) + "no ring change to version " +
                                std::to_string(version) + " here\r\n";
  // A step of the coordinator's (all but a resolving member's COMMIT ... RESOLVED).
  if (ours && pending_fenced_ && !words.resolved && !common::equals_ignore_case(sub, "abort")) {
    return fenced_reply(version);
  }
  if (common::equals_ignore_case(sub, "copy")) {
    // Sent once every member prepared (a target takes copies only then), and again with every
    // poll of the copy step: the first starts the copy; each answers the state.
    if (!ours) return no_change;
    if (!copy_started_ && host_) {
      copy_started_ = true;
      host_->copy_start(live_ring(pending_->nodes(), pending_failed_), pending_version_, self_);
    }
    return state_text();
  }
  if (common::equals_ignore_case(sub, "pause") || common::equals_ignore_case(sub, "flush")) {
    if (!ours) return no_change;
    if (common::equals_ignore_case(sub, "pause")) {
      if (phase_ == Phase::kPrepared) phase_ = Phase::kPaused;
    } else if (phase_ != Phase::kSwitching) {
      phase_ = Phase::kSwitching;
      if (host_) host_->copy_flush();
      if (change_delivers_copies()) replication_->mark_drained(pending_version_);
    }
    return "+OK\r\n";
  }
  if (common::equals_ignore_case(sub, "commit")) {
    if (!ours) return committed ? "+OK\r\n" : no_change;
    // The new ring decides what this node deletes (a node that left owns nothing in it).
    std::vector<hashring::Member> members(pending_->nodes().begin(), pending_->nodes().end());
    std::vector<std::string> failed = pending_failed_;
    const hashring::HashRing owners = live_ring(members, failed);
    const bool delivered = change_delivers_copies();
    std::vector<std::string> before;
    for (const hashring::Member& m : ring_.nodes()) before.push_back(m.address);
    end_pending();
    spdlog::info("ring version {} committed: {}{}", version, members_text(members),
                 failed.empty() ? "" : " failed " + members_list_text(failed));
    apply_ring(members, std::move(failed), version);
    if (delivered) replication_->copies_delivered(version, before);
    save_ring();
    close_migration_links();
    reroute_blocking();
    if (host_) {
      host_->copy_end(owners, self_);
      host_->release_held();
    }
    return "+OK\r\n";
  }
  if (common::equals_ignore_case(sub, "abort")) {
    if (!ours) return "+OK\r\n";
    // From a coordinator this node no longer follows: the one it follows took the failover over
    // (the sender was down) or resumed it, completes it and may commit it. Only a failover too
    // few members are left to vote for can never be committed by anyone, whoever aborts it. (A
    // coordinator that may abort is recorded without `completes`: an abort of that version from
    // anyone drops the change, as a stale one a restarted coordinator holds.)
    if (!words.by.empty() && pending_completes_ && words.by != pending_coordinator_ &&
        !(pending_failover() && votes_left(pending_failed_) < votes_needed())) {
      spdlog::warn("ring change to version {}: {} aborts it, but {} coordinates it here", version,
                   words.by, pending_coordinator_);
      return error("ring change to version " + std::to_string(version) + " is coordinated by " +
                   pending_coordinator_ + " here, not by " + std::string(words.by));
    }
    // A node that was joining gives back everything it received: it is an empty node again.
    const bool joining = joining_here();
    end_pending();
    save_ring();
    spdlog::warn("ring change to version {} aborted", version);
    close_migration_links();
    if (host_) {
      host_->copy_end(
          joining ? hashring::HashRing(ring_.scheme(), ring_.replicas()) : kept_keys_ring(), self_);
      host_->release_held();
    }
    return "+OK\r\n";
  }
  return error("unknown RINGKV.RING subcommand");
}

bool Cluster::pending_same_members() const {
  return std::equal(pending_->nodes().begin(), pending_->nodes().end(), ring_.nodes().begin(),
                    ring_.nodes().end());
}

std::vector<std::string> Cluster::pending_participants() const {
  std::vector<std::string> out;
  for (const auto& m : ring_.nodes()) {
    if (list_contains(pending_failed_, m.address) || list_contains(pending_forced_, m.address)) {
      continue;
    }
    if (!pending_->contains(m.address) && is_failed(m.address)) continue;
    out.push_back(m.address);
  }
  for (const auto& m : pending_->nodes()) {
    if (!ring_.contains(m.address)) out.push_back(m.address);
  }
  return out;
}

void Cluster::resume_change() {
  // Whether some member committed decides the way: forward to the commit, or the whole change
  // again from the prepare (every step is idempotent).
  auto c = std::make_unique<Coordination>();
  c->version = pending_version_;
  c->members.assign(pending_->nodes().begin(), pending_->nodes().end());
  c->failed = pending_failed_;
  c->kind = !pending_same_members() ? Coordination::kMembership
            : pending_failover()    ? Coordination::kFailover
                                    : Coordination::kRestore;
  c->participants = pending_participants();
  c->step = Coordination::kResolving;
  c->prepare_sent = true;
  // A failover taken up again may have been committed by another member coordinating it (the
  // one it was taken over from, or one that took it over from this node): it never aborts.
  c->taken_over = c->kind == Coordination::kFailover;
  c->step_started_ms = uv_now(loop_);
  change_ = std::move(c);
  drive_change();
}

void Cluster::recover() {
  drive_restart_check();
  catch_up_ring();
  maybe_fail_over();
  maybe_restore();
  if (!pending_ || change_) return;
  if (pending_coordinator_ == self_ || (recovering_ && pending_coordinator_.empty())) {
    // This node coordinated the change and restarted, or took it over and could not finish it
    // yet: it takes it up again.
    spdlog::warn("resuming the ring change to version {}", pending_version_);
    return resume_change();
  }
  if (pending_coordinator_ == self_ || pending_coordinator_.empty()) return;
  maybe_take_over_change();
  maybe_resolve_orphaned_change();
  if (change_ || resolving_ || !pending_) return;
  // A participant (restarted or not) asks the coordinator how the change stands: a coordinator
  // killed after committing itself restarts with no change to drive, and one that aborted may
  // not have reached this node; while it still coordinates, this node keeps waiting.
  const uint64_t version = pending_version_;
  control(pending_coordinator_, {"RINGKV.RING", "STATE"},
          [this, version](std::string_view reply, bool ok) {
            if (!ok || !pending_ || pending_version_ != version || change_) return;
            const std::optional<ChangeState> theirs = ChangeState::parse(reply);
            if (!theirs) return;
            const std::string v = std::to_string(version);
            if (theirs->version >= version) {
              // Committed there: this change, or another of that version (this one was
              // aborted without this node), or it moved on since.
              catch_up_from(pending_coordinator_);
            } else if (theirs->phase == "idle" && !theirs->coordinating) {
              spdlog::warn("the ring change to version {} was aborted by its coordinator", version);
              const std::string_view args[] = {"ABORT", v};
              ring_control(args);
            }
          });
}

}  // namespace ringkv::cluster
