// ReplicaSync: full copies to replicas and dropping a primary's keys (see replica_sync.h).
#include "server/replica_sync.h"

#include <spdlog/spdlog.h>

#include <vector>

#include "cluster/cluster.h"
#include "common/clock.h"
#include "engine/keyspace/store.h"
#include "protocol/resp_parser.h"
#include "server/key_frame.h"
#include "server/server.h"

namespace ringkv::server {

ReplicaSync::ReplicaSync(Server& server)
    : server_(server), task_(server.loop(), [this] { return step(); }) {}

ReplicaSync::~ReplicaSync() = default;

void ReplicaSync::stop() { task_.stop(); }

void ReplicaSync::append_key_frame(int db, std::string_view key, std::string& frame) {
  server::append_key_frame(frame, {}, key, server_.dbs()[db].peek(key));
}

void ReplicaSync::snapshot_start(const std::string& target) {
  Snapshot& snap = snapshots_[target] = Snapshot{};
  snap.resume = server_.cluster()->replication().take_resume_keys(target, snap.changed);
  task_.wake();
}

bool ReplicaSync::changes_while_away(const std::function<void(int db, std::string_view key)>& fn) {
  return server_.migration()->changes_while_away(fn);
}

void ReplicaSync::snapshot_stop(const std::string& target) { snapshots_.erase(target); }

void ReplicaSync::stream_ready(const std::string& target) {
  if (snapshots_.count(target) != 0) task_.wake();
}

void ReplicaSync::drop_keys_of(std::string_view primary, int only_db) {
  const cluster::Replication& repl = server_.cluster()->replication();
  size_t dropped = 0;
  for (int db = 0; db < server_.dbs().count(); ++db) {
    if (only_db >= 0 && db != only_db) continue;
    engine::Store& store = server_.dbs()[db];
    std::vector<std::string> gone;
    store.for_each([&](const engine::Entry& e) {
      if (repl.primary_of(e.key()) == primary) gone.emplace_back(e.key());
    });
    for (const std::string& k : gone) {
      if (store.erase(k)) server_.key_dropped(db, k);
    }
    dropped += gone.size();
  }
  if (dropped > 0) {
    spdlog::info("replication: dropped {} keys of {} before copying them again", dropped, primary);
  }
}

void ReplicaSync::send_slice(const std::string& target, Snapshot& snap) {
  cluster::Replication& repl = server_.cluster()->replication();
  auto& [key, cursor] = *snap.sliced;
  const engine::Entry* e = server_.dbs()[snap.db].peek(key);
  if (e == nullptr || e->type() == engine::ValueType::kString ||
      e->type() == engine::ValueType::kStream) {
    // Gone or replaced meanwhile: its state now, whole.
    repl.send_key(target, snap.db, key);
    snap.sliced.reset();
    return;
  }
  std::string requests;
  std::string digits;
  const std::vector<std::string_view> in_db = cluster::peer_prefix_args({.db = snap.db}, digits);
  engine::append_key_slice(*e, cursor, kSliceElements, in_db, requests);
  // One frame per request, as the stream numbers them.
  protocol::RespParser parser;
  std::vector<std::string_view> argv;
  size_t at = 0;
  while (at < requests.size()) {
    const protocol::ParseResult r =
        parser.parse(std::span<const char>(requests.data() + at, requests.size() - at), argv);
    if (r.status != protocol::ParseStatus::kComplete) break;
    repl.send_frame(target, requests.substr(at, r.consumed));
    at += r.consumed;
  }
  if (cursor.done) snap.sliced.reset();
}

bool ReplicaSync::step() {
  server_.dbs().set_now(server_.unix_now_ms());
  cluster::Replication& repl = server_.cluster()->replication();
  std::vector<std::string> done;
  bool more = false;
  for (auto& [target_key, snapshot] : snapshots_) {
    // Named references, not the bindings: clang 14 cannot capture structured bindings.
    const std::string& target = target_key;
    Snapshot& snap = snapshot;
    const int64_t start = common::monotonic_us();
    bool finished = false;
    engine::Store* store = &server_.dbs()[snap.db];
    while (repl.has_room(target) && common::monotonic_us() - start < kCopyBatchBudgetUs) {
      if (snap.sliced) {
        send_slice(target, snap);
        continue;
      }
      if (snap.resume) {
        if (snap.changed.empty()) {
          finished = true;
          break;
        }
        auto [db, key] = std::move(snap.changed.back());
        snap.changed.pop_back();
        const engine::Entry* e = server_.dbs()[db].peek(key);
        if (e != nullptr && e->type() != engine::ValueType::kString &&
            e->type() != engine::ValueType::kStream && e->object()->size() > kSliceElements) {
          snap.db = db;
          snap.sliced.emplace(std::move(key), engine::KeySliceCursor{});
        } else {
          repl.send_key(target, db, key);  // a DEL when it is gone
        }
        continue;
      }
      if (!snap.found.empty()) {
        std::string key = std::move(snap.found.back());
        snap.found.pop_back();
        const engine::Entry* e = store->peek(key);
        if (e != nullptr && e->type() != engine::ValueType::kString &&
            e->type() != engine::ValueType::kStream && e->object()->size() > kSliceElements) {
          // A big collection a slice per frame batch, so neither end stalls on one DUMP.
          snap.sliced.emplace(std::move(key), engine::KeySliceCursor{});
        } else if (e != nullptr) {
          repl.send_key(target, snap.db, key);
        }
        continue;
      }
      if (snap.cursor == 0 && snap.found.empty() && !snap.sliced && snap.scanned) {
        finished = true;
        break;
      }
      if (snap.db_scanned) {
        // Its keys are sent: the next database.
        snap.db_scanned = false;
        store = &server_.dbs()[++snap.db];
      }
      snap.cursor = store->scan(snap.cursor, kCopyBatchKeys, [&](const engine::Entry& e) {
        if (repl.copies_key(e.key(), target)) snap.found.emplace_back(e.key());
      });
      // One database after the other.
      if (snap.cursor == 0 && snap.db + 1 < server_.dbs().count()) {
        snap.db_scanned = true;
      } else if (snap.cursor == 0) {
        snap.scanned = true;
      }
    }
    if (finished) {
      done.push_back(target);
    } else if (repl.has_room(target)) {
      more = true;  // out of time, not of room
    }
  }
  for (const std::string& target : done) {
    snapshots_.erase(target);
    repl.snapshot_done(target);
  }
  // A copy waiting for room is woken by stream_ready().
  return more;
}

}  // namespace ringkv::server
