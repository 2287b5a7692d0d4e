// Live import from running redis-servers (CLUSTER IMPORT host:port [AUTH password]): the node
// connects to each source as a Redis replica does (REPLCONF, PSYNC), loads the RDB snapshot the
// source sends, then applies the command stream that follows, every key on its owner in the ring
// (RESTORE ... ABSTTL for the snapshot's keys, the commands as they come), until CLUSTER IMPORT
// STOP. Several sources may run at once (the servers behind a twemproxy pool): a key found on two
// sources ends as the later write left it, and the snapshot's duplicates are counted.
//
// A source that goes away is reconnected (every second) with PSYNC <replid> <offset+1>: it resumes
// the stream where it stopped when the source still has it (+CONTINUE), else it loads a new
// snapshot, replacing the keys, and deletes the keys it imported before that the new snapshot
// lacks.
//
// The import is recorded in `dir` (import_state.h) as it goes: a node killed and started again
// resumes each running source, with PSYNC <replid> <offset+1> when every command it may have
// sent past the recorded offset is safe to apply twice, else with a new snapshot. Commands that
// fail because their owner is unavailable are not lost: the source takes a new snapshot once
// the cluster answers again (retried with a growing delay).
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "persistence/rdb_loader.h"
#include "protocol/resp_parser.h"
#include "server/import_state.h"

namespace ringkv::server {

class Server;

class ImportSource {
 public:
  enum class State { kConnecting, kHandshake, kSnapshot, kStreaming, kRetrying, kStopped };

  ImportSource(Server& server, std::string host, int port, std::string password,
               uint64_t client_id);
  ~ImportSource();
  ImportSource(const ImportSource&) = delete;
  ImportSource& operator=(const ImportSource&) = delete;

  // A new import: what an earlier import of this source logged is forgotten.
  void start();
  // The import recorded in `dir` before this node restarted: continues it if it ran.
  void resume(const ImportRecord& record);
  // What import.state keeps of it, to be written now (it remembers whether that says resuming
  // needs a new snapshot).
  ImportRecord record();
  // CLUSTER IMPORT of a source stopped earlier: connects again with what it knew. After errors (a
  // node was down) it asks for a new snapshot, which replaces every key and deletes those gone;
  // otherwise it resumes the stream after the last command read when the source still has it.
  void restart(std::string password);
  // CLUSTER IMPORT STOP: disconnects; the counters stay for CLUSTER INFO. `record` false (the
  // node shuts down) leaves the import recorded as running, to resume at the next start.
  void stop(bool record = true);
  // Once a second: the replica's ACK, reconnection, progress logs.
  void cron(uint64_t now_ms);

  std::string address() const { return host_ + ":" + std::to_string(port_); }
  State state() const { return state_; }
  static std::string_view state_name(State s);
  // One CLUSTER INFO line: source=...,state=...,keys=...,offset=...,lag_ms=...
  std::string info_fields(uint64_t now_ms) const;
  uint64_t keys_loaded() const { return keys_loaded_; }

 private:
  struct Socket;
  void connect();
  void on_connected(int status);
  void on_read(std::string_view data);
  void send(std::string_view bytes);
  void send_command(const std::vector<std::string>& argv);
  // The link failed or closed: counted, then retried from cron (unless stopped).
  void disconnect(const std::string& why);
  void close_socket();
  // Drops the link and asks the source for a full resync (counted in owner_resyncs): its
  // snapshot replaces every key and deletes those gone.
  void take_new_snapshot();
  // Parses what arrived, by state. False when the link was closed meanwhile.
  bool process();
  bool handshake_reply(std::string_view line);
  bool snapshot_bytes();
  void stream_commands();
  void snapshot_key(persistence::RdbKey& key);
  void snapshot_done();
  enum class Kind { kSnapshotKey, kCommand, kNoop };
  // Runs argv (none for a kNoop: PING, SELECT...) on its owner; a stream command brings the
  // applied offset to `offset_after` once it and every command before it were answered.
  void apply(std::vector<std::string> argv, Kind kind, uint64_t offset_after);
  void finished(uint64_t seq, Kind kind, std::string_view reply, std::vector<std::string> retry);
  void failed(std::string_view reply, std::string_view what);
  void update_reading();
  // Runs the commands held while a read was parsed, after the key log and the state file cover
  // them.
  void dispatch_held();
  void dispatch(std::vector<std::string> argv, Kind kind, uint64_t seq);
  // A key the import brings (or a new snapshot has): logged on first sight.
  void remember(std::string_view key, bool snapshot);
  void save();
  // Whether resuming from the recorded offset could replay a command that must not run twice.
  bool needs_resync() const;

  Server& server_;
  const std::string host_;
  const int port_;
  std::string password_;
  const uint64_t client_id_;
  State state_ = State::kConnecting;
  Socket* socket_ = nullptr;
  bool reading_ = false;
  std::string in_;
  size_t in_pos_ = 0;
  // Handshake: the commands whose replies are still expected, the first one sent.
  std::deque<std::vector<std::string>> expected_;
  // Replication position: the source's replid and the offset of the last byte applied.
  std::string replid_;
  uint64_t offset_ = 0;          // of the stream bytes read and handed to apply
  uint64_t applied_offset_ = 0;  // of the stream bytes whose commands have all been answered
  // Stream commands not all answered yet, in stream order; pending_.front() has sequence
  // number pending_base_.
  struct Pending {
    uint64_t offset;   // the stream offset after the command
    uint64_t read_ms;  // loop time it was read (lag_ms is the oldest one's age)
    bool done;
  };
  std::deque<Pending> pending_;
  uint64_t pending_base_ = 0;
  uint64_t next_seq_ = 0;
  // Callbacks of commands in flight outlive a stopped source only as far as this flag.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // Snapshot transfer.
  std::unique_ptr<persistence::RdbLoader> loader_;
  bool eof_mark_ = false;
  std::string mark_;
  uint64_t payload_left_ = 0;  // $<len> transfers: bytes still to come
  std::string mark_tail_;      // the last bytes fed, to find a marker split between reads
  bool resync_ = false;        // a full resync after an earlier one: keys replaced without counting
  // Keys this source has had (its snapshot's and those its writes touched), and during a later
  // full resync the new snapshot's: keys in the first and not the second are deleted. About the
  // size of the key names on the importing node.
  std::unordered_set<std::string> known_;
  std::unordered_set<std::string> fresh_;
  ImportKeyLog key_log_;
  // While a read is parsed its commands wait here (argv, kind, sequence number).
  bool holding_ = false;
  struct Held {
    std::vector<std::string> argv;
    Kind kind;
    uint64_t seq;
  };
  std::vector<Held> held_;
  // The stream offset after the last command read that is not safe to apply twice, and whether
  // import.state says so already (resume then takes a new snapshot).
  uint64_t last_unsafe_offset_ = 0;
  bool recorded_unsafe_ = false;
  // Snapshot RESTOREs (and the DELs after a resync) not answered yet.
  uint64_t snapshot_in_flight_ = 0;
  // Commands refused because their owner was unavailable since the last sync, of this sync.
  uint64_t sync_number_ = 0;
  uint64_t unavailable_ = 0;
  uint64_t owner_resyncs_ = 0;
  uint64_t owner_retry_ms_ = 0;
  uint64_t next_owner_retry_ms_ = 0;
  // Failovers of members seen (the cluster's count), and those that made a new snapshot.
  uint64_t failovers_seen_ = 0;
  uint64_t failovers_ = 0;
  protocol::RespParser parser_;
  std::vector<std::string_view> argv_;
  int64_t db_ = 0;
  // Counters.
  uint64_t in_flight_ = 0;
  uint64_t keys_loaded_ = 0;
  uint64_t snapshot_keys_ = 0;
  uint64_t commands_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t errors_ = 0;
  uint64_t skipped_ = 0;  // commands for databases other than 0
  uint64_t full_syncs_ = 0;
  uint64_t partial_syncs_ = 0;
  uint64_t disconnects_ = 0;
  std::string last_error_;
  uint64_t next_connect_ms_ = 0;
  uint64_t snapshot_started_ms_ = 0;
  uint64_t snapshot_ms_ = 0;
  uint64_t last_log_ms_ = 0;
};

}  // namespace ringkv::server
