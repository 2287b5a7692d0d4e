// RdbSnapshots: the node's RDB file (dir/dbfilename) as the server drives it: loaded at start-up
// when the append-only file is off, written by SAVE (in the process), BGSAVE and the `save` rules
// (in a forked child), and at SHUTDOWN; its state for INFO persistence and LASTSAVE.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "conf/options.h"
#include "engine/keyspace/databases.h"
#include "persistence/child_info.h"
#include "persistence/rdb_writer.h"

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

// What INFO persistence reports about snapshots (Redis's rdb_* fields).
struct RdbInfo {
  uint64_t changes_since_last_save = 0;
  bool bgsave_in_progress = false;
  int64_t last_save_time = 0;
  bool last_bgsave_ok = true;
  int64_t last_bgsave_time_sec = -1;
  int64_t current_bgsave_time_sec = -1;
  uint64_t saves = 0;
  uint64_t last_load_keys_expired = 0;
  uint64_t last_load_keys_loaded = 0;
  uint64_t latest_fork_usec = 0;
  uint64_t forks = 0;
  uint64_t last_fork_ms = 0;   // loop time of the latest fork
  ChildFigures child;          // the BGSAVE child's progress while it runs
  uint64_t last_cow_size = 0;  // what the last BGSAVE child that succeeded copied on write
};

enum class BgsaveStart { kStarted, kAlreadyRunning, kForkFailed };

class RdbSnapshots {
 public:
  // `options` and `memory` are the server's live configuration (CONFIG SET changes them).
  RdbSnapshots(engine::Databases& dbs, const conf::PersistenceOptions& options,
               const conf::MemoryOptions& memory);
  // Kills a BGSAVE child and removes its temporary file.
  ~RdbSnapshots();
  RdbSnapshots(const RdbSnapshots&) = delete;
  RdbSnapshots& operator=(const RdbSnapshots&) = delete;

  std::string path() const;
  // Start-up with the append-only file off: loads the RDB file when there is one. Returns false,
  // having logged the file, the offset and the reason, when the server must not start.
  bool load();

  // The server's running count of changes (every key written, deleted, expired...): the save
  // rules compare what it grew by since the last save.
  void set_changes(uint64_t total) { changes_ = total; }

  // SAVE: writes the file now, in this process. Returns an empty string or the error (logged).
  std::string save(int64_t now_unix_ms);
  // BGSAVE.
  BgsaveStart bgsave(uint64_t now_ms, int64_t now_unix_ms);
  bool bgsave_in_progress() const { return child_pid_ > 0; }
  // BGSAVE SCHEDULE while another child runs: the next cron that can fork starts it.
  void schedule_bgsave() { bgsave_scheduled_ = true; }
  bool bgsave_scheduled() const { return bgsave_scheduled_; }
  // Timer work: collects a finished child, then, unless `other_child` (an append-only rewrite)
  // runs, starts a scheduled BGSAVE or one a save rule calls for.
  void cron(uint64_t now_ms, int64_t now_unix_ms, bool other_child);
  // SHUTDOWN and SIGTERM: kills a BGSAVE child; saves when `force` (SHUTDOWN SAVE) or when save
  // rules are set, unless `nosave`. Returns false when a save was wanted and failed.
  bool shutdown(bool force, bool nosave, int64_t now_unix_ms);

  int64_t last_save_unix() const { return last_save_unix_; }
  // False from a failed BGSAVE until a SAVE or BGSAVE succeeds (stop-writes-on-bgsave-error).
  bool last_bgsave_ok() const { return last_bgsave_ok_; }
  RdbInfo info(uint64_t now_ms) const;
  // The options a snapshot is written with now (for files and SYNC streams alike).
  RdbSaveOptions save_options(int64_t now_unix_ms) const;
  // Where the function libraries are kept: `codes` lists their code for snapshots, `load` loads
  // one read from the file (FUNCTION LOAD), returning "" or the error.
  void set_functions(std::function<std::vector<std::string>()> codes,
                     std::function<std::string(const std::string&)> load) {
    function_codes_ = std::move(codes);
    load_function_ = std::move(load);
  }

 private:
  void collect_child(uint64_t now_ms, int64_t now_unix_ms);
  void kill_child();
  bool rule_due(int64_t now_unix_ms) const;

  engine::Databases& dbs_;
  const conf::PersistenceOptions& options_;
  const conf::MemoryOptions& memory_;
  uint64_t changes_ = 0;
  uint64_t changes_at_save_ = 0;
  uint64_t changes_at_fork_ = 0;
  int64_t last_save_unix_;
  int64_t last_try_unix_ = 0;
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_time_sec_ = -1;
  uint64_t saves_ = 0;
  uint64_t last_load_keys_loaded_ = 0;
  uint64_t last_load_keys_expired_ = 0;
  pid_t child_pid_ = -1;
  // Its reports (read when INFO asks, hence mutable).
  mutable ChildInfo child_info_;
  std::string child_path_;  // the temporary file the child writes
  uint64_t child_started_ms_ = 0;
  bool bgsave_scheduled_ = false;
  std::function<std::vector<std::string>()> function_codes_;
  std::function<std::string(const std::string&)> load_function_;
  uint64_t latest_fork_usec_ = 0;
  uint64_t forks_ = 0;
};

}  // namespace ringkv::persistence
