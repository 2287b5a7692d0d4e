#include "persistence/child_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "common/clock.h"

namespace ringkv::persistence {

using common::unix_ms;

uint64_t private_dirty_bytes() {
  // The rollup sums every mapping's lines in one read (smaps would list each mapping).
  FILE* f = std::fopen("/proc/self/smaps_rollup", "re");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long v = 0;
    if (std::sscanf(line, "Private_Dirty: %llu kB", &v) == 1) kb += v;
  }
  std::fclose(f);
  return kb * 1024;
}

int ChildInfo::open(uint64_t keys) {
  close();
  last_ = ChildReport{};
  peak_ = 0;
  keys_total_ = keys;
  int fds[2];
  // Neither end blocks: a server busy elsewhere never stalls the child, which then drops a
  // report (the next one says more).
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  return write_fd_;
}

void ChildInfo::forked() {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
}

void ChildInfo::poll() {
  if (read_fd_ < 0) return;
  ChildReport r;
  while (::read(read_fd_, &r, sizeof r) == static_cast<ssize_t>(sizeof r)) {
    last_ = r;
    peak_ = std::max(peak_, r.cow_bytes);
  }
}

void ChildInfo::finish() {
  poll();
  close();
  if (last_.done != 0) last_cow_size_ = last_.cow_bytes;
}

ChildFigures ChildInfo::figures(int64_t now_unix_ms) const {
  ChildFigures f;
  if (!running()) return f;
  f.cow_peak = peak_;
  f.cow_size = last_.cow_bytes;
  if (last_.cow_unix_ms != 0 && now_unix_ms > last_.cow_unix_ms) {
    f.cow_size_age_s = static_cast<uint64_t>(now_unix_ms - last_.cow_unix_ms) / 1000;
  }
  f.keys_processed = last_.keys;
  f.keys_total = keys_total_;
  if (keys_total_ > 0) {
    f.fork_perc = static_cast<double>(last_.keys) / static_cast<double>(keys_total_) * 100;
  }
  return f;
}

void ChildInfo::close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

void ChildReporter::progress(uint64_t keys) {
  if (fd_ < 0) return;
  const int64_t now = unix_ms();
  if (now - last_sent_ms_ < kCowIntervalMs) return;
  send(keys, false);
}

void ChildReporter::done(uint64_t keys) {
  if (fd_ >= 0) send(keys, true);
}

void ChildReporter::send(uint64_t keys, bool done) {
  ChildReport r;
  r.keys = keys;
  r.cow_bytes = private_dirty_bytes();
  r.cow_unix_ms = unix_ms();
  r.done = done ? 1 : 0;
  last_sent_ms_ = r.cow_unix_ms;
  // A full pipe drops the report; an interrupted write is tried again.
  while (::write(fd_, &r, sizeof r) < 0 && errno == EINTR) {
  }
}

}  // namespace ringkv::persistence
