#include "server/debug_link.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace ringkv::server {

namespace {

// How long one write waits for the socket (Redis sets a 5 s send timeout on the blocking one).
constexpr int kSendTimeoutMs = 5000;
constexpr size_t kDebugReadChunk = 16 * 1024;

}  // namespace

void DebugLink::write_socket(std::string_view data) const {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{.fd = fd_, .events = POLLOUT, .revents = 0};
      if (::poll(&p, 1, kSendTimeoutMs) > 0) continue;
    }
    return;  // left for the next read to notice
  }
}

bool DebugLink::read_socket(std::string& in, int64_t idle_ms) const {
  char buf[kDebugReadChunk];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    const int ready =
        ::poll(&p, 1, idle_ms > 0 ? static_cast<int>(std::min<int64_t>(idle_ms, INT_MAX)) : -1);
    if (ready == 0) return false;
    if (ready < 0 && errno != EINTR) return false;
  }
}

void DebugLink::send_tls_output() const {
  std::string wire;
  tls_->take_output(wire);
  write_socket(wire);
}

void DebugLink::write_all(std::string_view data) {
  if (tls_ == nullptr) {
    write_socket(data);
    return;
  }
  if (tls_->send(data)) send_tls_output();
}

bool DebugLink::read_some(std::string& in, int64_t idle_ms) {
  if (tls_ == nullptr) return read_socket(in, idle_ms);
  // Records until one carries data: a record may hold none (a session ticket, a key update).
  const size_t before = in.size();
  while (in.size() == before) {
    std::string records;
    if (!read_socket(records, idle_ms)) return false;
    const bool open = tls_->receive(records, in);
    send_tls_output();  // what the session answers (an alert when it fails)
    if (!open) return false;
  }
  return true;
}

void DebugLink::close() {
  if (tls_ != nullptr) {
    tls_->close_notify();
    send_tls_output();
  }
  ::close(fd_);
}

}  // namespace ringkv::server
