// Cluster: live membership — the persisted ring, a change's participant side (RINGKV.RING
// control frames) and its coordinator (CLUSTER JOIN / LEAVE / SETWEIGHT). See membership.h.
#include "cluster/membership.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"
#include "cluster/ring_file.h"
#include "common/numbers.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// How often the coordinator looks at its participants while a change runs.
constexpr uint64_t kDriveMs = 20;
// A pause (or flush) that has not taken hold everywhere by then aborts the change.
constexpr uint64_t kPauseLimitMs = 10000;
// Consecutive failed rounds (a participant unreachable) before a change aborts.
constexpr int kFailureLimit = 50;

constexpr std::string_view kPhaseNames[] = {"idle", "prepared", "paused", "switching"};

std::string members_text(const std::vector<hashring::Member>& members) {
  std::string out;
  for (const auto& m : members) {
    if (!out.empty()) out += ' ';
    out += m.address + "=" + std::to_string(m.weight);
  }
  return out;
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

// A node's answer to RINGKV.RING STATE (and COPY), one simple string:
//   +<version> <phase> <copied> <flushed> <relays in flight> <keys> <members> <pending version>
//    <coordinating>
struct ChangeState {
  uint64_t version = 0;    // the ring it runs by
  std::string_view phase;  // idle, prepared, paused or switching
  char copied = '1';       // '1' done (or nothing to copy), '0' going on, 'x' failed or unknown
  bool flushed = true;     // the flush was sent and acknowledged (or nothing to flush)
  uint64_t in_flight = 0;  // relayed requests awaiting replies
  uint64_t keys = 0;       // keys it holds
  uint64_t members = 0;    // members of its ring
  uint64_t pending = 0;    // the version a prepared change moves to; 0 for none
  bool coordinating = false;

  std::string text() const {
    return "+" + std::to_string(version) + " " + std::string(phase) + " " + copied + " " +
           (flushed ? "1" : "0") + " " + std::to_string(in_flight) + " " + std::to_string(keys) +
           " " + std::to_string(members) + " " + std::to_string(pending) + " " +
           (coordinating ? "1" : "0") + "\r\n";
  }

  static std::optional<ChangeState> parse(std::string_view reply) {
    if (reply.empty() || reply[0] != '+') return std::nullopt;
    const std::vector<std::string_view> w = common::split_words(line_text(reply));
    if (w.size() != 9 || w[2].size() != 1) return std::nullopt;
    // The numeric words: version, relays in flight, keys, members, pending version.
    constexpr size_t kAt[] = {0, 4, 5, 6, 7};
    uint64_t n[std::size(kAt)];
    for (size_t i = 0; i < std::size(kAt); ++i) {
      const std::optional<int64_t> v = common::parse_integer(w[kAt[i]]);
      if (!v || *v < 0) return std::nullopt;
      n[i] = static_cast<uint64_t>(*v);
    }
    ChangeState s;
    s.version = n[0];
    s.phase = w[1];
    s.copied = w[2][0];
    s.flushed = w[3] == "1";
    s.in_flight = n[1];
    s.keys = n[2];
    s.members = n[3];
    s.pending = n[4];
    s.coordinating = w[8] == "1";
    return s;
  }
};

// The text of a failed control request: an error reply's, or the link's error.
std::string failure_text(std::string_view reply) {
  return std::string(!reply.empty() && reply[0] == '-' ? line_text(reply) : reply);
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
  if (!ring_.contains(self_)) ring_.set_members(std::vector<hashring::Member>{{self_, 1}});
  ring_version_ = state->version;
  if (state->pending_version != 0) {
    pending_version_ = state->pending_version;
    pending_.emplace(ring_.scheme(), ring_.replicas());
    pending_->set_members(state->pending_members);
    pending_coordinator_ = state->coordinator;
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
  if (pending_) {
    state.pending_version = pending_version_;
    state.pending_members.assign(pending_->nodes().begin(), pending_->nodes().end());
    state.coordinator = pending_coordinator_;
  }
  std::string error = write_ring_file(ring_path_, state);
  if (!error.empty()) spdlog::error("cannot persist the ring: {}", error);
}

void Cluster::set_host(MembershipHost* host) {
  host_ = host;
  // Leftovers of a change this node committed but had not finished deleting when it stopped.
  // (With a change prepared the copy starts again when its coordinator says so.)
  if (host_ != nullptr && !pending_) host_->copy_end(ring_, self_);
}

void Cluster::apply_ring(std::vector<hashring::Member> members, uint64_t version) {
  previous_fingerprint_ = ring_.fingerprint();
  const bool member = std::any_of(members.begin(), members.end(),
                                  [&](const hashring::Member& m) { return m.address == self_; });
  // A node that left is an empty ring of its own (it may join a cluster again).
  if (!member) members = {{self_, 1}};
  ring_.set_members(members);
  ring_version_ = version;
  index_peers();
  for (auto& [address, p] : known_peers_) {
    if (!ring_.contains(address)) p->pool.close(LinkErrorKind::kShutdown);
  }
  rebuild_routing();
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
  pending_version_ = 0;
  pending_coordinator_.clear();
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
  for (const auto& [id, t] : transaction_links_) n += t.link->in_flight();
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
  s.flushed = progress.flushed;
  s.in_flight = relays_in_flight();
  s.keys = host_ ? host_->key_count() : 0;
  s.members = ring_.size();
  s.pending = pending_version_;
  s.coordinating = change_ != nullptr;
  return s.text();
}

std::string Cluster::ring_control(std::span<const std::string_view> args) {
  auto error = [](std::string_view text) { return "-ERR " + std::string(text) + "\r\n"; };
  if (args.empty()) return error("RINGKV.RING needs a subcommand");
  const std::string_view sub = args[0];
  if (common::equals_ignore_case(sub, "state")) return state_text();
  const std::optional<int64_t> parsed =
      args.size() < 2 ? std::nullopt : common::parse_integer(args[1]);
  if (!parsed || *parsed < 1) return error("RINGKV.RING needs a version");
  const uint64_t version = static_cast<uint64_t>(*parsed);
  if (common::equals_ignore_case(sub, "prepare")) {
    if (args.size() < 4) return error("RINGKV.RING PREPARE needs the ring it changes");
    std::vector<hashring::Member> members;
    for (size_t i = 4; i < args.size(); ++i) {
      std::optional<hashring::Member> m = hashring::parse_member(args[i]);
      if (!m) return error("bad member " + std::string(args[i]));
      members.push_back(*m);
    }
    if (members.empty()) return error("a ring needs members");
    if (phase_ != Phase::kIdle) {
      // A retried prepare of the same change; not a new change that reuses the version of one
      // that was aborted without this node hearing of it (recover() learns that soon).
      if (pending_version_ == version && pending_coordinator_ == args[3] &&
          std::equal(members.begin(), members.end(), pending_->nodes().begin(),
                     pending_->nodes().end())) {
        return "+OK\r\n";
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
      return error("ring version " + std::to_string(version) + " does not follow this node's " +
                   std::to_string(ring_version_));
    }
    pending_version_ = version;
    pending_.emplace(ring_.scheme(), ring_.replicas());
    pending_->set_members(members);
    // The members still on the old ring link with this node until the change ends.
    change_from_fingerprint_ = std::string(args[2]);
    pending_coordinator_ = std::string(args[3]);
    phase_ = Phase::kPrepared;
    save_ring();
    spdlog::info("ring change to version {} prepared: {}", version, members_text(members));
    return "+OK\r\n";
  }
  const bool ours = pending_ && pending_version_ == version;
  if (common::equals_ignore_case(sub, "copy")) {
    // Sent once every member prepared (a target takes copies only then), and again with every
    // poll of the copy step: the first starts the copy; each answers the state.
    if (!ours) return error("no ring change to version " + std::to_string(version) + " here");
    if (!copy_started_ && host_) {
      copy_started_ = true;
      host_->copy_start(*pending_, pending_version_, self_);
    }
    return state_text();
  }
  if (common::equals_ignore_case(sub, "pause") || common::equals_ignore_case(sub, "flush")) {
    if (!ours) return error("no ring change to version " + std::to_string(version) + " here");
    if (common::equals_ignore_case(sub, "pause")) {
      if (phase_ == Phase::kPrepared) phase_ = Phase::kPaused;
    } else if (phase_ != Phase::kSwitching) {
      phase_ = Phase::kSwitching;
      if (host_) host_->copy_flush();
    }
    return "+OK\r\n";
  }
  if (common::equals_ignore_case(sub, "commit")) {
    if (!ours) {
      if (ring_version_ >= version) return "+OK\r\n";  // already committed
      return error("no ring change to version " + std::to_string(version) + " here");
    }
    // The new ring decides what this node deletes (a node that left owns nothing in it).
    const hashring::HashRing owners = std::move(*pending_);
    end_pending();
    std::vector<hashring::Member> members(owners.nodes().begin(), owners.nodes().end());
    apply_ring(members, version);
    save_ring();
    spdlog::info("ring version {} committed: {}", version, members_text(members));
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
    // A node that was joining gives back everything it received: it is an empty node again.
    const bool joining = joining_here();
    end_pending();
    save_ring();
    spdlog::warn("ring change to version {} aborted", version);
    close_migration_links();
    if (host_) {
      host_->copy_end(joining ? hashring::HashRing(ring_.scheme(), ring_.replicas()) : ring_,
                      self_);
      host_->release_held();
    }
    return "+OK\r\n";
  }
  return error("unknown RINGKV.RING subcommand");
}

void Cluster::recover() {
  if (!pending_ || change_) return;
  if (recovering_ && (pending_coordinator_ == self_ || pending_coordinator_.empty())) {
    // This node coordinated the change and restarted: it takes it up again. Whether some member
    // committed decides the way: forward to the commit, or the whole change again from the
    // prepare (every step is idempotent).
    auto c = std::make_unique<Coordination>();
    c->version = pending_version_;
    c->members.assign(pending_->nodes().begin(), pending_->nodes().end());
    for (const auto& m : ring_.nodes()) c->participants.push_back(m.address);
    for (const auto& m : pending_->nodes()) {
      if (!ring_.contains(m.address)) c->participants.push_back(m.address);
    }
    c->step = Coordination::kResolving;
    c->prepare_sent = true;
    c->step_started_ms = uv_now(loop_);
    change_ = std::move(c);
    spdlog::warn("resuming the ring change to version {}", pending_version_);
    drive_change();
    return;
  }
  if (pending_coordinator_ == self_ || pending_coordinator_.empty()) return;
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
              spdlog::warn("the ring change to version {} was committed by its coordinator",
                           version);
              const std::string_view args[] = {"COMMIT", v};
              ring_control(args);
            } else if (theirs->phase == "idle" && !theirs->coordinating) {
              spdlog::warn("the ring change to version {} was aborted by its coordinator", version);
              const std::string_view args[] = {"ABORT", v};
              ring_control(args);
            }
          });
}

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
  // Every member must take part: none may be down or refusing links (except a forced leaver).
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
      drive_change();
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
    // Nothing is committed anywhere: every participant drops the change.
    if (c.prepare_sent) {
      for (const auto& a : c.participants) {
        control(a, {"RINGKV.RING", "ABORT", std::to_string(c.version)},
                [](std::string_view, bool) {});
      }
    }
    if (c.done) c.done(error_reply("ERR " + error));
  } else {
    spdlog::info("ring change to version {} done", c.version);
    last_change_ = "ok";
  }
  change_.reset();
  uv_timer_stop(&change_timer_);
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
  std::vector<std::string> args{"RINGKV.RING"};
  switch (c.step) {
    case Coordination::kPreparing:
      args.push_back("PREPARE");
      args.push_back(std::to_string(c.version));
      args.push_back(fingerprint_hex(ring_.fingerprint()));
      args.push_back(self_);
      for (const auto& m : c.members) args.push_back(m.address + "=" + std::to_string(m.weight));
      c.prepare_sent = true;
      break;
    case Coordination::kCopying:
      args.insert(args.end(), {"COPY", std::to_string(c.version)});
      break;
    case Coordination::kResolving:
    case Coordination::kQuiescing:
    case Coordination::kFlushWait:
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
  const auto& parts = c.participants;
  if (c.committed.size() != parts.size()) c.committed.assign(parts.size(), false);
  c.round_ready = true;
  c.round_failed = false;
  c.failure.clear();
  const Coordination::Step step = c.step;
  const bool committing = step == Coordination::kCommitting;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!committing || !c.committed[i]) ++c.waiting;
  }
  const uint64_t version = c.version;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (committing && c.committed[i]) continue;
    control(parts[i], args, [this, i, step, version](std::string_view reply, bool ok) {
      if (!change_ || change_->version != version || change_->step != step) return;
      Coordination& cc = *change_;
      if (!ok) {
        cc.round_failed = true;
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
    });
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
      return next(Coordination::kQuiescing);
    case Coordination::kQuiescing:
      if (c.round_ready) return next(Coordination::kFlushing);
      return schedule_change();
    case Coordination::kFlushing:
      return next(Coordination::kFlushWait);
    case Coordination::kFlushWait:
      if (c.round_ready) return next(Coordination::kCommitting);
      return schedule_change();
    case Coordination::kCommitting:
      return finish_change({});
  }
}

}  // namespace ringkv::cluster
