// Cluster: the coordinator of a ring change — CLUSTER JOIN / LEAVE / SETWEIGHT, and the failovers
// and restores failover.cpp starts — driving every participant through the steps membership.h
// describes with RINGKV.RING control frames.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/ring_change_state.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// How often the coordinator looks at its participants while a change runs.
constexpr uint64_t kDriveMs = 20;
// A pause (or flush) that has not taken hold everywhere by then aborts the change.
constexpr uint64_t kPauseLimitMs = 10000;
// Consecutive failed rounds (a participant unreachable) before a change aborts.
constexpr int kFailureLimit = 50;
// A failover refused for an incomplete copy is proposed again after this long.
constexpr uint64_t kVetoPauseMs = 5000;

// A test hook: RINGKV_TEST_STOP_COORDINATOR="<address> <moment>" makes that member stop itself
// (SIGSTOP) once, at that moment of the first change it coordinates — where a coordinator
// dying leaves the other members with a prepared change (test_failover_coordinator.py,
// test_lost_coordinator.py). Moments: "failover-prepared" (a majority prepared a failover),
// "paused" (every participant paused for a membership change), "flushed" (every participant
// flushed, nothing committed), "committing" (every participant but this node committed).
void stop_if_asked(const std::string& self, std::string_view moment) {
  static bool stopped = false;
  const char* hook = std::getenv("RINGKV_TEST_STOP_COORDINATOR");
  if (stopped || hook == nullptr || std::string(self) + " " + std::string(moment) != hook) return;
  stopped = true;
  spdlog::warn("stopping at the moment '{}' of a ring change (RINGKV_TEST_STOP_COORDINATOR)",
               moment);
  spdlog::default_logger()->flush();
  std::raise(SIGSTOP);
}

}  // namespace

void Cluster::control(const std::string& address, std::vector<std::string> args,
                      std::function<void(std::string_view reply, bool ok)> cb) {
  if (address == self_) {
    std::vector<std::string_view> views(args.begin() + 1, args.end());
    const std::string reply = ring_control(views);
    cb(reply, reply[0] == '+');
    return;
  }
  auto& link = control_links_[address];
  if (!link) {
    link = make_link(peer(address),
                     LinkOptions{static_cast<uint64_t>(options_.connect_timeout_ms),
                                 static_cast<uint64_t>(options_.request_timeout_ms),
                                 static_cast<uint64_t>(options_.connect_timeout_ms)},
                     true);
  }
  std::string& f = link->frame_buffer();
  protocol::append_request_header(f, args.size());
  for (const auto& a : args) protocol::append_request_bulk(f, a);
  link->commit([cb = std::move(cb)](std::string_view reply, const LinkError* error) {
    if (error != nullptr) {
      cb(error->text(), false);
    } else {
      cb(reply, !reply.empty() && reply[0] == '+');
    }
  });
  link->flush();
}

void Cluster::change_ring(const RingChangeRequest& request, ReplyDone done) {
  auto fail = [&](std::string text) { done(error_reply("ERR " + text)); };
  if (change_ || phase_ != Phase::kIdle) {
    return fail(
        "a ring change is already in progress; try again when CLUSTER INFO shows "
        "cluster_migration_state:idle");
  }
  const bool member = ring_.contains(request.address);
  if (request.kind == RingChangeRequest::kJoin && member) {
    return fail(request.address + " is already a member");
  }
  if (request.kind != RingChangeRequest::kJoin && !member) {
    return fail(request.address + " is not a member");
  }
  if (request.kind == RingChangeRequest::kLeave && ring_.size() == 1) {
    return fail("cannot remove the last member");
  }
  if (request.kind == RingChangeRequest::kSetWeight &&
      ring_.nodes()[ring_.index_of(request.address)].weight == request.weight) {
    return fail(request.address + " already has weight " + std::to_string(request.weight));
  }
  // Every member must take part: none may be down or refusing links (except a forced leaver),
  // nor failed over (restored first, or forced out).
  for (const std::string& a : failed_) {
    if (request.force && a == request.address) continue;
    return fail("member " + a +
                " is failed over; a ring change needs every member (it is restored once it "
                "answers again; CLUSTER LEAVE <addr> FORCE removes it for good)");
  }
  for (size_t i = 0; i < ring_.size(); ++i) {
    if (i == self_full_) continue;
    const PeerState& p = *peers_[i];
    if (request.force && p.address == request.address) continue;
    if (!p.up || !p.refused_by_peer.empty()) {
      return fail("member " + p.address + " is " + (p.up ? "refusing links" : "down") +
                  "; a ring change needs every member (CLUSTER LEAVE <addr> FORCE removes a "
                  "member that is down for good)");
    }
  }
  if (request.force && request.address == self_) return fail("a node cannot force itself out");
  auto c = std::make_unique<Coordination>();
  c->version = ring_version_ + 1;
  c->members.assign(ring_.nodes().begin(), ring_.nodes().end());
  if (request.kind == RingChangeRequest::kJoin) {
    c->members.push_back({request.address, request.weight});
  } else if (request.kind == RingChangeRequest::kLeave) {
    std::erase_if(c->members, [&](const auto& m) { return m.address == request.address; });
  } else {
    for (auto& m : c->members) {
      if (m.address == request.address) m.weight = request.weight;
    }
  }
  std::sort(c->members.begin(), c->members.end(),
            [](const auto& a, const auto& b) { return a.address < b.address; });
  for (const auto& m : ring_.nodes()) {
    if (!(request.force && m.address == request.address)) c->participants.push_back(m.address);
  }
  // A forced leaver that was failed over is no longer failed: it is gone.
  c->failed = failed_;
  std::erase(c->failed, request.address);
  if (request.kind == RingChangeRequest::kJoin) c->participants.push_back(request.address);
  c->done = std::move(done);
  c->step_started_ms = uv_now(loop_);
  change_ = std::move(c);
  spdlog::info("ring change to version {} started: {}", change_->version,
               members_text(change_->members));
  if (request.kind == RingChangeRequest::kJoin) {
    // The candidate must be reachable, pass the handshake and hold no keys.
    control(request.address, {"RINGKV.RING", "STATE"}, [this](std::string_view reply, bool ok) {
      if (!change_) return;
      if (!ok) return finish_change("cannot reach the node to join: " + failure_text(reply));
      const std::optional<ChangeState> s = ChangeState::parse(reply);
      if (!s) {
        return finish_change("the node to join gave an unexpected state: " + std::string(reply));
      }
      if (s->phase != "idle" || s->keys != 0 || s->members != 1) {
        return finish_change("the node to join must be an empty node of its own (it has " +
                             std::to_string(s->keys) + " keys and " + std::to_string(s->members) +
                             " members)");
      }
      // Members keep copies by one rule: one with another factor would keep too few.
      const auto factor = static_cast<uint64_t>(options_.replication_factor);
      if (s->factor != factor) {
        return finish_change("the node to join has replication-factor " +
                             std::to_string(s->factor) + "; this cluster's is " +
                             std::to_string(factor) + " (set it alike in its configuration)");
      }
      // It gets the function libraries before it serves anything (FCALL through any node).
      const std::string payload = host_ != nullptr ? host_->function_payload() : std::string();
      if (payload.empty()) return drive_change();
      control(change_->participants.back(), {"RINGKV.RING", "FUNCTIONS", payload},
              [this](std::string_view reply, bool ok) {
                if (!change_) return;
                if (!ok) {
                  return finish_change("cannot give the node to join the function libraries: " +
                                       failure_text(reply));
                }
                drive_change();
              });
    });
    return;
  }
  drive_change();
}

void Cluster::finish_change(std::string error) {
  if (!change_) return;
  Coordination& c = *change_;
  if (!error.empty()) {
    spdlog::error("ring change to version {} failed: {}", c.version, error);
    last_change_ = "failed: " + error;
    // Nothing is committed anywhere: every participant drops the change. (A change taken over
    // from a failed coordinator stays prepared: that one may have committed it.)
    if (c.prepare_sent && !c.taken_over) {
      const std::vector<std::string> abort{"RINGKV.RING",
                                           "ABORT",
                                           std::to_string(c.version),
                                           std::string(kAbortByWord),
                                           self_,
                                           std::string(kForWord),
                                           coordinated_target(c)};
      for (const auto& a : c.participants) control(a, abort, [](std::string_view, bool) {});
    }
    if (c.done) c.done(error_reply("ERR " + error));
  } else {
    spdlog::info("ring change to version {} done", c.version);
    last_change_ = "ok";
  }
  const bool failover_next = c.taken_over && error.empty();
  const std::vector<std::string> participants =
      error.empty() ? std::vector<std::string>{} : c.participants;
  change_.reset();
  uv_timer_stop(&change_timer_);
  // A change that failed may have been refused by members on a newer ring ("ring version N does
  // not follow this node's N"): this node takes the newest committed one up.
  for (const std::string& a : participants) {
    if (a != self_) catch_up_from(a);
  }
  // The coordinator it took the change over from is down: its failover comes next. (A takeover
  // that failed is tried again by recover(), not at once.)
  if (failover_next) maybe_fail_over();
}

void Cluster::schedule_change() {
  uv_timer_start(
      &change_timer_, [](uv_timer_t* t) { static_cast<Cluster*>(t->data)->drive_change(); },
      kDriveMs, 0);
}

void Cluster::drive_change() {
  if (!change_ || change_->waiting > 0) return;
  Coordination& c = *change_;
  const uint64_t now = uv_now(loop_);
  if ((c.step == Coordination::kQuiescing || c.step == Coordination::kFlushWait) &&
      now - c.step_started_ms > kPauseLimitMs) {
    return finish_change("the cluster did not pause within " + std::to_string(kPauseLimitMs) +
                         " ms");
  }
  if (c.step == Coordination::kLeaseWait) {
    // A failover: the failed member's lease ends before its keys are served elsewhere.
    if (now < c.step_started_ms) {
      uv_timer_start(
          &change_timer_, [](uv_timer_t* t) { static_cast<Cluster*>(t->data)->drive_change(); },
          c.step_started_ms - now, 0);
      return;
    }
    c.step = Coordination::kCommitting;
    c.failures = 0;
  }
  std::vector<std::string> args{"RINGKV.RING"};
  switch (c.step) {
    case Coordination::kPreparing:
      args.push_back("PREPARE");
      args.push_back(std::to_string(c.version));
      args.push_back(fingerprint_hex(view_fingerprint()));
      args.push_back(self_);
      {
        // A member failed over at its own request is marked with '!': nobody need see it down.
        // A member the change forces out, '~': it takes no part (members resolving the change
        // without its coordinator need no word from it).
        std::vector<std::string> marked = c.failed;
        for (std::string& a : marked) {
          if (list_contains(c.requested, a)) a = "!" + a;
        }
        for (const auto& m : ring_.nodes()) {
          const bool stays = std::any_of(c.members.begin(), c.members.end(),
                                         [&](const auto& n) { return n.address == m.address; });
          if (!stays && !list_contains(c.participants, m.address)) {
            marked.push_back("~" + m.address);
          }
        }
        args.push_back(members_list_text(marked));
      }
      for (const auto& m : c.members) args.push_back(m.address + "=" + std::to_string(m.weight));
      if (c.taken_over) args.emplace_back(kCompletesWord);
      c.prepare_sent = true;
      break;
    case Coordination::kCopying:
      args.insert(args.end(), {"COPY", std::to_string(c.version)});
      break;
    case Coordination::kResolving:
    case Coordination::kQuiescing:
    case Coordination::kFlushWait:
    case Coordination::kLeaseWait:
      args.push_back("STATE");
      break;
    case Coordination::kPausing:
      args.insert(args.end(), {"PAUSE", std::to_string(c.version)});
      break;
    case Coordination::kFlushing:
      args.insert(args.end(), {"FLUSH", std::to_string(c.version)});
      break;
    case Coordination::kCommitting:
      args.insert(args.end(), {"COMMIT", std::to_string(c.version)});
      break;
  }
  // A step about the change names it (a PREPARE does by its words; STATE is not about one).
  const bool about_change = args[1] != "PREPARE" && args[1] != "STATE";
  if (about_change) args.insert(args.end(), {std::string(kForWord), coordinated_target(c)});
  const auto& parts = c.participants;
  if (c.committed.size() != parts.size()) c.committed.assign(parts.size(), false);
  c.round_ready = true;
  c.round_failed = false;
  c.round_ok = 0;
  c.failure.clear();
  const Coordination::Step step = c.step;
  const bool committing = step == Coordination::kCommitting;
  // A membership change or a restore commits here only once every other participant has: a
  // coordinator that dies in the commit step then never holds a commit that the members who
  // resolve the change without it could abort (maybe_resolve_orphaned_change).
  bool others_committed = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != self_ && !c.committed[i]) others_committed = false;
  }
  if (committing && others_committed && c.kind != Coordination::kFailover) {
    stop_if_asked(self_, "committing");
  }
  const auto skipped = [&](size_t i) {
    return committing && (c.committed[i] || (c.kind != Coordination::kFailover &&
                                             parts[i] == self_ && !others_committed));
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!skipped(i)) ++c.waiting;
  }
  const uint64_t version = c.version;
  const uint64_t round = ++c.rounds;
  // A reply may come at once (a link already known down) and end the round, and with it the
  // change or this round: `c` may then be gone, and what is left of the loop must not run.
  const std::vector<std::string> members = parts;
  for (size_t i = 0; i < members.size(); ++i) {
    if (!change_ || change_->version != version || change_->rounds != round) return;
    if (skipped(i)) continue;
    auto on_reply = [this, i, step, version](std::string_view reply, bool ok) {
      if (!change_ || change_->version != version || change_->step != step) return;
      Coordination& cc = *change_;
      // Failovers decide by votes (the tie-breaker has two).
      if (ok) cc.round_ok += votes_of(cc.participants[i]);
      if (!ok) {
        cc.round_failed = true;
        // A member whose copy of the failed one's keys is incomplete refuses, whatever the
        // majority says.
        if (reply.starts_with(kIncompleteCopyReply) && !cc.fatal) {
          cc.fatal = true;
          cc.failure.clear();
        }
        // A participant that neither holds nor committed the change in the commit step: its
        // members aborted it without this node (nobody committed, this node commits last).
        if (step == Coordination::kCommitting && reply.starts_with(kNoChangeReply) && !cc.fatal) {
          cc.fatal = true;
          cc.failure = cc.participants[i] + ": the change was aborted by its members";
        }
        if (cc.failure.empty()) cc.failure = cc.participants[i] + ": " + failure_text(reply);
      } else if (step == Coordination::kCommitting) {
        cc.committed[i] = true;
      } else if (step == Coordination::kResolving) {
        const std::optional<ChangeState> s = ChangeState::parse(reply);
        if (s && s->version >= version) cc.some_committed = true;
      } else if (step == Coordination::kCopying || step == Coordination::kQuiescing ||
                 step == Coordination::kFlushWait) {
        const std::optional<ChangeState> s = ChangeState::parse(reply);
        if (s && s->copied == 'x' && cc.failure.empty()) {
          cc.round_failed = true;
          cc.fatal = true;
          cc.failure = cc.participants[i] + ": copying its keys to their new owners failed";
        }
        const bool ready =
            s && (step == Coordination::kCopying     ? s->copied == '1'
                  : step == Coordination::kQuiescing ? s->phase == "paused" && s->in_flight == 0
                                                     : s->flushed);
        if (!ready) cc.round_ready = false;
      }
      if (--cc.waiting == 0) change_round_done();
    };
    // A failover decides by the votes of the members that answer: one this node sees down while
    // it holds its lease (a hung coordinator it was taken over from) counts as refusing at once,
    // rather than holding every round until its request times out. (A node just restarted sees
    // everybody down until its links are accepted again: it asks them all.)
    if (change_->kind == Coordination::kFailover && members[i] != self_ && !peer(members[i]).up &&
        lease_valid()) {
      on_reply("-ERR peer " + members[i] + " is down\r\n", false);
    } else {
      control(members[i], args, std::move(on_reply));
    }
  }
}

void Cluster::change_round_done() {
  Coordination& c = *change_;
  const uint64_t now = uv_now(loop_);
  auto next = [&](Coordination::Step step) {
    c.step = step;
    c.step_started_ms = now;
    c.failures = 0;
    drive_change();
  };
  if (c.kind == Coordination::kFailover) return failover_round_done();
  if (c.round_failed) {
    // Before anything is committed a failure aborts (after a few tries for the polls); once a
    // member committed, the others are told again until they do.
    // Resolving needs every member's answer: it waits for them (a member that is down keeps the
    // change waiting, holding keyed requests, until it is back).
    if (c.step == Coordination::kResolving) return schedule_change();
    if (c.step == Coordination::kPreparing || c.fatal ||
        (c.step != Coordination::kCommitting && ++c.failures >= kFailureLimit)) {
      return finish_change(c.failure);
    }
    spdlog::warn("ring change to version {}: {}; retrying", c.version, c.failure);
    return schedule_change();
  }
  switch (c.step) {
    case Coordination::kResolving:
      return next(c.some_committed ? Coordination::kCommitting : Coordination::kPreparing);
    case Coordination::kPreparing:
      // Every member accepted the new ring version: the command's reply; keys move now.
      if (c.done) c.done("+OK\r\n");
      c.done = nullptr;
      return next(Coordination::kCopying);
    case Coordination::kCopying:
      if (c.round_ready) return next(Coordination::kPausing);
      return schedule_change();
    case Coordination::kPausing:
      stop_if_asked(self_, "paused");
      return next(Coordination::kQuiescing);
    case Coordination::kQuiescing:
      if (c.round_ready) return next(Coordination::kFlushing);
      return schedule_change();
    case Coordination::kFlushing:
      return next(Coordination::kFlushWait);
    case Coordination::kFlushWait:
      if (c.round_ready) {
        stop_if_asked(self_, "flushed");
        return next(Coordination::kCommitting);
      }
      return schedule_change();
    case Coordination::kCommitting:
      // The others committed: now this node (see drive_change).
      if (std::find(c.committed.begin(), c.committed.end(), false) != c.committed.end()) {
        return drive_change();
      }
      return finish_change({});
    case Coordination::kLeaseWait:
      return;
  }
}

void Cluster::failover_round_done() {
  // A majority of the members decides; the others learn how it ended from this node (or from
  // any member, by their ring version) once they answer again.
  Coordination& c = *change_;
  const uint64_t now = uv_now(loop_);
  // A member that asked to be failed over (restarted with stale keys) agrees and serves
  // nothing meanwhile: its votes count, so that 2 members fail one over when it asks.
  size_t asked = 0;
  for (const std::string& a : c.requested) asked += votes_of(a);
  const size_t majority = votes_needed() - std::min(asked, votes_needed() - 1);
  size_t committed = 0;
  for (size_t i = 0; i < c.committed.size(); ++i) {
    if (c.committed[i]) committed += votes_of(c.participants[i]);
  }
  switch (c.step) {
    case Coordination::kResolving: {
      // Only its participants vote for it: if they cannot make a majority between them, no
      // prepare round ever passed, so no member committed it, and it is aborted even though it
      // was taken up again (it fails over so many members that too few are left to vote). After
      // the first round, not at once: until then the coordinator takes part in no other change
      // while its members start.
      const size_t possible = votes_left(c.failed);
      if (possible < majority) {
        c.taken_over = false;
        return finish_change("failing over " + members_list_text(c.failed) + ": its " +
                             std::to_string(possible) + " participating votes cannot make the " +
                             std::to_string(majority) + " needed");
      }
      if (c.round_ok < majority) return schedule_change();
      c.nobody_committed = !c.some_committed && c.round_ok == possible;
      c.step = c.some_committed ? Coordination::kCommitting : Coordination::kPreparing;
      break;
    }
    case Coordination::kPreparing:
      if (c.fatal) {
        // Tried again only after a pause: nothing but the member's return mends it.
        failover_retry_at_ms_ = now + kVetoPauseMs;
        return finish_change("failing over " + members_list_text(c.failed) +
                             " refused: " + c.failure);
      }
      if (c.round_ok < majority) {
        // A change taken over from a failed coordinator: the others may not see that one down
        // yet (their health checks run on their own clocks).
        if (c.taken_over && ++c.failures < kFailureLimit) return schedule_change();
        // Nobody committed it (see nobody_committed): aborted, though taken up again. Else a
        // coordinator restarted with it in its ring file, whose failed members answer again,
        // would take it up every second, for good.
        if (c.nobody_committed) c.taken_over = false;
        return finish_change("failing over " + members_list_text(c.failed) + ": " +
                             std::to_string(c.round_ok) + " of the " +
                             std::to_string(votes_total()) +
                             " votes agreed, a majority is needed (" + c.failure + ")");
      }
      // Every member that agreed stopped granting the failed member its lease; once that lease
      // has surely ended nobody else serves its keys (a cache too: no stale reads from a node
      // that was only hung). A member that asked for it serves nothing meanwhile.
      c.step = Coordination::kLeaseWait;
      c.step_started_ms = now + (c.requested.empty() ? lease_ms_ : 0);
      stop_if_asked(self_, "failover-prepared");
      break;
    case Coordination::kCommitting:
      if (committed >= majority) return finish_change({});
      if (++c.failures >= kFailureLimit) {
        // The change stays committed where it was: the rest catch up by the ring version.
        return finish_change({});
      }
      return schedule_change();
    default:
      return finish_change("unexpected step of a failover");
  }
  c.failures = 0;
  drive_change();
}

}  // namespace ringkv::cluster
