// Replication: the primary's streams to its replicas and the replica's view of its primaries
// (see replication.h).
#include "cluster/replication.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/frame_keys.h"
#include "cluster/frame_log.h"
#include "cluster/replication_stream.h"
#include "common/numbers.h"
#include "common/secret.h"
#include "engine/command.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// Reconnect delays after a stream's link failed.
constexpr uint64_t kStreamMinBackoffMs = 50;
constexpr uint64_t kMaxBackoffMs = 1000;
// How often deadlines and reconnects are looked at.
constexpr uint64_t kTickMs = 10;
// A replica that leaves this much unacknowledged is dropped (it copies again once it is back),
// as Redis's client-output-buffer-limit for replicas.
constexpr uint64_t kMaxUnackedBytes = 256ull << 20;
// Frames a full copy may have outstanding before it waits for acknowledgements.
constexpr uint64_t kSnapshotWindow = 2048;
constexpr uint64_t kSnapshotWindowBytes = 8ull << 20;
// A stream's frames that nothing waits for (replica-acks 0) go out `repl-batch-ms` after the
// first of them, in one write with those made meanwhile, or once this much is queued: with one
// write per loop iteration, a busy primary wrote each stream almost once per write it made.
constexpr size_t kBatchBytes = 64u << 10;
// When nothing waits for them, a replica is asked for its offset at most this often.
constexpr uint64_t kAskEveryMs = 10;
constexpr std::string_view kGetAckFrame = "*2\r\n$11\r\nRINGKV.REPL\r\n$6\r\nGETACK\r\n";

std::string request(std::span<const std::string_view> args) {
  std::string f;
  protocol::append_request(f, args);
  return f;
}

std::string request(std::initializer_list<std::string_view> args) {
  return request(std::span<const std::string_view>(args.begin(), args.size()));
}

constexpr std::string_view kMultiFrame = "*1\r\n$5\r\nMULTI\r\n";

}  // namespace

void Replication::part_done(const std::shared_ptr<Waiter>& w, size_t part, bool acked) {
  w->parts[part] = acked ? Waiter::Part::kAcked : Waiter::Part::kLost;
  check_waiter(w);
}

void Replication::check_waiter(const std::shared_ptr<Waiter>& w) {
  size_t n = 0;
  while (n < w->parts.size() && w->parts[n] == Waiter::Part::kAcked) n++;
  w->acked = n;
  while (n < w->parts.size() && w->parts[n] != Waiter::Part::kLost) n++;
  w->reachable = n;
  if (w->acked >= w->need || (w->give_up && w->reachable < w->need)) fire(w);
}

void Replication::fire(const std::shared_ptr<Waiter>& w) {
  if (w->fired) return;
  w->fired = true;
  auto keep = w;  // erasing its entry must not destroy it while it runs
  waiters_.erase(w->pos);
  auto cb = std::move(keep->done);
  cb(keep->acked, keep->acked >= keep->need);
}

Replication::Replication(Env env, std::string self, size_t factor, size_t backlog_bytes,
                         uint64_t batch_ms)
    : env_(std::move(env)),
      self_(std::move(self)),
      factor_(std::max<size_t>(1, factor)),
      backlog_limit_(backlog_bytes),
      batch_ms_(batch_ms) {}

Replication::~Replication() = default;

void Replication::start() {
  if (!enabled() || started_) return;
  started_ = true;
  uv_timer_init(env_.loop, &timer_);
  timer_.data = this;
  uv_timer_start(
      &timer_, [](uv_timer_t* t) { static_cast<Replication*>(t->data)->tick(); }, kTickMs, kTickMs);
  uv_timer_init(env_.loop, &flush_timer_);
  flush_timer_.data = this;
}

void Replication::stop() {
  if (!started_) return;
  // What the streams queued still goes out: a replica may be promoted with it.
  for (auto& [address, s] : streams_) write_queued(*s);
  started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_timer_), nullptr);
  for (auto& [address, s] : streams_) {
    if (s->link) s->link->close(LinkErrorKind::kShutdown);
  }
}

void Replication::write_queued(Stream& s) {
  if (s.state == Stream::State::kOnline && s.link->needs_flush()) s.link->flush();
}

bool Replication::awaited(const Stream& s) {
  return !s.waiting.empty() || !s.waiting_copy.empty() || s.snapshot || s.resuming ||
         s.acked < s.synced_offset || s.acked < s.drain_offset;
}

void Replication::flush() {
  const uint64_t now = started_ ? uv_now(env_.loop) : 0;
  bool left = false;
  for (auto& [address, s] : streams_) {
    if (!s->link) continue;
    const bool urgent = draining_ || awaited(*s);
    bool asked = false;
    if (s->state == Stream::State::kOnline && s->sent > s->asked &&
        s->link->state() == PeerLink::State::kReady &&
        (urgent || now >= s->asked_ms + kAskEveryMs)) {
      // Not a frame of the stream: the replica answers it with the offset it ran up to.
      s->link->frame_buffer().append(kGetAckFrame);
      s->asked = s->sent;
      s->asked_ms = now;
      asked = true;
    }
    if (!s->link->needs_flush()) continue;
    if (urgent || asked || s->state != Stream::State::kOnline ||
        s->link->frame_buffer().size() >= kBatchBytes || now >= s->queued_ms + batch_ms_) {
      s->link->flush();
    } else {
      left = true;
    }
  }
  if (left && started_ && !uv_is_active(reinterpret_cast<uv_handle_t*>(&flush_timer_))) {
    uv_timer_start(
        &flush_timer_, [](uv_timer_t* t) { static_cast<Replication*>(t->data)->flush(); },
        batch_ms_, 0);
  }
}

Replication::Stream* Replication::stream_to(std::string_view address) const {
  auto it = streams_.find(address);
  return it == streams_.end() ? nullptr : it->second.get();
}

std::vector<std::string> Replication::compute_targets() const {
  // With multi-probe hashing any member may follow this node in some key's preference list: a
  // stream to each (one that replicates none of its keys stays idle).
  std::vector<std::string> targets;
  if (self_index_ == hashring::HashRing::kNoNode) return targets;
  for (const auto& m : routing_.nodes()) {
    if (m.address != self_) targets.push_back(m.address);
  }
  return targets;
}

void Replication::set_routing(const hashring::HashRing& routing, uint64_t version,
                              const hashring::HashRing& members) {
  if (!enabled()) return;
  const bool changed = routing.fingerprint() != routing_.fingerprint() || version != ring_version_;
  if (changed) {
    previous_routing_ = std::move(routing_);
    previous_version_ = ring_version_;
    previous_self_index_ = previous_routing_.index_of(self_);
  }
  if (changed) note_removed_copies(routing);
  routing_ = routing;
  ring_version_ = version;
  self_index_ = routing_.index_of(self_);
  live_history_.try_emplace(version, routing_.nodes().begin(), routing_.nodes().end());
  constexpr size_t kHistory = 32;
  while (live_history_.size() > kHistory) live_history_.erase(live_history_.begin());
  if (!changed) return index_streams();
  const std::vector<std::string> targets = compute_targets();
  // Streams closed by the change before this one and not opened again now are done with.
  std::map<std::string, std::unique_ptr<Stream>, std::less<>> parked;
  parked.swap(parked_);
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (std::find(targets.begin(), targets.end(), it->first) == targets.end()) {
      Stream& s = *it->second;
      spdlog::info("replication: {} no longer replicates keys of this node", s.target);
      if (host_ && s.snapshot) host_->snapshot_stop(s.target);
      // What the connection holds still goes out: the replica may resume from it later.
      write_queued(s);
      link_failed(s, "no longer a replica of this node's keys");
      s.snapshot = false;
      abandon_waits(s);
      streams_by_id_.erase(s.id);
      // Failed over (it, or this node): kept, for a restore to open it again.
      const bool self_failed =
          self_index_ == hashring::HashRing::kNoNode && members.contains(self_);
      if (members.contains(s.target) && (!routing_.contains(s.target) || self_failed)) {
        s.parked_next = self_failed ? s.next : 0;
        parked_[s.target] = std::move(it->second);
      }
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
  if (!parked_.empty()) {
    parked_at_ = version;
    parked_from_ = previous_version_;
  }
  for (const std::string& t : targets) {
    if (auto* s = stream_to(t)) {
      // The replica holds other keys now: the stream opens again under the new ring (the
      // replica keeps its copy when it has every frame made before this one, so what this
      // connection holds still goes out: writes peers that switched first relayed here).
      write_queued(*s);
      link_failed(*s, "the ring changed");
      s->retry_at_ms = 0;
      s->ring_from = s->next;
      continue;
    }
    auto it = parked.find(t);
    if (it != parked.end() && unpark(*it->second)) {
      streams_by_id_[it->second->id] = it->second.get();
      streams_.emplace(t, std::move(it->second));
      continue;
    }
    auto s = std::make_unique<Stream>();
    s->id = next_stream_id_++;
    s->target = t;
    streams_by_id_[s->id] = s.get();
    spdlog::info("replication: {} replicates keys of this node", t);
    streams_.emplace(t, std::move(s));
  }
  index_streams();
}

void Replication::index_streams() {
  stream_by_node_.assign(routing_.nodes().size(), nullptr);
  for (size_t i = 0; i < routing_.nodes().size(); ++i) {
    stream_by_node_[i] = stream_to(routing_.nodes()[i].address);
  }
}

void Replication::abandon_waits(Stream& s) {
  // Its acknowledgements will not come: a wait that needs them ends now, not at its deadline.
  std::deque<WaitEntry> waiting;
  waiting.swap(s.waiting);
  waiting.insert(waiting.end(), s.waiting_copy.begin(), s.waiting_copy.end());
  s.waiting_copy.clear();
  for (const WaitEntry& e : waiting) {
    std::shared_ptr<Waiter> w = e.waiter.lock();
    if (w && !w->fired) part_done(w, e.part, false);
  }
}

void Replication::peer_state_changed(const std::string& address, bool up) {
  Stream* s = stream_to(address);
  if (s == nullptr) return;
  if (!up) {
    link_failed(*s, "peer down");
    abandon_waits(*s);
  } else {
    s->backoff_ms = 0;
    s->retry_at_ms = 0;
  }
}

bool Replication::replicas_of(std::string_view key, std::vector<std::string_view>& targets) const {
  targets.clear();
  std::vector<size_t> pref;
  routing_.preference(key, factor_, pref);
  if (pref.empty() || pref[0] != self_index_) return false;
  for (size_t k = 1; k < pref.size(); ++k) targets.push_back(routing_.nodes()[pref[k]].address);
  return true;
}

void Replication::feed(int db, std::span<const std::string_view> argv,
                       const engine::CommandSpec* spec) {
  if (!enabled() || streams_.empty() || argv.empty()) return;
  if (spec == nullptr) {
    std::string error;
    spec = engine::resolve_command(argv, error);
    if (spec == nullptr) return;
  }
  // What the cluster runs on every node (FUNCTION LOAD, DELETE, RESTORE, FLUSH: fanned out, and
  // given to a member that joins) reaches each replica by itself. Streamed too, it would run
  // twice there: a second LOAD is refused, and a refused frame makes the primary copy
  // everything again.
  if (spec->flags & engine::kClusterWide) return;
  std::vector<size_t>& keys = key_scratch_;
  engine::key_positions(*spec, argv, keys);
  if (keys.empty()) {
    // FLUSHALL / FLUSHDB: each replica drops what it holds of this node's keys (other primaries'
    // keys there are theirs to flush), in every database or in this one. Any other keyless
    // record goes everywhere, and concerns every key: each stream's acknowledgement counts.
    if (ticket_depth_ > 0) ticket_.mixed = true;
    const bool flush = spec->name == "flushall" || spec->name == "flushdb";
    const std::string db_text = std::to_string(db);
    const std::string frame = !flush ? request(argv)
                              : spec->name == "flushall"
                                  ? request({"RINGKV.REPL", "FLUSH"})
                                  : request({"RINGKV.REPL", "FLUSH", db_text});
    for (auto& [address, s] : streams_) {
      if (flush && s->in_block) {
        // Not queued inside the replica's MULTI: the block is closed around it.
        append(*s, request({"EXEC"}));
        append(*s, frame);
        append(*s, request({"MULTI"}));
        s->block_db = 0;
      } else if (flush) {
        append(*s, frame);
      } else {
        append_record(*s, db, frame);
      }
    }
    return;
  }
  // The replica set of the first key this node is the primary of; any other set makes it mixed.
  std::vector<size_t>& first = first_scratch_;
  std::vector<size_t>& pref = scratch_;
  first.clear();
  bool mixed = false;
  size_t ours = 0;
  for (size_t pos : keys) {
    routing_.preference(argv[pos], factor_, pref);
    if (pref.empty() || pref[0] != self_index_) {
      // Not this node's (a leftover deleted, a replica's copy expiring): nothing to send.
      mixed = true;
      continue;
    }
    ours++;
    if (first.empty()) {
      first = pref;
    } else if (first != pref) {
      mixed = true;
    }
  }
  if (ours == 0) return;
  if (!mixed) {
    if (first.size() < 2) return;
    std::string& frame = frame_scratch_;
    frame.clear();
    protocol::append_request(frame, argv);
    for (size_t k = 1; k < first.size(); ++k) {
      if (Stream* s = stream_by_node_[first[k]]) append_record(*s, db, frame);
    }
    return;
  }
  // Each key's state after the write, to that key's replicas.
  if (ticket_depth_ > 0) ticket_.mixed = true;
  std::vector<std::string_view> targets;
  for (size_t pos : keys) {
    const std::string_view key = argv[pos];
    if (!replicas_of(key, targets)) continue;
    for (std::string_view t : targets) {
      Stream* s = stream_to(t);
      if (s == nullptr || host_ == nullptr) continue;
      std::string frame;
      const int key_db = key_database(*spec, argv, pos, db);
      host_->append_key_frame(key_db, key, frame);
      append_record(*s, key_db, frame);
    }
  }
}

void Replication::append_record(Stream& s, int db, std::string_view frame) {
  if (block_depth_ == 0) {
    if (db == 0) return append(s, frame);  // database 0 needs no prefix
    append(s, prefixed_frame({.db = db}, frame));
    return;
  }
  // Queued in the replica's MULTI, a RINGKV.DB prefix would be lost: the block SELECTs instead
  // (the replica's EXEC frame runs in database 0, where its queued commands start).
  if (!s.in_block) s.block_db = 0;  // the next append opens the block's MULTI
  if (s.block_db != db) {
    append(s, request({"SELECT", std::to_string(db)}));
    s.block_db = db;
  }
  append(s, frame);
}

void Replication::begin_block() { block_depth_++; }

void Replication::end_block() {
  if (--block_depth_ > 0) return;
  for (auto& [address, s] : streams_) {
    if (!s->in_block) continue;
    s->in_block = false;
    append(*s, request({"EXEC"}));
  }
}

void Replication::append(Stream& s, std::string_view bytes) {
  if (block_depth_ > 0 && !s.in_block) {
    s.in_block = true;
    append(s, kMultiFrame);
  }
  // The first frame outstanding: the replica's silence counts from now (lag, a stalled replica).
  if (s.acked + 1 == s.next) s.last_ack_ms = uv_now(env_.loop);
  const uint64_t offset = s.next++;
  if (s.state == Stream::State::kOnline) write_frame(s, offset, bytes);
  s.backlog.push(bytes, backlog_limit_);
  if (ticket_depth_ > 0) {
    auto it = std::find_if(ticket_.parts.begin(), ticket_.parts.end(),
                           [&](const auto& p) { return p.first == s.id; });
    if (it == ticket_.parts.end()) {
      ticket_.parts.emplace_back(s.id, offset);
    } else {
      it->second = offset;
    }
  }
}

void Replication::write_frame(Stream& s, uint64_t offset, std::string_view bytes) {
  // A link reconnects by itself when used again; a stream's connection must not: a new one
  // starts with HELLO.
  if (s.link->state() != PeerLink::State::kReady) return link_failed(s, "connection closed");
  // The replica does not answer each frame: it acknowledges what it ran when asked (see flush
  // and on_stream_message).
  if (s.link->frame_buffer().empty()) s.queued_ms = uv_now(env_.loop);
  s.link->frame_buffer().append(bytes);
  s.sent = offset;
  s.unacked_sizes.push_back(static_cast<uint32_t>(bytes.size()));
  s.unacked_bytes += bytes.size();
  if (s.unacked_bytes > std::max<uint64_t>(kMaxUnackedBytes, 8 * backlog_limit_)) {
    link_failed(s, "too far behind");
  }
}

void Replication::on_stream_message(Stream& s, std::string_view message) {
  if (!message.empty() && message[0] == ':') {
    // ":<offset>": the replica ran the stream's frames up to this offset.
    const std::optional<uint64_t> offset =
        common::parse_unsigned(message.substr(1, message.size() >= 3 ? message.size() - 3 : 0));
    if (offset && *offset >= s.acked && *offset <= s.sent) return acked(s, *offset);
  }
  const std::string_view text = message.substr(0, std::min<size_t>(message.size(), 200));
  // The replica's ring no longer routes keys to this node: it ran nothing more, and keeps its
  // copy as the ring change found it (a restore may resume from it). The stream stays as it is.
  if (message.starts_with(kRemovedError)) {
    spdlog::warn("replication: {}: {}", s.target, text);
    return link_failed(s, "the replica's ring no longer routes keys to this node");
  }
  // A refusal (the replica's copy differs from this node's, or its ring does) or anything
  // else: it copies everything again under a new stream id.
  const bool refused = !message.empty() && message[0] == '-';
  spdlog::error("replication: {} {}: {}", s.target,
                refused ? "refused a write" : "sent an unexpected message", text);
  s.replid = random_replid();
  link_failed(s, refused ? "a write was refused" : "unexpected message from the replica");
}

void Replication::acked(Stream& s, uint64_t offset) {
  for (; s.acked < offset && !s.unacked_sizes.empty(); s.acked++) {
    s.unacked_bytes -= std::min<uint64_t>(s.unacked_bytes, s.unacked_sizes.front());
    s.unacked_sizes.pop_front();
  }
  s.acked = std::max(s.acked, offset);
  s.last_ack_ms = uv_now(env_.loop);
  if (s.synced_offset != 0 && s.acked >= s.synced_offset) {
    spdlog::info("replication: {} has a full copy of its keys", s.target);
    copy_ended(s);
  }
  if (s.snapshot && host_ != nullptr && has_room(s.target)) host_->stream_ready(s.target);
  while (!s.waiting.empty() && s.waiting.front().offset <= s.acked) {
    const WaitEntry e = std::move(s.waiting.front());
    s.waiting.pop_front();
    std::shared_ptr<Waiter> w = e.waiter.lock();
    if (w && !w->fired) part_done(w, e.part, true);
  }
}

void Replication::copy_ended(Stream& s) {
  s.synced = true;
  s.gaining = false;
  s.synced_offset = 0;
  std::deque<WaitEntry> waiting;
  waiting.swap(s.waiting_copy);
  for (const WaitEntry& e : waiting) {
    std::shared_ptr<Waiter> w = e.waiter.lock();
    if (w && !w->fired) part_done(w, e.part, true);
  }
}

void Replication::link_failed(Stream& s, std::string_view why) {
  if (s.state == Stream::State::kDisconnected) return;
  if (s.last_failure != why) {
    spdlog::warn("replication: stream to {} interrupted: {}", s.target, why);
    s.last_failure = std::string(why);
  }
  s.state = Stream::State::kDisconnected;
  s.gen++;
  // Possibly inside one of the link's own callbacks: closed and destroyed at the next tick.
  if (s.link) retired_.push_back(std::move(s.link));
  s.unacked_sizes.clear();
  s.unacked_bytes = 0;
  s.in_block = false;
  s.backoff_ms = std::min(kMaxBackoffMs, std::max(kStreamMinBackoffMs, s.backoff_ms * 2));
  s.retry_at_ms = uv_now(env_.loop) + s.backoff_ms;
}

void Replication::connect(Stream& s) {
  if (!env_.peer_up(s.target)) return;
  s.gen++;
  s.link = env_.make_link(s.target);
  s.state = Stream::State::kHello;
  s.hello_next = s.next;
  const uint64_t first = s.backlog.empty() ? s.next : s.backlog.first();
  s.link->send(request({"RINGKV.REPL", "HELLO", self_, s.replid, std::to_string(ring_version_),
                        std::to_string(first), std::to_string(s.next), std::to_string(s.ring_from),
                        std::to_string(previous_version_)}),
               [this, id = s.id, gen = s.gen](std::string_view reply, const LinkError* error) {
                 auto it = streams_by_id_.find(id);
                 if (it == streams_by_id_.end() || it->second->gen != gen) return;
                 if (error != nullptr) return link_failed(*it->second, error->reason());
                 on_hello_reply(*it->second, gen, reply);
               });
  s.link->flush();
}

void Replication::on_hello_reply(Stream& s, uint64_t gen, std::string_view reply) {
  std::string_view text = reply.size() >= 3 ? reply.substr(1, reply.size() - 3) : reply;
  uint64_t from = 0;
  bool full = false;
  // +GAIN: continues, and the keys the replica gained in the ring change follow. +RESUME (a
  // stream opened again after its replica was restored): continues, and the keys written
  // while it was away follow.
  const bool resume = reply.starts_with("+RESUME ");
  if (resume && !s.resuming) {
    s.replid = random_replid();
    return link_failed(s, "the replica resumes a stream this node did not open again");
  }
  const bool gain = reply.starts_with("+GAIN ") || resume;
  if (gain || reply.starts_with("+CONTINUE ")) {
    // "<word> <offset>"
    const std::optional<uint64_t> n = common::parse_unsigned(text.substr(text.find(' ') + 1));
    if (!n || *n + 1 < s.backlog.first() || *n >= s.next ||
        (gain && !resume && *n + 1 < s.ring_from)) {
      s.replid = random_replid();
      return link_failed(s, "the replica's offset is not in the backlog");
    }
    if (resume && s.parked_next != 0 && *n + 1 != s.parked_next && !resumes_missed(s, *n)) {
      // This node was failed over: others wrote its keys since, and its frames the replica
      // missed would now run over their newer writes.
      s.replid = random_replid();
      return link_failed(s, "the replica missed writes made before this node was failed over");
    }
    from = *n;
    s.partial_syncs++;
    // The replica has the stream up to `from`: its full copy's end among it, if it was there.
    // (A stream new with a ring change that gave the replica its copy continues at once.)
    if ((s.synced_offset != 0 && from >= s.synced_offset) ||
        (!gain && !s.synced && s.synced_offset == 0)) {
      copy_ended(s);
    }
  } else if (reply == "+FULL\r\n") {
    from = s.hello_next - 1;
    if (from + 1 < s.backlog.first())
      return link_failed(s, "writes during the handshake overflowed");
    full = true;
    s.full_syncs++;
    // What the replica had of the frames so far is gone: their waits wait for the copy's end.
    s.synced = false;
    s.synced_offset = 0;
    s.copied_from = from;
    while (!s.waiting.empty() && s.waiting.front().offset <= from) {
      s.waiting_copy.push_back(std::move(s.waiting.front()));
      s.waiting.pop_front();
    }
  } else {
    return link_failed(s, "unexpected answer to HELLO: " + std::string(text.substr(0, 120)));
  }
  s.state = Stream::State::kOnline;
  s.gaining = gain;
  // The stream's frames get no replies: what arrives from now on acknowledges them.
  s.link->set_message_handler(
      [this, id = s.id, gen](std::string_view message, const LinkError* error) {
        auto it = streams_by_id_.find(id);
        if (it == streams_by_id_.end() || it->second->gen != gen) return;
        if (error != nullptr) return link_failed(*it->second, error->reason());
        on_stream_message(*it->second, message);
      });
  s.backoff_ms = 0;
  s.last_failure.clear();
  s.sent = from;
  s.acked = from;
  s.asked = from;
  s.last_ack_ms = uv_now(env_.loop);
  s.backlog.for_each_from(from + 1, [&](uint64_t offset, std::string_view frame) {
    write_frame(s, offset, frame);
    return s.state == Stream::State::kOnline;
  });
  if (s.state != Stream::State::kOnline) return;
  spdlog::info("replication: stream to {} {} at offset {}", s.target,
               full     ? "copies every key again"
               : resume ? "resumes, copying the keys written while it was away"
               : gain   ? "continues, copying the keys it gained in the ring change"
                        : "continues",
               from);
  // Only the first answer after the stream opened again may resume it.
  if (!resume) {
    s.resuming = false;
    s.resume_keys = {};
  }
  if (full || gain) {
    s.snapshot = host_ != nullptr;
    if (host_) host_->snapshot_start(s.target);
  }
}

bool Replication::has_room(const std::string& target) const {
  const Stream* s = stream_to(target);
  return s != nullptr && s->state == Stream::State::kOnline &&
         s->next - 1 - s->acked < kSnapshotWindow && s->unacked_bytes < kSnapshotWindowBytes;
}

bool Replication::replicates(const hashring::HashRing& ring, size_t primary, std::string_view key,
                             std::string_view address) const {
  if (primary == hashring::HashRing::kNoNode) return false;
  std::vector<size_t>& pref = pref_scratch_;
  ring.preference(key, factor_, pref);
  if (pref.empty() || pref[0] != primary) return false;
  for (size_t k = 1; k < pref.size(); ++k) {
    if (ring.nodes()[pref[k]].address == address) return true;
  }
  return false;
}

bool Replication::copies_key(std::string_view key, std::string_view target) const {
  const Stream* s = stream_to(target);
  if (s == nullptr || !replicates(routing_, self_index_, key, target)) return false;
  return !s->gaining || !replicates(previous_routing_, previous_self_index_, key, target);
}

void Replication::send_key(const std::string& target, int db, std::string_view key) {
  Stream* s = stream_to(target);
  if (s == nullptr || host_ == nullptr) return;
  std::string frame;
  host_->append_key_frame(db, key, frame);
  append_record(*s, db, frame);
}

void Replication::send_frame(const std::string& target, std::string request) {
  if (Stream* s = stream_to(target)) append(*s, std::move(request));
}

void Replication::snapshot_done(const std::string& target) {
  Stream* s = stream_to(target);
  if (s == nullptr) return;
  s->snapshot = false;
  s->synced_offset = s->next;
  append(*s, request({"RINGKV.REPL", "SYNCED"}));
}

void Replication::begin_ticket() {
  if (ticket_depth_++ > 0) return;
  // Cleared, not replaced: its parts keep their memory from one write to the next.
  ticket_.parts.clear();
  ticket_.mixed = false;
}

const ReplTicket& Replication::take_ticket() {
  static const ReplTicket kNone;
  if (ticket_depth_ > 0 && --ticket_depth_ > 0) return kNone;
  return ticket_;
}

ReplTicket Replication::ticket_for(std::string_view key) const {
  ReplTicket t;
  std::vector<std::string_view> targets;
  if (!replicas_of(key, targets)) return t;
  for (std::string_view address : targets) {
    if (const Stream* s = stream_to(address)) t.parts.emplace_back(s->id, s->next - 1);
  }
  return t;
}

size_t Replication::acknowledged(const ReplTicket& ticket) const {
  // Counted from the first part on, as Waiter does.
  size_t n = 0;
  for (const auto& [id, offset] : ticket.parts) {
    auto it = streams_by_id_.find(id);
    if (it == streams_by_id_.end() || !it->second->has(offset)) break;
    n++;
  }
  return n;
}

void Replication::wait(const ReplTicket& ticket, size_t need, uint64_t deadline_ms, bool give_up,
                       std::function<void(size_t, bool)> done) {
  auto w = std::make_shared<Waiter>();
  w->give_up = give_up;
  w->need = ticket.mixed ? ticket.parts.size() : need;
  w->done = std::move(done);
  w->parts.assign(ticket.parts.size(), Waiter::Part::kOpen);
  // Without a deadline it may wait for ever (WAIT n 0, as Redis), but not for replicas known
  // down when they are needed.
  w->pos = waiters_.emplace(deadline_ms == 0 ? UINT64_MAX : deadline_ms, w);
  for (size_t i = 0; i < ticket.parts.size(); ++i) {
    const auto [id, offset] = ticket.parts[i];
    auto it = streams_by_id_.find(id);
    Stream* s = it == streams_by_id_.end() ? nullptr : it->second;
    if (s != nullptr && s->has(offset)) {
      w->parts[i] = Waiter::Part::kAcked;
    } else if (s != nullptr && env_.peer_up(s->target)) {
      (offset <= s->copied_from && !s->synced ? s->waiting_copy : s->waiting)
          .push_back(WaitEntry{offset, w, i});
    } else {
      w->parts[i] = Waiter::Part::kLost;
    }
  }
  check_waiter(w);
}

void Replication::check_deadlines() {
  const uint64_t now = uv_now(env_.loop);
  while (!waiters_.empty() && waiters_.begin()->first <= now) fire(waiters_.begin()->second);
}

void Replication::tick() {
  for (auto& link : retired_) link->close(LinkErrorKind::kAbandoned);
  retired_.clear();
  check_deadlines();
  const uint64_t now = uv_now(env_.loop);
  if (streams_held_) return;
  for (auto& [address, s] : streams_) {
    if (s->state == Stream::State::kOnline && s->link->state() != PeerLink::State::kReady) {
      link_failed(*s, "connection closed");
    }
    if (s->state == Stream::State::kDisconnected && now >= s->retry_at_ms) connect(*s);
  }
  // Asks replicas that went quiet for the offset of their last frames.
  flush();
}

}  // namespace ringkv::cluster
