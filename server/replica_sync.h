// ReplicaSync: the server's side of replication (cluster::ReplicationHost). As a primary it
// sends replicas full copies of the keys they hold of this node — a batch per loop turn, paced
// by the stream's room, so the loop keeps serving — and the state of single keys; as a replica
// it drops its copies of a primary's keys when that primary starts a full copy or flushes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "cluster/replication.h"
#include "server/idle_task.h"

namespace ringkv::server {

class Server;

class ReplicaSync final : public cluster::ReplicationHost {
 public:
  explicit ReplicaSync(Server& server);
  ~ReplicaSync() override;
  ReplicaSync(const ReplicaSync&) = delete;
  ReplicaSync& operator=(const ReplicaSync&) = delete;

  // cluster::ReplicationHost
  void append_key_frame(std::string_view key, std::string& frame) override;
  void snapshot_start(const std::string& target) override;
  void snapshot_stop(const std::string& target) override;
  void stream_ready(const std::string& target) override;
  void drop_keys_of(std::string_view primary) override;

  // Closes the handle (shutdown).
  void stop();

 private:
  // One loop turn of the copies; returns whether one has more to send right away.
  bool step();

  Server& server_;
  IdleTask task_;
  // Full copies in progress: target → the store scan's cursor.
  std::map<std::string, uint64_t> snapshots_;
};

}  // namespace ringkv::server
