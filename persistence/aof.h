// AppendOnlyFile: the append-only file of one node, as the server drives it. It loads the file
// at start-up, takes the record of every write (see Server: what gets logged), writes it before
// the replies of the loop iteration leave, and runs rewrites (BGREWRITEAOF, automatic by growth,
// and the first base file when CONFIG SET appendonly yes turns it on at run time).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conf/options.h"
#include "persistence/aof_loader.h"
#include "persistence/aof_writer.h"
#include "persistence/child_info.h"
#include "persistence/rdb_writer.h"

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

// What INFO persistence reports about the file (Redis's fields).
struct AofInfo {
  bool enabled = false;
  bool rewrite_in_progress = false;
  bool rewrite_scheduled = false;
  int64_t last_rewrite_time_sec = -1;
  int64_t current_rewrite_time_sec = -1;
  bool last_bgrewrite_ok = true;
  uint64_t rewrites = 0;
  uint64_t rewrites_consecutive_failures = 0;
  bool last_write_ok = true;
  // Present only while enabled:
  uint64_t current_size = 0;
  uint64_t base_size = 0;
  uint64_t buffer_length = 0;
  uint64_t pending_bio_fsync = 0;
  uint64_t delayed_fsync = 0;
  // INFO stats:
  uint64_t latest_fork_usec = 0;
  uint64_t total_forks = 0;
  uint64_t last_fork_ms = 0;   // loop time of the latest fork
  ChildFigures child;          // the rewrite child's progress while it runs
  uint64_t last_cow_size = 0;  // what the last rewrite child that succeeded copied on write
};

// BGREWRITEAOF's outcome.
enum class RewriteStart { kStarted, kAlreadyRunning, kForkFailed };

class AppendOnlyFile {
 public:
  // `options` is the server's live configuration (CONFIG SET changes it; see apply_options).
  AppendOnlyFile(engine::Databases& dbs, const conf::PersistenceOptions& options);
  // Kills a rewrite child (removing its file) and completes a pending commit; the writer closes
  // the file after an fsync.
  ~AppendOnlyFile();
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // Start-up with appendonly yes: replays the file into the store (creating an empty one when
  // absent) and opens it for appending. A truncated last record is cut off when
  // aof-load-truncated allows it. Returns false, having logged why, when the server must not
  // start (corruption, a refused truncation, I/O errors).
  bool load_and_open(const ReplayRunner& runner = {});

  // The errno of the failed write that makes the file refuse writes (0: none): while the file
  // is on and its last write failed (Redis's MISCONF for the append-only file).
  int write_error() const {
    return state_ != State::kOff && !writer_.last_write_ok() ? writer_.last_write_errno() : 0;
  }
  // Whether the server should hand over records: the file is on, or a rewrite collects them.
  bool wants_records() const { return state_ != State::kOff || child_pid_ > 0; }
  // The database of the records fed next: a SELECT is recorded first when it is not the one of
  // the last record (nor known, at the start and after a rewrite began).
  void select(int db);
  // One command's record (the command as it arrived, or its effective form).
  void feed(std::span<const std::string_view> argv);
  void feed(const std::vector<std::string>& argv);
  // Wraps the records fed between these calls (an EXEC's commands) in MULTI ... EXEC, when
  // there are any, so that replay applies the transaction whole.
  void begin_transaction();
  void end_transaction();

  // Records are waiting to be written: replies must wait for flush_before_replies().
  bool has_pending() const { return writer_.has_pending(); }
  // Writes the records of this loop iteration (and fsyncs them under `always`). A failed write
  // under `always` ends the process, as in Redis: replies could not be trusted any more.
  void flush_before_replies(uint64_t now_ms);

  // Timer work: collects a finished rewrite child, starts scheduled and automatic rewrites
  // (unless `other_child`, an RDB save, runs), retries failed writes, and queues the
  // once-a-second fsync.
  void cron(uint64_t now_ms, bool other_child = false);

  // BGREWRITEAOF.
  RewriteStart start_rewrite(uint64_t now_ms);
  // A child runs, or its file is being committed.
  bool rewrite_in_progress() const { return child_pid_ > 0 || commit_ != nullptr; }
  // BGREWRITEAOF where a fork must wait (inside EXEC): the next cron starts it.
  void schedule_rewrite() { rewrite_scheduled_ = true; }
  // After CONFIG SET: turns the file on (a rewrite writes its base first) or off, and applies
  // appendfsync. Returns an empty string or the error text for CONFIG SET.
  std::string apply_options(uint64_t now_ms);
  // SHUTDOWN/SIGTERM: kills a rewrite child, writes and fsyncs the file. Returns false when the
  // file may miss writes.
  bool shutdown(uint64_t now_ms);

  AofInfo info(uint64_t now_ms) const;

  // How a rewrite writes its RDB preamble (aof-use-rdb-preamble): the server's current snapshot
  // options (checksum, access information, clock).
  void set_preamble_options(std::function<RdbSaveOptions()> options) {
    preamble_options_ = std::move(options);
  }

 private:
  enum class State { kOff, kOn, kWaitRewrite };

  std::string path() const;
  void create_dir() const;
  bool open_writer();
  // Finishes the rewrite when its child has exited.
  void collect_child(uint64_t now_ms);
  // The child exited: on success its file gets the records written meanwhile and is committed
  // (fdatasync, rename, directory fsync) in the background while writes go to both files.
  void finish_rewrite(bool child_ok, uint64_t now_ms);
  // Switches to the committed file once the background commit is done (waiting for it with
  // `block`).
  void complete_commit(bool block, uint64_t now_ms);
  // A rewrite ended without a new file.
  void rewrite_failed(uint64_t now_ms);
  // Kills a running rewrite child and removes its temporary file.
  void kill_child();
  bool should_auto_rewrite() const;
  void feed_record(auto&& append);

  engine::Databases& dbs_;
  const conf::PersistenceOptions& options_;
  int selected_db_ = -1;
  State state_ = State::kOff;
  AofWriter writer_;
  uint64_t base_size_ = 0;

  bool in_transaction_ = false;
  bool transaction_opened_ = false;  // MULTI was fed for the current transaction

  pid_t child_pid_ = -1;
  // Its reports (read when INFO asks, hence mutable).
  mutable ChildInfo child_info_;
  std::string child_dir_;
  uint64_t child_started_ms_ = 0;
  std::string rewrite_buffer_;  // records fed while the child runs
  struct Commit;                // a finished rewrite's background commit
  std::shared_ptr<Commit> commit_;
  bool rewrite_scheduled_ = false;
  bool last_rewrite_ok_ = true;
  int64_t last_rewrite_time_sec_ = -1;
  uint64_t rewrites_ = 0;
  uint64_t consecutive_failures_ = 0;
  uint64_t latest_fork_usec_ = 0;
  uint64_t total_forks_ = 0;
  uint64_t next_retry_ms_ = 0;  // a failed rewrite is retried no sooner than this
  std::function<RdbSaveOptions()> preamble_options_;
};

}  // namespace ringkv::persistence
