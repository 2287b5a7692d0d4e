// Migration: copying moving keys to their new owners, resending what changed, deleting what this
// node no longer owns (see migration.h).
#include "server/migration.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/cluster.h"
#include "common/clock.h"
#include "engine/keyspace/store.h"
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

void Migration::discard_keys() {
  spdlog::warn("restored after a failover: dropping the {} keys held from before",
               server_.store().size());
  server_.discard_keyspace();
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

void Migration::key_deleted(int db, std::string_view key) {
  const cluster::Cluster& cluster = *server_.cluster();
  if (cluster.failed().empty() || cluster.replication().factor() > 1) return;
  const std::string_view owner = cluster.ring().owner_of(key);
  if (std::find(cluster.failed().begin(), cluster.failed().end(), owner) ==
      cluster.failed().end()) {
    return;
  }
  constexpr size_t kMaxTombstones = 1 << 20;
  if (tombstone_count_ >= kMaxTombstones) {
    if (!tombstones_overflowed_) {
      spdlog::warn(
          "over {} keys of failed-over members deleted here: their restore will not delete "
          "the rest there",
          kMaxTombstones);
    }
    tombstones_overflowed_ = true;
    return;
  }
  if (tombstones_.size() <= static_cast<size_t>(db))
    tombstones_.resize(static_cast<size_t>(db) + 1);
  if (tombstones_[static_cast<size_t>(db)].emplace(key).second) tombstone_count_++;
}

void Migration::copy_start(const hashring::HashRing& next, uint64_t version,
                           std::string_view self) {
  generation_++;
  self_ = self;
  copy_.emplace(Copy{.next = next, .version = std::to_string(version)});
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
  // the keys written since the copy (at the flush).
  for (size_t db = 0; db < tombstones_.size() && db < dbs; ++db) {
    for (const std::string& key : tombstones_[db]) {
      if (next.owner_of(key) != self_ && server_.dbs()[static_cast<int>(db)].peek(key) == nullptr) {
        copy_->dirty[db].insert(key);
      }
    }
  }
  // A change starting while the last one's leftovers are being deleted: the deletion goes on
  // under the ring that is current (the copy never sends keys this node does not own).
  task_.wake();
}

cluster::CopyProgress Migration::copy_progress() const {
  cluster::CopyProgress p;
  if (copy_) {
    const Copy& c = *copy_;
    p.copied = c.scanned && c.found.empty() && !c.sliced && c.in_flight == 0;
    p.flushed =
        c.flushing && !c.sliced && c.in_flight == 0 &&
        std::all_of(c.dirty.begin(), c.dirty.end(), [](const auto& d) { return d.empty(); });
    p.failed = c.failed;
  }
  p.to_move = to_move_;
  p.moved = moved_;
  p.sweeping = sweep_.has_value();
  return p;
}

void Migration::copy_flush() {
  if (!copy_) return;
  copy_->flushing = true;
  task_.wake();
}

void Migration::copy_end(const hashring::HashRing& owners, std::string_view self) {
  if (copy_) spdlog::info("ring change: {} of {} moving keys copied", moved_, to_move_);
  copy_.reset();
  // Tombstones of members no longer failed are done with.
  const std::vector<std::string>& failed = server_.cluster()->failed();
  for (auto& keys : tombstones_) {
    tombstone_count_ -= std::erase_if(keys, [&](const std::string& key) {
      return std::find(failed.begin(), failed.end(), server_.cluster()->ring().owner_of(key)) ==
             failed.end();
    });
  }
  if (failed.empty()) tombstones_overflowed_ = false;
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

void Migration::hold(Connection& conn) { held_.push_back(conn.id()); }

size_t Migration::moving_to(std::string_view key) const {
  const size_t owner = copy_->next.owner_index(key);
  if (owner == hashring::HashRing::kNoNode || copy_->next.nodes()[owner].address == self_) {
    return hashring::HashRing::kNoNode;
  }
  return server_.cluster()->routing_ring().owner_of(key) == self_ ? owner
                                                                  : hashring::HashRing::kNoNode;
}

void Migration::key_changed(int db, std::string_view key) {
  if (!server_.cluster()->failed().empty() && server_.dbs()[db].peek(key) == nullptr) {
    key_deleted(db, key);
  }
  // Once the flush began clients are held: what changes now is expiry or eviction of a copy
  // the new owner already has (with the same absolute expiry), or a key the new owner writes
  // after it committed — which a late DEL from here must not undo.
  if (!copy_ || copy_->flushing || moving_to(key) == hashring::HashRing::kNoNode) return;
  // Copied already or not, it is sent again at the flush (or by the scan, which may come later:
  // sending twice is harmless, the last copy wins on one ordered link).
  copy_->dirty[static_cast<size_t>(db)].emplace(key);
}

void Migration::keyspace_flushed() {
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

void Migration::send_key(int db, std::string_view key, bool first) {
  send_key_to(db, key, first, copy_->next.owner_index(key));
}

void Migration::send_key_to(int db, std::string_view key, bool first, size_t owner) {
  Copy& c = *copy_;
  if (owner == hashring::HashRing::kNoNode) {
    c.failed = true;  // a ring without members: nowhere to copy to
    return;
  }
  const engine::Entry* e = server_.dbs()[db].peek(key);
  if (first) to_move_++;
  if (e != nullptr && e->type() != engine::ValueType::kString &&
      e->type() != engine::ValueType::kStream && e->object()->size() > kSliceElements) {
    c.sliced.emplace(Copy::Sliced{db, std::string(key), {}, first});
    c.sent[static_cast<size_t>(db)].emplace_back(key);
    return send_slices(common::monotonic_us());
  }
  cluster::PeerLink& link = server_.cluster()->migration_link(c.next.nodes()[owner].address);
  const uint64_t bytes =
      key.size() + append_key_frame(link.frame_buffer(), copy_prefix(db), key, e);
  if (e != nullptr) c.sent[static_cast<size_t>(db)].emplace_back(key);
  commit_copies(link, 1, bytes, first);
}

void Migration::send_slices(int64_t start) {
  Copy& c = *copy_;
  while (c.sliced && may_send() && common::monotonic_us() - start < kCopyBatchBudgetUs) {
    Copy::Sliced& s = *c.sliced;
    const engine::Entry* e = server_.dbs()[s.db].peek(s.key);
    cluster::PeerLink& link = server_.cluster()->migration_link(c.next.owner_of(s.key));
    const std::span<const std::string_view> prefix = copy_prefix(s.db);
    if (e == nullptr || e->type() == engine::ValueType::kString ||
        e->type() == engine::ValueType::kStream) {
      // Deleted, or replaced by another type, meanwhile: its state now, whole (and it is sent
      // again at the flush as a written key).
      const std::string key = std::move(s.key);
      const bool first = s.first;
      c.sliced.reset();
      const uint64_t bytes = key.size() + append_key_frame(link.frame_buffer(), prefix, key, e);
      commit_copies(link, 1, bytes, first);
      break;
    }
    std::string& f = link.frame_buffer();
    const size_t before = f.size();
    const size_t requests = engine::append_key_slice(*e, s.cursor, kSliceElements, prefix, f);
    const bool done = s.cursor.done;
    const bool first = s.first;
    if (done) c.sliced.reset();
    commit_copies(link, requests, f.size() - before, done && first);
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
  return (!c.scanned || !c.found.empty() || c.sliced || (c.flushing && dirty)) && may_send();
}

void Migration::copy_batch() {
  Copy& c = *copy_;
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
    send_key_to(f.db, f.key, true, f.owner);
  }
  if (c.sliced) return;
  if (!c.scanned && c.found.empty()) {
    const int db = c.scan_db;
    c.cursor = dbs[db].scan(c.cursor, kCopyBatchKeys, [&](const engine::Entry& e) {
      const size_t owner = moving_to(e.key());
      if (owner != hashring::HashRing::kNoNode) {
        c.found.push_back(Copy::Found{db, static_cast<uint32_t>(owner), std::string(e.key())});
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
    spdlog::info("ring change: {} moving keys found, {} copied", to_move_, moved_);
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
