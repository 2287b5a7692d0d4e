// AofWriter: the open append-only file. Commands are appended to an in-memory buffer as RESP
// requests; flush() writes the buffer with one write() per loop iteration and makes it durable
// by the fsync policy: `always` fdatasyncs on the loop right after the write (one group commit
// for every write of the iteration), `everysec` queues an fdatasync on a background thread at
// most once a second, `no` leaves it to the kernel.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/background_jobs.h"

namespace ringkv::persistence {

enum class FsyncPolicy { kAlways, kEverysec, kNo };

// The policy named by conf's appendfsync value ("always", "everysec", "no").
FsyncPolicy parse_fsync_policy(std::string_view name);

class AofWriter {
 public:
  AofWriter() = default;
  // Writes, fsyncs and closes an open file.
  ~AofWriter();
  AofWriter(const AofWriter&) = delete;
  AofWriter& operator=(const AofWriter&) = delete;

  // Opens (creating it when absent) `path` for appending. Returns an empty string or the error.
  std::string open(const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  void set_policy(FsyncPolicy policy) { policy_ = policy; }
  FsyncPolicy policy() const { return policy_; }

  // Adds one command to the buffer.
  void append(std::span<const std::string_view> argv);
  void append(const std::vector<std::string>& argv);
  bool has_pending() const { return !buf_.empty(); }
  // The buffered bytes from `offset` on (what the last appends added after buffer_length()
  // was `offset`).
  std::string_view buffered_since(size_t offset) const {
    return std::string_view(buf_).substr(offset);
  }

  // Writes the buffer and applies the fsync policy. On a failed write the file is cut back to
  // its last whole record and the buffer kept for the next try; returns false.
  bool flush(uint64_t now_ms);
  // Writes the buffer, fdatasyncs on this thread and waits for background fsyncs (SHUTDOWN,
  // turning the file off). Returns false when the data may not be on disk.
  bool sync_now();
  // Closes after sync_now().
  void close();
  // While a finished rewrite (`fd`, open for appending) is made durable and renamed in the
  // background, every flush also writes the records there (and under `always` fdatasyncs them),
  // so whichever file the path names after a crash holds every acknowledged write.
  void set_mirror(int fd) { mirror_fd_ = fd; }
  bool has_mirror() const { return mirror_fd_ >= 0; }
  // The mirror, now renamed to `path`, becomes the file; the old descriptor is closed in the
  // background (closing the last link of a big file frees its blocks, which can take a while).
  // The buffer must have been flushed.
  void promote_mirror(const std::string& path);
  // Stops mirroring and closes the mirror (its rename failed).
  void drop_mirror();
  // Runs `job` on the writer's background thread, after the fsyncs queued before it.
  void run_in_background(std::function<void()> job) { jobs_.submit(std::move(job)); }
  void wait_for_background() { jobs_.drain(); }

  // For INFO persistence.
  uint64_t current_size() const { return size_; }
  size_t buffer_length() const { return buf_.size(); }
  bool last_write_ok() const { return last_write_ok_; }
  // The errno of the last failed write (meaningful while !last_write_ok()).
  int last_write_errno() const { return last_write_errno_; }
  uint64_t pending_fsyncs() const { return jobs_.pending(); }
  uint64_t delayed_fsyncs() const { return delayed_fsyncs_; }

 private:
  // write()s all of `data`; on failure truncates back to size_ and returns false.
  bool write_all(std::string_view data);
  // Writes `data` to the mirror; a failure is logged (the rewrite's file then misses records).
  void write_mirror(std::string_view data);
  void queue_background_fsync(uint64_t now_ms);

  int fd_ = -1;
  int mirror_fd_ = -1;
  std::string path_;
  FsyncPolicy policy_ = FsyncPolicy::kEverysec;
  std::string buf_;
  uint64_t size_ = 0;
  bool last_write_ok_ = true;
  int last_write_errno_ = 0;
  bool unsynced_ = false;  // written since the last fsync was queued
  uint64_t last_fsync_ms_ = 0;
  uint64_t delayed_fsyncs_ = 0;
  // Loop time a background fsync started; 0 when none runs.
  std::atomic<uint64_t> fsync_started_ms_{0};
  common::BackgroundJobs jobs_;
};

}  // namespace ringkv::persistence
