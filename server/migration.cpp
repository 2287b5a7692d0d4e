// Migration: copying moving keys to their new owners, resending what changed, deleting what this
// node no longer owns (see migration.h).
#include "server/migration.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "cluster/cluster.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/rdb_value.h"
#include "protocol/request_writer.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Work per loop turn: keys looked at, and time, whichever ends first.
constexpr size_t kBatchKeys = 256;
constexpr int64_t kBatchBudgetUs = 2000;
// Copies sent but not acknowledged (count, bytes) before the copy waits for its targets.
constexpr uint64_t kMaxInFlight = 4096;
constexpr uint64_t kMaxInFlightBytes = 8 << 20;
// Progress is logged at most this often.
constexpr uint64_t kLogEveryMs = 1000;

int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Migration::Migration(Server& server) : server_(server) {
  uv_idle_init(server_.loop(), &idle_);
  idle_.data = this;
}

Migration::~Migration() = default;

void Migration::stop() {
  if (stopped_) return;
  stopped_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), nullptr);
}

void Migration::wake() {
  if (idle_running_ || stopped_) return;
  idle_running_ = true;
  uv_idle_start(&idle_, on_idle);
}

void Migration::on_idle(uv_idle_t* handle) { static_cast<Migration*>(handle->data)->step(); }

size_t Migration::key_count() { return server_.store().size(); }

void Migration::copy_start(const hashring::HashRing& next, uint64_t version,
                           std::string_view self) {
  generation_++;
  version_ = std::to_string(version);
  next_.emplace(next);
  self_ = self;
  copying_ = true;
  cursor_ = 0;
  scanned_ = false;
  pending_.clear();
  in_flight_bytes_ = 0;
  flushing_ = false;
  sent_.clear();
  dirty_.clear();
  in_flight_ = 0;
  to_move_ = 0;
  moved_ = 0;
  copy_failed_ = false;
  // A change starting while the last one's leftovers are being deleted: the deletion goes on
  // under the ring that is current (the copy never sends keys this node does not own).
  wake();
}

cluster::CopyProgress Migration::copy_progress() const {
  cluster::CopyProgress p;
  p.copied = !copying_ || (scanned_ && pending_.empty() && in_flight_ == 0);
  p.flushed = !copying_ || (flushing_ && dirty_.empty() && in_flight_ == 0);
  p.failed = copying_ && copy_failed_;
  p.to_move = to_move_;
  p.moved = moved_;
  p.sweeping = sweeping_;
  return p;
}

void Migration::copy_flush() {
  flushing_ = true;
  wake();
}

void Migration::copy_end(const hashring::HashRing& owners, std::string_view self) {
  if (copying_) {
    spdlog::info("ring change: {} of {} moving keys copied", moved_, to_move_);
  }
  copying_ = false;
  generation_++;
  next_.reset();
  sent_.clear();
  dirty_.clear();
  pending_.clear();
  in_flight_ = 0;
  in_flight_bytes_ = 0;
  owners_.emplace(owners);
  sweep_self_ = self;
  sweeping_ = true;
  sweep_cursor_ = 0;
  swept_ = 0;
  wake();
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

void Migration::key_changed(std::string_view key) {
  // Once the flush began clients are held: what changes now is expiry or eviction of a copy
  // the new owner already has (with the same absolute expiry), or a key the new owner writes
  // after it committed — which a late DEL from here must not undo.
  if (!copying_ || flushing_ || next_->owner_of(key) == self_) return;
  // Copied already or not, it is sent again at the flush (or by the scan, which may come later:
  // sending twice is harmless, the last copy wins on one ordered link).
  dirty_.emplace(key);
}

void Migration::keyspace_flushed() {
  if (!copying_) return;
  if (flushing_) return;
  for (const auto& k : sent_) dirty_.insert(k);
}

void Migration::send_key(std::string_view key) {
  engine::Store& store = server_.store();
  const std::string_view owner = next_->owner_of(key);
  cluster::PeerLink& link = server_.cluster()->migration_link(owner);
  std::string& f = link.frame_buffer();
  const engine::Entry* e = store.peek(key);
  uint64_t bytes = key.size();
  if (e == nullptr) {
    protocol::append_request_header(f, 4);
    protocol::append_request_bulk(f, cluster::kMigrateFrame);
    protocol::append_request_bulk(f, version_);
    protocol::append_request_bulk(f, "DEL");
    protocol::append_request_bulk(f, key);
  } else {
    const std::string payload = engine::dump_payload(*e);
    bytes = payload.size() + key.size();
    const int64_t at = e->has_expire() ? e->expire_at() : 0;
    protocol::append_request_header(f, 8);
    protocol::append_request_bulk(f, cluster::kMigrateFrame);
    protocol::append_request_bulk(f, version_);
    protocol::append_request_bulk(f, "RESTORE");
    protocol::append_request_bulk(f, key);
    protocol::append_request_bulk(f, std::to_string(at));
    protocol::append_request_bulk(f, payload);
    protocol::append_request_bulk(f, "REPLACE");
    protocol::append_request_bulk(f, "ABSTTL");
    sent_.emplace(key);
  }
  in_flight_++;
  in_flight_bytes_ += bytes;
  const uint64_t generation = generation_;
  link.commit([this, generation, bytes, k = std::string(key)](std::string_view reply,
                                                              const cluster::LinkError* error) {
    if (generation != generation_) return;
    in_flight_--;
    in_flight_bytes_ -= std::min(in_flight_bytes_, bytes);
    if (error != nullptr || reply.empty() || reply[0] == '-') {
      // Not on the target: the change aborts (the coordinator sees it in the state).
      if (!copy_failed_) {
        spdlog::error("ring change: copying key '{}' failed: {}", k,
                      error ? error->text() : std::string(reply.substr(0, reply.size() - 2)));
      }
      copy_failed_ = true;
    } else {
      moved_++;  // +OK for a copy, :n for a DEL
    }
    wake();
  });
}

bool Migration::may_send() const {
  return in_flight_ < kMaxInFlight && in_flight_bytes_ < kMaxInFlightBytes;
}

void Migration::copy_batch() {
  engine::Store& store = server_.store();
  const int64_t start = now_us();
  // Keys found moving and not sent yet: sent one by one within the turn's time budget (a big
  // value's copy is one DUMP; the budget bounds how many follow it in the same turn).
  while (!pending_.empty() && may_send() && now_us() - start < kBatchBudgetUs) {
    const std::string k = std::move(pending_.back());
    pending_.pop_back();
    if (store.peek(k) == nullptr) continue;  // expired or deleted meanwhile
    to_move_++;
    dirty_.erase(k);
    send_key(k);
  }
  if (!scanned_ && pending_.empty()) {
    const hashring::HashRing& current = server_.cluster()->ring();
    cursor_ = store.scan(cursor_, kBatchKeys, [&](const engine::Entry& e) {
      // Only keys this node owns: leftovers of an earlier change are not its to send.
      if (next_->owner_of(e.key()) != self_ && current.owner_of(e.key()) == self_) {
        pending_.emplace_back(e.key());
      }
    });
    if (cursor_ == 0) scanned_ = true;
  }
  if (scanned_ && pending_.empty() && flushing_) {
    while (!dirty_.empty() && may_send() && now_us() - start < kBatchBudgetUs) {
      auto it = dirty_.begin();
      const std::string k = *it;
      dirty_.erase(it);
      send_key(k);
    }
  }
  const uint64_t now = uv_now(server_.loop());
  if (now - last_log_ms_ >= kLogEveryMs && !scanned_) {
    last_log_ms_ = now;
    spdlog::info("ring change: {} moving keys found, {} copied", to_move_, moved_);
  }
}

void Migration::sweep_batch() {
  engine::Store& store = server_.store();
  const int64_t start = now_us();
  std::vector<std::string> gone;
  while (sweeping_ && gone.size() < kBatchKeys && now_us() - start < kBatchBudgetUs) {
    sweep_cursor_ = store.scan(sweep_cursor_, 64, [&](const engine::Entry& e) {
      if (owners_->owner_of(e.key()) != sweep_self_) gone.emplace_back(e.key());
    });
    if (sweep_cursor_ == 0) sweeping_ = false;
  }
  for (const auto& k : gone) {
    if (store.erase(k)) server_.key_dropped(k);
  }
  swept_ += gone.size();
  const uint64_t now = uv_now(server_.loop());
  if (!sweeping_ && swept_ > 0) {
    spdlog::info("ring change: {} keys this node no longer owns deleted", swept_);
  } else if (sweeping_ && now - last_log_ms_ >= kLogEveryMs) {
    last_log_ms_ = now;
    spdlog::info("ring change: {} keys this node no longer owns deleted so far", swept_);
  }
}

void Migration::step() {
  server_.store().set_now(server_.unix_now_ms());
  if (copying_) {
    copy_batch();
  } else if (sweeping_) {
    sweep_batch();
  }
  const bool more =
      (copying_ && (!scanned_ || !pending_.empty() || (flushing_ && !dirty_.empty())) &&
       may_send()) ||
      (!copying_ && sweeping_);
  if (!more && idle_running_) {
    idle_running_ = false;
    uv_idle_stop(&idle_);
  }
}

}  // namespace ringkv::server
