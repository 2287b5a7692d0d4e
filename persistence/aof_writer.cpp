#include "persistence/aof_writer.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/request_writer.h"

namespace ringkv::persistence {
namespace {

// A background fsync running longer than this means the disk cannot keep up (Redis's limit for
// postponing writes); each write made meanwhile is counted in aof_delayed_fsync.
constexpr uint64_t kSlowFsyncMs = 2000;

}  // namespace

FsyncPolicy parse_fsync_policy(std::string_view name) {
  if (name == "always") return FsyncPolicy::kAlways;
  if (name == "no") return FsyncPolicy::kNo;
  return FsyncPolicy::kEverysec;
}

AofWriter::~AofWriter() { close(); }

std::string AofWriter::open(const std::string& path) {
  close();
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return "can't open the append-only file " + path + ": " + std::strerror(errno);
  struct stat st {};
  fstat(fd, &st);
  fd_ = fd;
  path_ = path;
  size_ = static_cast<uint64_t>(st.st_size);
  last_write_ok_ = true;
  unsynced_ = false;
  return {};
}

void AofWriter::append(std::span<const std::string_view> argv) {
  protocol::append_request(buf_, argv);
}

void AofWriter::append(const std::vector<std::string>& argv) {
  protocol::append_request_header(buf_, argv.size());
  for (const std::string& a : argv) protocol::append_request_bulk(buf_, a);
}

bool AofWriter::write_all(std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : ENOSPC;
    if (last_write_ok_) {
      spdlog::error("error writing to the append-only file {}: {}", path_, std::strerror(err));
    }
    // A partial record would make the file unreadable: cut it off and retry it whole later.
    if (done > 0 && ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      spdlog::error("could not remove a partial record from the append-only file {}: {}", path_,
                    std::strerror(errno));
    }
    last_write_ok_ = false;
    last_write_errno_ = err;
    return false;
  }
  size_ += data.size();
  if (!last_write_ok_) spdlog::warn("append-only file write error resolved: writes succeed again");
  last_write_ok_ = true;
  return true;
}

bool AofWriter::flush(uint64_t now_ms) {
  if (mirror_fd_ >= 0 && !buf_.empty()) {
    write_mirror(buf_);
    if (policy_ == FsyncPolicy::kAlways) fdatasync(mirror_fd_);
  }
  if (fd_ < 0) {
    buf_.clear();
    return true;
  }
  if (!buf_.empty()) {
    const uint64_t started = fsync_started_ms_.load(std::memory_order_acquire);
    if (policy_ == FsyncPolicy::kEverysec && started != 0 && now_ms - started > kSlowFsyncMs) {
      // Redis postpones the write here; ringkv writes anyway (replies must not leave before
      // their records are written), which may wait for the fsync inside the kernel.
      if (delayed_fsyncs_++ % 1000 == 0) {
        spdlog::warn(
            "asynchronous AOF fsync is taking too long (disk is busy?); writing the AOF buffer "
            "without waiting for it, this may slow down the server");
      }
    }
    if (!write_all(buf_)) return false;
    buf_.clear();
    unsynced_ = true;
  }
  if (!unsynced_) return true;
  switch (policy_) {
    case FsyncPolicy::kAlways:
      if (fdatasync(fd_) != 0) {
        spdlog::error("fdatasync of the append-only file {} failed: {}", path_,
                      std::strerror(errno));
        last_write_ok_ = false;
        return false;
      }
      unsynced_ = false;
      last_fsync_ms_ = now_ms;
      break;
    case FsyncPolicy::kEverysec:
      if (now_ms - last_fsync_ms_ >= 1000 && fsync_started_ms_.load() == 0) {
        queue_background_fsync(now_ms);
      }
      break;
    case FsyncPolicy::kNo:
      unsynced_ = false;
      break;
  }
  return true;
}

void AofWriter::queue_background_fsync(uint64_t now_ms) {
  unsynced_ = false;
  last_fsync_ms_ = now_ms;
  fsync_started_ms_.store(now_ms == 0 ? 1 : now_ms, std::memory_order_release);
  const int fd = fd_;
  jobs_.submit([this, fd] {
    fdatasync(fd);
    fsync_started_ms_.store(0, std::memory_order_release);
  });
}

bool AofWriter::sync_now() {
  if (fd_ < 0) return true;
  bool ok = buf_.empty() || write_all(buf_);
  if (ok) buf_.clear();
  jobs_.drain();
  if (fdatasync(fd_) != 0) ok = false;
  unsynced_ = false;
  return ok;
}

void AofWriter::close() {
  drop_mirror();
  if (fd_ < 0) return;
  if (!sync_now()) spdlog::error("the append-only file {} may miss its last writes", path_);
  ::close(fd_);
  fd_ = -1;
  buf_.clear();
}

void AofWriter::write_mirror(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(mirror_fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::error("error writing to the rewritten append-only file: {}",
                    std::strerror(n < 0 ? errno : ENOSPC));
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void AofWriter::promote_mirror(const std::string& path) {
  const int old = fd_;
  struct stat st {};
  fstat(mirror_fd_, &st);
  fd_ = mirror_fd_;
  mirror_fd_ = -1;
  path_ = path;
  size_ = static_cast<uint64_t>(st.st_size);
  // Under `always` every record in it was fdatasynced; otherwise the policy takes over from here.
  unsynced_ = policy_ != FsyncPolicy::kAlways;
  last_write_ok_ = true;
  if (old >= 0) jobs_.submit([old] { ::close(old); });
}

void AofWriter::drop_mirror() {
  if (mirror_fd_ < 0) return;
  ::close(mirror_fd_);
  mirror_fd_ = -1;
}

}  // namespace ringkv::persistence
