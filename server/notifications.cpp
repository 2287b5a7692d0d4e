// Keyspace notifications (notify-keyspace-events): every event a command, an expiry or an
// eviction reports (engine::KeyEvents::keyspace_event) is published here, as Redis's
// notifyKeyspaceEvent does, on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>. In a
// cluster the node that owns the key publishes it to its own subscribers and forwards it to every
// other member (RINGKV.KEYSPACEMSG), so a subscriber anywhere receives each event once; copies a
// node holds for others (replicas, a ring change's keys) publish nothing.
#include <string>
#include <string_view>

#include "cluster/cluster.h"
#include "common/keyspace_events.h"
#include "engine/commands/string_ops.h"
#include "server/server.h"

namespace ringkv::server {

void Server::watch_store(int db) {
  engine::Store& store = dbs_[db];
  // WATCH treats a key deleted by expiry or eviction as changed; the append-only file logs a DEL.
  store.set_expiry_listener([this, db](std::string_view key) {
    keyspace_event(common::kNotifyExpired, "expired", key, db);
    expiring_ = true;
    key_dropped(db, key);
    expiring_ = false;
  });
  store.set_eviction_listener([this, db](std::string_view key) {
    keyspace_event(common::kNotifyEvicted, "evicted", key, db);
    key_dropped(db, key);
  });
  store.set_new_key_listener(
      [this, db](std::string_view key) { keyspace_event(common::kNotifyNew, "new", key, db); });
  store.set_miss_listener([this, db](std::string_view key) {
    keyspace_event(common::kNotifyKeyMiss, "keymiss", key, db);
  });
}

void Server::keyspace_event(int type, std::string_view event, std::string_view key, int db) {
  const int flags = config_.server.notify_keyspace_events;
  if (!(flags & type)) return;
  // Replaying the append-only file, or applying a copy of a key another node owns: that node
  // published the event (or, loading, nobody is subscribed yet).
  if (applying_copy_ || dbs_[db].loading()) return;
  // In a cluster, the key's owner publishes: with replicas this node also holds others' keys;
  // without, a key the ring gives another node is one a ring change is moving away.
  if (cluster_ && !owned_(key)) return;
  const std::string prefix = "@" + std::to_string(db) + "__:";
  std::string keyspace_channel;
  std::string keyevent_channel;
  std::string_view frame[5] = {cluster::kKeyspaceMessage};
  size_t n = 1;
  if (flags & common::kNotifyKeyspace) {
    keyspace_channel = "__keyspace" + prefix + std::string(key);
    pubsub_.publish(keyspace_channel, event);
    frame[n++] = keyspace_channel;
    frame[n++] = event;
  }
  if (flags & common::kNotifyKeyevent) {
    keyevent_channel = "__keyevent" + prefix + std::string(event);
    pubsub_.publish(keyevent_channel, key);
    frame[n++] = keyevent_channel;
    frame[n++] = key;
  }
  if (cluster_ && n > 1) forward_messages(std::span(frame, n));
}

void Server::forward_messages(std::span<const std::string_view> frame) {
  const std::string& self = cluster_->self_address();
  for (const auto& member : cluster_->routing_ring().nodes()) {
    if (member.address != self) cluster_->send_frame(member.address, frame);
  }
}

void Server::keyspace_frame(std::span<const std::string_view> args, protocol::ReplyWriter& writer) {
  int64_t receivers = 0;
  for (size_t i = 0; i + 1 < args.size(); i += 2)
    receivers += pubsub_.publish(args[i], args[i + 1]);
  writer.integer(receivers);
}

}  // namespace ringkv::server
