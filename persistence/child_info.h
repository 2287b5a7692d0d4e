// What a forked child (BGSAVE, an append-only rewrite) tells the server while it writes, as
// Redis's child info pipe carries it: the keys written so far and the memory copied on write
// since the fork — the child's private dirty pages, which are the pages either process wrote
// since. The server shows it in INFO persistence (current_cow_*, current_save_keys_*,
// current_fork_perc, and rdb_last_cow_size / aof_last_cow_size once the child is done).
#pragma once

#include <cstdint>

namespace ringkv::persistence {

// One report: fixed size, written in one write() (a pipe never splits it).
struct ChildReport {
  uint64_t keys = 0;        // keys written so far
  uint64_t cow_bytes = 0;   // private dirty bytes at the last measurement
  int64_t cow_unix_ms = 0;  // when that was measured (0: not yet)
  uint64_t done = 0;        // 1 in the child's last report (everything written)
};

// The child's private dirty bytes (/proc/self/smaps_rollup), 0 when it cannot be read.
uint64_t private_dirty_bytes();

// The running child's figures as INFO persistence shows them (all 0 when none runs).
struct ChildFigures {
  uint64_t cow_peak = 0;
  uint64_t cow_size = 0;
  uint64_t cow_size_age_s = 0;  // since cow_size was measured
  double fork_perc = 0;         // keys processed of the keys there were at the fork, in %
  uint64_t keys_processed = 0;
  uint64_t keys_total = 0;
};

// The server's side: a pipe opened before each fork, read by the cron.
class ChildInfo {
 public:
  ChildInfo() = default;
  ~ChildInfo() { close(); }
  ChildInfo(const ChildInfo&) = delete;
  ChildInfo& operator=(const ChildInfo&) = delete;

  // Before forking a child of `keys` keys: a fresh pipe. Returns the descriptor the child
  // writes to (-1 when no pipe could be made: the child then reports nothing).
  int open(uint64_t keys);
  // After the fork: the server closes its copy of the child's end.
  void forked();
  // Reads what the child reported since (the latest report wins); the peak is kept.
  void poll();
  // The child ended: reads its last reports, closes the pipe. When it wrote everything, the
  // copy-on-write size of its last report is what INFO shows as the last child's
  // (rdb_last_cow_size, aof_last_cow_size).
  void finish();

  bool running() const { return read_fd_ >= 0; }
  ChildFigures figures(int64_t now_unix_ms) const;
  // The copy-on-write size the last child that wrote everything reported last.
  uint64_t last_cow_size() const { return last_cow_size_; }

 private:
  void close();

  int read_fd_ = -1;
  int write_fd_ = -1;
  ChildReport last_;
  uint64_t peak_ = 0;
  uint64_t keys_total_ = 0;
  uint64_t last_cow_size_ = 0;
};

// The child's side: sends reports on the pipe, measuring copy-on-write at most every
// kCowIntervalMs (reading smaps costs more than writing a few keys).
class ChildReporter {
 public:
  static constexpr int64_t kCowIntervalMs = 100;
  explicit ChildReporter(int fd) : fd_(fd) {}
  // Progress: `keys` written so far (sent at most every kCowIntervalMs).
  void progress(uint64_t keys);
  // Everything is written: the last report, with a fresh measurement.
  void done(uint64_t keys);

 private:
  void send(uint64_t keys, bool done);

  int fd_;
  int64_t last_sent_ms_ = 0;
};

}  // namespace ringkv::persistence
