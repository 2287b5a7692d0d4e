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
  self_ = self;
  copy_.emplace(Copy{next, std::to_string(version)});
  to_move_ = 0;
  moved_ = 0;
  // A change starting while the last one's leftovers are being deleted: the deletion goes on
  // under the ring that is current (the copy never sends keys this node does not own).
  wake();
}

cluster::CopyProgress Migration::copy_progress() const {
  cluster::CopyProgress p;
  if (copy_) {
    const Copy& c = *copy_;
    p.copied = c.scanned && c.found.empty() && c.in_flight == 0;
    p.flushed = c.flushing && c.dirty.empty() && c.in_flight == 0;
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
  wake();
}

void Migration::copy_end(const hashring::HashRing& owners, std::string_view self) {
  if (copy_) spdlog::info("ring change: {} of {} moving keys copied", moved_, to_move_);
  copy_.reset();
  generation_++;
  self_ = self;
  sweep_.emplace(Sweep{owners});
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
  if (!copy_ || copy_->flushing || copy_->next.owner_of(key) == self_) return;
  // Copied already or not, it is sent again at the flush (or by the scan, which may come later:
  // sending twice is harmless, the last copy wins on one ordered link).
  copy_->dirty.emplace(key);
}

void Migration::keyspace_flushed() {
  if (!copy_ || copy_->flushing) return;
  copy_->dirty.insert(copy_->sent.begin(), copy_->sent.end());
}

void Migration::send_key(std::string_view key, bool first) {
  Copy& c = *copy_;
  const engine::Entry* e = server_.store().peek(key);
  cluster::PeerLink& link = server_.cluster()->migration_link(c.next.owner_of(key));
  std::string& f = link.frame_buffer();
  uint64_t bytes = key.size();
  if (e == nullptr) {
    protocol::append_request_header(f, 4);
    protocol::append_request_bulk(f, cluster::kMigrateFrame);
    protocol::append_request_bulk(f, c.version);
    protocol::append_request_bulk(f, "DEL");
    protocol::append_request_bulk(f, key);
  } else {
    const std::string payload = engine::dump_payload(*e);
    bytes += payload.size();
    protocol::append_request_header(f, 8);
    protocol::append_request_bulk(f, cluster::kMigrateFrame);
    protocol::append_request_bulk(f, c.version);
    protocol::append_request_bulk(f, "RESTORE");
    protocol::append_request_bulk(f, key);
    protocol::append_request_bulk(f, std::to_string(e->has_expire() ? e->expire_at() : 0));
    protocol::append_request_bulk(f, payload);
    protocol::append_request_bulk(f, "REPLACE");
    protocol::append_request_bulk(f, "ABSTTL");
    c.sent.emplace(key);
  }
  if (first) to_move_++;
  c.in_flight++;
  c.in_flight_bytes += bytes;
  const uint64_t generation = generation_;
  link.commit([this, generation, bytes, first, k = std::string(key)](
                  std::string_view reply, const cluster::LinkError* error) {
    if (generation != generation_ || !copy_) return;
    Copy& cc = *copy_;
    cc.in_flight--;
    cc.in_flight_bytes -= std::min(cc.in_flight_bytes, bytes);
    if (error != nullptr || reply.empty() || reply[0] == '-') {
      // Not on the target: the change aborts (the coordinator sees it in the state).
      if (!cc.failed) {
        spdlog::error("ring change: copying key '{}' failed: {}", k,
                      error ? error->text() : std::string(reply.substr(0, reply.size() - 2)));
      }
      cc.failed = true;
    } else if (first) {
      moved_++;
    }
    wake();
  });
}

bool Migration::may_send() const {
  return copy_->in_flight < kMaxInFlight && copy_->in_flight_bytes < kMaxInFlightBytes;
}

bool Migration::more_to_copy() const {
  const Copy& c = *copy_;
  return (!c.scanned || !c.found.empty() || (c.flushing && !c.dirty.empty())) && may_send();
}

void Migration::copy_batch() {
  Copy& c = *copy_;
  engine::Store& store = server_.store();
  const int64_t start = now_us();
  // Keys found moving and not sent yet: sent one by one within the turn's time budget (a big
  // value's copy is one DUMP; the budget bounds how many follow it in the same turn).
  while (!c.found.empty() && may_send() && now_us() - start < kBatchBudgetUs) {
    const std::string k = std::move(c.found.back());
    c.found.pop_back();
    if (store.peek(k) == nullptr) continue;  // expired or deleted meanwhile
    c.dirty.erase(k);
    send_key(k, true);
  }
  if (!c.scanned && c.found.empty()) {
    const hashring::HashRing& current = server_.cluster()->ring();
    c.cursor = store.scan(c.cursor, kBatchKeys, [&](const engine::Entry& e) {
      // Only keys this node owns: leftovers of an earlier change are not its to send.
      if (c.next.owner_of(e.key()) != self_ && current.owner_of(e.key()) == self_) {
        c.found.emplace_back(e.key());
      }
    });
    if (c.cursor == 0) c.scanned = true;
  }
  if (c.scanned && c.found.empty() && c.flushing) {
    while (!c.dirty.empty() && may_send() && now_us() - start < kBatchBudgetUs) {
      const std::string k = std::move(c.dirty.extract(c.dirty.begin()).value());
      send_key(k, false);
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
  engine::Store& store = server_.store();
  const int64_t start = now_us();
  std::vector<std::string> gone;
  bool done = false;
  while (!done && gone.size() < kBatchKeys && now_us() - start < kBatchBudgetUs) {
    w.cursor = store.scan(w.cursor, 64, [&](const engine::Entry& e) {
      if (w.owners.owner_of(e.key()) != self_) gone.emplace_back(e.key());
    });
    done = w.cursor == 0;
  }
  for (const auto& k : gone) {
    if (store.erase(k)) server_.key_dropped(k);
  }
  w.deleted += gone.size();
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

void Migration::step() {
  server_.store().set_now(server_.unix_now_ms());
  if (copy_) {
    copy_batch();
  } else if (sweep_) {
    sweep_batch();
  }
  const bool more = copy_ ? more_to_copy() : sweep_.has_value();
  if (!more && idle_running_) {
    idle_running_ = false;
    uv_idle_stop(&idle_);
  }
}

}  // namespace ringkv::server
