// Migration: copying moving keys to their new owners (and to the members that become their
// replicas), resending what changed, deleting what this node no longer owns (see migration.h).
#include "server/migration.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/cluster.h"
#include "common/clock.h"
#include "common/numbers.h"
#include "engine/command.h"
#include "engine/keyspace/store.h"
#include "protocol/reply_reader.h"
#include "protocol/request_writer.h"
#include "server/connection.h"
#include "server/key_frame.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Copies sent but not acknowledged (count, bytes) before the copy waits for its targets.
constexpr uint64_t kMaxInFlight = 4096;
constexpr uint64_t kMaxInFlightBytes = 8 << 20;
// Progress is logged at most this often.
constexpr uint64_t kLogEveryMs = 1000;

}  // namespace

Migration::Migration(Server& server)
    : server_(server), task_(server.loop(), [this] { return step(); }) {}

Migration::~Migration() = default;

void Migration::stop() { task_.stop(); }

size_t Migration::key_count() {
  size_t keys = 0;
  for (const engine::Store* db : server_.dbs().all()) keys += db->size();
  return keys;
}

template <typename F>
size_t Migration::drop_keys_if(F drop) {
  dropping_ = true;
  size_t dropped = 0;
  std::vector<std::string> gone;
  for (int db = 0; db < server_.dbs().count(); ++db) {
    engine::Store& store = server_.dbs()[db];
    gone.clear();
    uint64_t cursor = 0;
    do {
      cursor = store.scan(cursor, 1024, [&](const engine::Entry& e) {
        if (drop(e.key())) gone.emplace_back(e.key());
      });
    } while (cursor != 0);
    for (const std::string& k : gone) {
      if (store.erase(k)) server_.key_dropped(db, k);
    }
    dropped += gone.size();
  }
  dropping_ = false;
  return dropped;
}

void Migration::prepare_restore(const hashring::HashRing& next) {
  cluster::Cluster& cluster = *server_.cluster();
  restore_.reset();
  if (!cluster.replication().has_resume_points()) {
    spdlog::warn("restored after a failover: dropping the {} keys held from before", key_count());
    server_.discard_keyspace();
    return;
  }
  restore_.emplace(Restore{cluster.routing_ring(), next, {}});
  const std::string& self = cluster.self_address();
  size_t kept = 0;
  self_ = self;
  const size_t dropped = drop_keys_if([&](std::string_view key) {
    if (!holds(next, key)) return true;
    kept++;
    // Its own keys: the member that served each says at the copy whether it resumes. Copies of
    // other primaries' keys: each primary's stream says so (+RESUME, or +FULL dropping them).
    if (next.owner_of(key) == self) {
      const std::string_view source = restore_->routing.owner_of(key);
      if (!restore_->unheard.contains(source)) restore_->unheard.emplace(source);
    }
    return false;
  });
  spdlog::warn(
      "restored after a failover: dropping the {} keys held from before that it no longer "
      "holds; keeping the {} others for the members that served them to resume from",
      dropped, kept);
}

void Migration::drop_shares(const std::set<std::string, std::less<>>& sources) {
  const Restore& r = *restore_;
  // Only its own keys: the copies it holds of the sources' keys are their streams' to resume.
  const size_t dropped = drop_keys_if([&](std::string_view key) {
    return sources.contains(r.routing.owner_of(key)) && r.next.owner_of(key) == self_;
  });
  for (const std::string& source : sources) {
    spdlog::info("restore: dropped the keys held of those {} served ({} in all)", source, dropped);
  }
}

std::string Migration::resume(std::span<const std::string_view> args) {
  cluster::Cluster& cluster = *server_.cluster();
  if (args.size() != 4) return "-ERR RINGKV.RESUME needs 3 arguments\r\n";
  const std::string_view source = args[1];
  const std::optional<uint64_t> offset = common::parse_unsigned(args[3]);
  if (!restore_) {
    // Nothing kept (no resume point): everything follows.
    resumed_full_++;
    return "+FULL\r\n";
  }
  const auto unheard = restore_->unheard.find(source);
  if (unheard != restore_->unheard.end()) restore_->unheard.erase(unheard);
  cluster::Replication& repl = cluster.replication();
  const std::optional<cluster::Replication::ResumePoint> mine = repl.resume_point(source);
  const bool same_stream = mine && offset && !mine->replid.empty() && mine->replid == args[2];
  if (same_stream && mine->offset == *offset) {
    spdlog::info(
        "restore: {} had every write this node made to the keys it served (stream offset {}): "
        "only the keys written since follow",
        source, *offset);
    resumed_++;
    return "+PARTIAL\r\n";
  }
  // Writes this node made that `source` never ran (they were on their way when this node was
  // cut off): the keys they wrote are taken from `source` too, as they are there now.
  const bool missed_writes = same_stream && mine->offset > *offset;
  if (std::optional<cluster::Replication::KeyList> missed =
          missed_writes ? repl.resume_before_missed(source, *offset) : std::nullopt) {
    return resume_missed(source, *offset, mine->offset, *missed);
  }
  spdlog::info("restore: {} copies every key it served ({})", source,
               args[2].empty() ? "its copy of this node's keys does not resume"
               : !mine         ? "this node's stream to it is not known here"
               : missed_writes ? "the writes its copy missed are not all in the backlog"
                               : "the stream ended elsewhere there than here");
  cluster.replication().forget_resume_point(source);
  drop_shares({std::string(source)});
  resumed_full_++;
  return "+FULL\r\n";
}

std::string Migration::resume_missed(std::string_view source, uint64_t offset, uint64_t last,
                                     const cluster::Replication::KeyList& missed) {
  // Only the keys `source` served: the others are the members' that served them to resume.
  std::vector<std::pair<int, std::string_view>> keys;
  for (const auto& [db, key] : missed) {
    if (db < server_.dbs().count() && restore_->routing.owner_of(key) == source &&
        restore_->next.owner_of(key) == self_) {
      keys.emplace_back(db, key);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  // What this node holds of them is newer than what `source` has: gone here, and sent again
  // from there (where they are gone too, they stay gone).
  dropping_ = true;
  for (const auto& [db, key] : keys) {
    if (server_.dbs()[db].erase(key)) server_.key_dropped(db, key);
  }
  dropping_ = false;
  spdlog::info(
      "restore: {} ran this node's writes to the keys it served up to stream offset {} of {}: "
      "the {} keys the rest wrote follow with the keys written since",
      source, offset, last, keys.size());
  resumed_++;
  std::string reply;
  protocol::append_request_header(reply, 1 + 2 * keys.size());
  protocol::append_request_bulk(reply, "PARTIAL");
  for (const auto& [db, key] : keys) {
    protocol::append_request_bulk(reply, std::to_string(db));
    protocol::append_request_bulk(reply, key);
  }
  return reply;
}

std::string Migration::function_payload() {
  const engine::ScriptEngine& scripts = *server_.script_engine();
  return scripts.functions().empty() ? std::string() : function_dump_payload(scripts.functions());
}

std::string Migration::restore_functions(std::string_view payload) {
  std::string error;
  server_.script_engine()->function_restore(payload, engine::ScriptEngine::RestorePolicy::kReplace,
                                            error);
  return error;
}

bool Migration::holds(const hashring::HashRing& ring, std::string_view key) const {
  const size_t factor = server_.cluster()->replication().factor();
  if (factor <= 1) return ring.owner_of(key) == self_;
  std::vector<size_t> pref;
  ring.preference(key, factor, pref);
  for (size_t i : pref) {
    if (ring.nodes()[i].address == self_) return true;
  }
  return false;
}

void Migration::record_away(int db, std::string_view key, bool deleted) {
  const cluster::Cluster& cluster = *server_.cluster();
  const bool replicas = cluster.replication().factor() > 1;
  if (cluster.failed().empty() || (!deleted && !replicas)) return;
  if (!replicas && !cluster.is_failed(cluster.ring().owner_of(key))) {
    return;
  }
  constexpr size_t kMaxAwayKeys = 1 << 20;
  if (away_count_ >= kMaxAwayKeys) {
    if (!away_overflowed_) {
      spdlog::warn("over {} keys of failed-over members changed here: {}", kMaxAwayKeys,
                   replicas ? "their restores copy every key"
                            : "their restore will not delete the rest there");
    }
    away_overflowed_ = true;
    return;
  }
  if (away_keys_.size() <= static_cast<size_t>(db)) away_keys_.resize(static_cast<size_t>(db) + 1);
  if (away_keys_[static_cast<size_t>(db)].emplace(key).second) away_count_++;
}

void Migration::write_ran(int db, const engine::CommandSpec& spec,
                          std::span<const std::string_view> argv) {
  engine::key_positions(spec, argv, key_scratch_);
  engine::Store& store = server_.dbs()[db];
  for (size_t pos : key_scratch_) {
    if (store.peek(argv[pos]) == nullptr) record_away(db, argv[pos], true);
  }
}

void Migration::copy_start(const hashring::HashRing& next, uint64_t version,
                           std::string_view self) {
  generation_++;
  self_ = self;
  copy_.emplace(Copy{.next = next, .version = std::to_string(version)});
  copy_->delivers = server_.cluster()->change_delivers_copies();
  copy_->sends = !server_.cluster()->joining_here();
  const auto dbs = static_cast<size_t>(server_.dbs().count());
  copy_->sent.resize(dbs);
  copy_->dirty.resize(dbs);
  // The frame prefix of each database's copies, built once (not per key). Copy stays where it is
  // from here on, so the views into its strings stay valid.
  copy_->db_digits.resize(dbs);
  copy_->prefixes.resize(dbs);
  for (size_t db = 0; db < dbs; ++db) {
    std::vector<std::string_view> prefix =
        cluster::peer_prefix_args({.db = static_cast<int>(db)}, copy_->db_digits[db]);
    prefix.insert(prefix.end(), {cluster::kMigrateFrame, copy_->version});
    copy_->prefixes[db] = std::move(prefix);
  }
  to_move_ = 0;
  moved_ = 0;
  // Deletions of a restored member's keys made here while it was away reach it as DELs with
  // the keys written since the copy (at the flush). (Only keys moving to it: a key this node
  // deleted as a replica, or gave away, is another member's to delete.)
  for (size_t db = 0; db < away_keys_.size() && db < dbs; ++db) {
    for (const std::string& key : away_keys_[db]) {
      if (moving_to(key) != hashring::HashRing::kNoNode &&
          server_.dbs()[static_cast<int>(db)].peek(key) == nullptr) {
        copy_->dirty[db].insert(key);
      }
    }
  }
  // With replicas, each member restored is asked first whether its copy resumes from what it
  // holds: it does when this node's copy of its keys was complete when it was removed (the
  // ring has not changed since) and nothing was lost in between.
  const cluster::Cluster& cluster = *server_.cluster();
  copy_->resumes.assign(next.nodes().size(), false);
  for (size_t i = 0; i < next.nodes().size() && cluster.replication().factor() > 1; ++i) {
    const std::string& target = next.nodes()[i].address;
    if (target == self_ || !cluster.is_failed(target)) continue;
    std::optional<cluster::Replication::ResumePoint> copy =
        cluster.replication().copy_of_removed(target);
    if (away_overflowed_) copy.reset();
    const std::string replid = copy ? copy->replid : "";
    const std::string offset = copy ? std::to_string(copy->offset) : "0";
    std::vector<std::string_view> frame(copy_->prefixes[0].begin(), copy_->prefixes[0].end());
    frame.insert(frame.end(), {cluster::kResumeFrame, self_, replid, offset});
    cluster::PeerLink& link = server_.cluster()->migration_link(target);
    cluster::append_peer_frame(link.frame_buffer(), {}, frame);
    copy_->resuming++;
    link.commit([this, i, generation = generation_](std::string_view reply,
                                                    const cluster::LinkError* error) {
      if (generation != generation_ || !copy_) return;
      copy_->resuming--;
      if (error != nullptr || reply.empty() || reply[0] == '-') {
        spdlog::error("ring change: asking a restored member whether its copy resumes failed: {}",
                      error ? error->text() : std::string(reply.substr(0, reply.size() - 2)));
        copy_->failed = true;
      } else if (reply == "+PARTIAL\r\n") {
        resume_to(i);
      } else if (reply[0] == '*') {
        resume_to(i, reply);
      }
      task_.wake();
    });
  }
  // A change starting while the last one's leftovers are being deleted: the deletion goes on
  // under the ring that is current (the copy never sends keys this node does not own).
  task_.wake();
}

void Migration::resume_to(size_t target, std::string_view missed) {
  Copy& c = *copy_;
  c.resumes[target] = true;
  // *PARTIAL <db> <key>...: keys of writes of the member this node's copy missed, which it
  // deleted: they go with the keys changed here.
  protocol::ReplyValue v;
  if (!missed.empty() && protocol::decode_reply(missed, v) && v.elements.size() % 2 == 1) {
    for (size_t k = 1; k + 1 < v.elements.size(); k += 2) {
      const std::optional<int64_t> db = common::parse_integer(v.elements[k].text);
      const std::string_view key = v.elements[k + 1].text;
      if (!db || *db < 0 || *db >= server_.dbs().count() || moving_to(key) != target) continue;
      if (server_.dbs()[static_cast<int>(*db)].peek(key) != nullptr) {
        c.found.push_back(Copy::Found{static_cast<int>(*db), target, false, std::string(key)});
      }
    }
    spdlog::info("ring change: {} missed {} keys' last writes of its own; they follow",
                 c.next.nodes()[target].address, v.elements.size() / 2);
  }
  // The keys it owns that changed here while it was away: those still here are copied, those
  // gone were put among the keys deleted above.
  size_t changed = 0;
  for (size_t db = 0; db < away_keys_.size() && db < c.dirty.size(); ++db) {
    for (const std::string& key : away_keys_[db]) {
      if (moving_to(key) != target) continue;
      changed++;
      if (server_.dbs()[static_cast<int>(db)].peek(key) != nullptr) {
        c.found.push_back(Copy::Found{static_cast<int>(db), target, false, key});
      }
    }
  }
  spdlog::info("ring change: {} resumes from its own copy; the {} of its keys changed here follow",
               c.next.nodes()[target].address, changed);
}

bool Migration::changes_while_away(
    const std::function<void(int db, std::string_view key)>& fn) const {
  if (away_overflowed_) return false;
  for (size_t db = 0; db < away_keys_.size(); ++db) {
    for (const std::string& key : away_keys_[db]) fn(static_cast<int>(db), key);
  }
  return true;
}

cluster::CopyProgress Migration::copy_progress() const {
  cluster::CopyProgress p;
  if (copy_) {
    const Copy& c = *copy_;
    p.copied = c.scanned && c.found.empty() && !c.sliced && c.in_flight == 0 && c.resuming == 0;
    p.flushed =
        c.flushing && !c.sliced && c.in_flight == 0 &&
        std::all_of(c.dirty.begin(), c.dirty.end(), [](const auto& d) { return d.empty(); });
    p.failed = c.failed;
  }
  p.to_move = to_move_;
  p.moved = moved_;
  p.sweeping = sweep_.has_value();
  p.resumed = resumed_;
  p.resumed_full = resumed_full_;
  return p;
}

void Migration::copy_flush() {
  if (!copy_) return;
  copy_->flushing = true;
  task_.wake();
}

void Migration::copy_end(const hashring::HashRing& owners, std::string_view self) {
  if (copy_) spdlog::info("ring change: {} of {} keys copied", moved_, to_move_);
  copy_.reset();
  // Changes of members no longer failed are done with (with replicas, once none is: their
  // streams opened again took theirs when the ring switched).
  const cluster::Cluster& cluster = *server_.cluster();
  if (cluster.failed().empty()) {
    away_keys_.clear();
    away_count_ = 0;
    away_overflowed_ = false;
  } else if (cluster.replication().factor() <= 1) {
    for (auto& keys : away_keys_) {
      away_count_ -= std::erase_if(keys, [&](const std::string& key) {
        return !cluster.is_failed(cluster.ring().owner_of(key));
      });
    }
  }
  // Restored: keys kept for a member that never said whether its copy resumes are stale.
  if (restore_ && !cluster.is_failed(self)) {
    if (!restore_->unheard.empty()) drop_shares(restore_->unheard);
    restore_.reset();
  }
  generation_++;
  self_ = self;
  sweep_.emplace(Sweep{owners});
  task_.wake();
}

void Migration::release_held() {
  std::vector<uint64_t> held;
  held.swap(held_);
  for (uint64_t id : held) {
    if (Connection* c = server_.find_client(id)) c->resume();
  }
  server_.reroute_blocked();
}

bool Migration::hold(Connection& conn, uint64_t limit_ms) {
  if (limit_ms != 0) {
    const uint64_t now = uv_now(server_.loop());
    const auto [it, first] = held_since_.emplace(conn.id(), now);
    if (!first && now - it->second >= limit_ms) {
      held_since_.erase(it);
      return false;
    }
  }
  held_.push_back(conn.id());
  return true;
}

void Migration::forget_held(const Connection& conn) { held_since_.erase(conn.id()); }

void Migration::wake_expired(uint64_t limit_ms) {
  if (held_since_.empty()) return;
  const uint64_t now = uv_now(server_.loop());
  for (auto it = held_since_.begin(); it != held_since_.end();) {
    Connection* c = server_.find_client(it->first);
    if (c == nullptr) {
      it = held_since_.erase(it);
      continue;
    }
    if (now - it->second >= limit_ms) c->resume();
    ++it;
  }
}

size_t Migration::moving_to(std::string_view key) const {
  if (!copy_->sends) return hashring::HashRing::kNoNode;
  const size_t owner = copy_->next.owner_index(key);
  if (owner == hashring::HashRing::kNoNode || copy_->next.nodes()[owner].address == self_) {
    return hashring::HashRing::kNoNode;
  }
  return server_.cluster()->routing_ring().owner_of(key) == self_ ? owner
                                                                  : hashring::HashRing::kNoNode;
}

void Migration::key_changed(int db, std::string_view key, bool dropped) {
  cluster::Cluster& cluster = *server_.cluster();
  // (Keys a restore drops are recorded too: the replicas its streams resume get them again.)
  // (Without replicas only deletions count: expiry and eviction say so here, a command's are
  // found after it ran, by write_ran.)
  if (!cluster.failed().empty()) record_away(db, key, dropped);
  // Failed over: a key it owns changing here (not a copy from a peer, nor expiring, as it does
  // everywhere) makes what it holds differ from where its streams ended.
  if (cluster.replication().has_resume_points() && !dropping_ && !server_.applying_copy() &&
      !server_.expiring() && cluster.ring().owner_of(key) == cluster.self_address()) {
    spdlog::warn("failed over: a key it owns changed here; its restore copies every key");
    cluster.replication().forget_resume_points();
  }
  // Once the flush began clients are held: what changes now is expiry or eviction of a copy
  // the new owner already has (with the same absolute expiry), or a key the new owner writes
  // after it committed — which a late DEL from here must not undo.
  if (!copy_ || copy_->flushing ||
      (moving_to(key) == hashring::HashRing::kNoNode && gained_holders(key).empty())) {
    return;
  }
  // Copied already or not, it is sent again at the flush (or by the scan, which may come later:
  // sending twice is harmless, the last copy wins on one ordered link).
  copy_->dirty[static_cast<size_t>(db)].emplace(key);
}

void Migration::keyspace_flushed() {
  cluster::Cluster& cluster = *server_.cluster();
  if (cluster.is_failed(cluster.self_address())) {
    // Failed over, and its keys replaced wholesale: neither they nor its copies of others'
    // keys resume.
    cluster.replication().forget_resume_points();
    cluster.replication().forget_copies();
  }
  if (!copy_ || copy_->flushing) return;
  Copy& c = *copy_;
  for (size_t db = 0; db < c.sent.size(); ++db) {
    c.dirty[db].insert(c.sent[db].begin(), c.sent[db].end());
    c.sent[db].clear();  // listed again as they are sent again
  }
  c.found.clear();
  c.cursor = 0;
  c.scan_db = 0;
  c.scanned = false;
}

std::span<const std::string_view> Migration::copy_prefix(int db) const {
  return copy_->prefixes[static_cast<size_t>(db)];
}

const std::vector<size_t>& Migration::gained_holders(std::string_view key) {
  Copy& c = *copy_;
  c.gained.clear();
  if (!c.delivers || !c.sends) return c.gained;
  const cluster::Cluster& cluster = *server_.cluster();
  const hashring::HashRing& now = cluster.routing_ring();
  const size_t factor = cluster.replication().factor();
  now.preference(key, factor, c.pref_now);
  if (c.pref_now.empty() || now.nodes()[c.pref_now[0]].address != self_) return c.gained;
  c.next.preference(key, factor, c.pref_next);
  for (size_t k = 1; k < c.pref_next.size(); ++k) {
    const std::string& address = c.next.nodes()[c.pref_next[k]].address;
    const bool holds_now = std::any_of(c.pref_now.begin(), c.pref_now.end(),
                                       [&](size_t i) { return now.nodes()[i].address == address; });
    if (!holds_now) c.gained.push_back(c.pref_next[k]);
  }
  return c.gained;
}

void Migration::send_key(int db, std::string_view key, bool first) {
  send_key_to(db, key, first, moving_to(key), true);
}

void Migration::send_key_to(int db, std::string_view key, bool first, size_t owner, bool gained) {
  Copy& c = *copy_;
  if (c.next.nodes().empty()) {
    c.failed = true;  // a ring without members: nowhere to copy to
    return;
  }
  std::vector<size_t>& targets = c.targets;
  targets.clear();
  if (owner != hashring::HashRing::kNoNode) targets.push_back(owner);
  if (gained) {
    const std::vector<size_t>& more = gained_holders(key);
    targets.insert(targets.end(), more.begin(), more.end());
  }
  if (targets.empty()) return;
  const engine::Entry* e = server_.dbs()[db].peek(key);
  if (first) to_move_++;
  if (e != nullptr && e->type() != engine::ValueType::kString &&
      e->type() != engine::ValueType::kStream && e->object()->size() > kSliceElements) {
    c.sliced.emplace(Copy::Sliced{db, std::string(key), {}, first, targets});
    c.sent[static_cast<size_t>(db)].emplace_back(key);
    return send_slices(common::monotonic_us());
  }
  // The same frame to each target (the first's acknowledgement ends the first copy).
  for (size_t i = 0; i < targets.size(); ++i) {
    cluster::PeerLink& link = server_.cluster()->migration_link(c.next.nodes()[targets[i]].address);
    const uint64_t bytes =
        key.size() + append_key_frame(link.frame_buffer(), copy_prefix(db), key, e);
    commit_copies(link, 1, bytes, first && i == 0);
  }
  if (e != nullptr) c.sent[static_cast<size_t>(db)].emplace_back(key);
}

void Migration::send_slices(int64_t start) {
  Copy& c = *copy_;
  std::string slice;
  while (c.sliced && may_send() && common::monotonic_us() - start < kCopyBatchBudgetUs) {
    Copy::Sliced& s = *c.sliced;
    const engine::Entry* e = server_.dbs()[s.db].peek(s.key);
    const std::span<const std::string_view> prefix = copy_prefix(s.db);
    // Deleted, or replaced by another type, meanwhile: its state now, whole (and it is sent
    // again at the flush as a written key).
    const bool whole = e == nullptr || e->type() == engine::ValueType::kString ||
                       e->type() == engine::ValueType::kStream;
    slice.clear();
    const size_t requests =
        whole ? 1 : engine::append_key_slice(*e, s.cursor, kSliceElements, prefix, slice);
    const bool done = whole || s.cursor.done;
    for (size_t i = 0; i < s.targets.size(); ++i) {
      cluster::PeerLink& link =
          server_.cluster()->migration_link(c.next.nodes()[s.targets[i]].address);
      std::string& f = link.frame_buffer();
      const size_t before = f.size();
      if (whole) {
        append_key_frame(f, prefix, s.key, e);
      } else {
        f += slice;
      }
      commit_copies(link, requests, f.size() - before + (whole ? s.key.size() : 0),
                    done && s.first && i == 0);
    }
    if (done) c.sliced.reset();
    if (whole) break;
  }
}

void Migration::commit_copies(cluster::PeerLink& link, size_t requests, uint64_t bytes,
                              bool first) {
  Copy& c = *copy_;
  // Counted as the acknowledgement will uncount it (see Ack).
  bytes = std::min<uint64_t>(bytes, Ack::kMaxBytes);
  c.in_flight += requests;
  c.in_flight_bytes += bytes;
  for (size_t i = 0; i < requests; ++i) {
    // The bytes and the end of a first copy are counted with the last request.
    const bool last = i + 1 == requests;
    commit_copy(link, last ? bytes : 0, last && first);
  }
}

void Migration::commit_copy(cluster::PeerLink& link, uint64_t bytes, bool first) {
  const Ack ack{static_cast<uint32_t>(generation_),
                static_cast<uint32_t>(bytes << 1 | (first ? 1 : 0))};
  link.commit([this, ack](std::string_view reply, const cluster::LinkError* error) {
    if (ack.generation != static_cast<uint32_t>(generation_) || !copy_) return;
    Copy& cc = *copy_;
    cc.in_flight--;
    cc.in_flight_bytes -= std::min<uint64_t>(cc.in_flight_bytes, ack.bytes_first >> 1);
    if (error != nullptr || reply.empty() || reply[0] == '-') {
      // Not on the target: the change aborts (the coordinator sees it in the state).
      if (!cc.failed) {
        spdlog::error("ring change: copying a key failed: {}",
                      error ? error->text() : std::string(reply.substr(0, reply.size() - 2)));
      }
      cc.failed = true;
    } else if (ack.bytes_first & 1) {
      moved_++;
    }
    task_.wake();
  });
}

bool Migration::may_send() const {
  return copy_->in_flight < kMaxInFlight && copy_->in_flight_bytes < kMaxInFlightBytes;
}

bool Migration::more_to_copy() const {
  const Copy& c = *copy_;
  const bool dirty =
      std::any_of(c.dirty.begin(), c.dirty.end(), [](const auto& d) { return !d.empty(); });
  return (!c.scanned || !c.found.empty() || c.sliced || (c.flushing && dirty)) && may_send() &&
         c.resuming == 0;
}

void Migration::copy_batch() {
  Copy& c = *copy_;
  if (c.resuming > 0) return;  // the scan needs to know which members resume
  engine::Databases& dbs = server_.dbs();
  const int64_t start = common::monotonic_us();
  // A big collection's slices first, then the keys found moving and not sent yet, one by one
  // within the turn's time budget.
  send_slices(start);
  while (!c.sliced && !c.found.empty() && may_send() &&
         common::monotonic_us() - start < kCopyBatchBudgetUs) {
    const Copy::Found f = std::move(c.found.back());
    c.found.pop_back();
    if (dbs[f.db].peek(f.key) == nullptr) continue;  // expired or deleted meanwhile
    if (!c.dirty[static_cast<size_t>(f.db)].empty())
      c.dirty[static_cast<size_t>(f.db)].erase(f.key);
    send_key_to(f.db, f.key, true, f.owner, f.gained);
  }
  if (c.sliced) return;
  if (!c.scanned && c.found.empty()) {
    const int db = c.scan_db;
    c.cursor = dbs[db].scan(c.cursor, kCopyBatchKeys, [&](const engine::Entry& e) {
      const size_t owner = moving_to(e.key());
      // A member whose copy resumes gets only the keys that changed (queued by resume_to).
      const bool to_owner = owner != hashring::HashRing::kNoNode && !c.resumes[owner];
      const bool gained = !gained_holders(e.key()).empty();
      if (to_owner || gained) {
        c.found.push_back(Copy::Found{db, to_owner ? owner : hashring::HashRing::kNoNode, gained,
                                      std::string(e.key())});
      }
    });
    // One database after the other.
    if (c.cursor == 0 && ++c.scan_db == dbs.count()) c.scanned = true;
  }
  if (c.scanned && c.found.empty() && c.flushing) {
    for (size_t db = 0; db < c.dirty.size(); ++db) {
      while (!c.sliced && !c.dirty[db].empty() && may_send() &&
             common::monotonic_us() - start < kCopyBatchBudgetUs) {
        const std::string k = std::move(c.dirty[db].extract(c.dirty[db].begin()).value());
        send_key(static_cast<int>(db), k, false);
      }
    }
  }
  const uint64_t now = uv_now(server_.loop());
  if (now - last_log_ms_ >= kLogEveryMs && !c.scanned) {
    last_log_ms_ = now;
    spdlog::info("ring change: {} keys to copy found, {} copied", to_move_, moved_);
  }
}

void Migration::sweep_batch() {
  Sweep& w = *sweep_;
  engine::Store& store = server_.dbs()[w.db];
  const int64_t start = common::monotonic_us();
  std::vector<std::string> gone;
  bool done = false;
  while (!done && gone.size() < kCopyBatchKeys &&
         common::monotonic_us() - start < kCopyBatchBudgetUs) {
    w.cursor = store.scan(w.cursor, 64, [&](const engine::Entry& e) {
      if (!holds(w.owners, e.key())) gone.emplace_back(e.key());
    });
    done = w.cursor == 0;
  }
  for (const auto& k : gone) {
    if (store.erase(k)) server_.key_dropped(w.db, k);
  }
  w.deleted += gone.size();
  // One database after the other.
  if (done && w.db + 1 < server_.dbs().count()) {
    w.db++;
    done = false;
  }
  const uint64_t now = uv_now(server_.loop());
  if (done) {
    if (w.deleted > 0)
      spdlog::info("ring change: {} keys this node no longer owns deleted", w.deleted);
    sweep_.reset();
  } else if (now - last_log_ms_ >= kLogEveryMs) {
    last_log_ms_ = now;
    spdlog::info("ring change: {} keys this node no longer owns deleted so far", w.deleted);
  }
}

bool Migration::step() {
  server_.dbs().set_now(server_.unix_now_ms());
  if (copy_) {
    copy_batch();
  } else if (sweep_) {
    sweep_batch();
  }
  const bool more = copy_ ? more_to_copy() : sweep_.has_value();
  return more;
}

}  // namespace ringkv::server
