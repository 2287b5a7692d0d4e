// ReplicaSync: the server's side of replication (cluster::ReplicationHost). As a primary it
// sends replicas full copies of the keys they hold of this node — a batch per loop turn, paced
// by the stream's room, so the loop keeps serving — and the state of single keys; as a replica
// it drops its copies of a primary's keys when that primary starts a full copy or flushes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/replication.h"
#include "engine/commands/key_commands.h"
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
  void append_key_frame(int db, std::string_view key, std::string& frame) override;
  void snapshot_start(const std::string& target) override;
  void snapshot_stop(const std::string& target) override;
  void stream_ready(const std::string& target) override;
  void drop_keys_of(std::string_view primary, int db) override;
  bool changes_while_away(const std::function<void(int db, std::string_view key)>& fn) override;

  // Closes the handle (shutdown).
  void stop();

 private:
  // One loop turn of the copies; returns whether one has more to send right away.
  bool step();

  Server& server_;
  IdleTask task_;
  // A full copy in progress: the store scan's cursor, keys found and not sent yet, and a big
  // collection being sent a slice at a time.
  struct Snapshot {
    int db = 0;               // the database being copied (one after the other)
    bool db_scanned = false;  // its scan is done: the next database once `found` is sent
    uint64_t cursor = 0;
    std::vector<std::string> found;  // keys of `db`
    std::optional<std::pair<std::string, engine::KeySliceCursor>> sliced;
    bool scanned = false;  // the scan wrapped around: what `found` holds is the rest
    // A resumed stream's copy: only these keys (their states now; DEL when gone), no scan.
    bool resume = false;
    std::vector<std::pair<int, std::string>> changed;
  };
  // Sends the next slice of the collection being copied to `target`.
  void send_slice(const std::string& target, Snapshot& snap);
  std::map<std::string, Snapshot> snapshots_;
};

}  // namespace ringkv::server
