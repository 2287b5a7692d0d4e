#include "server/blocking_socket.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>

namespace ringkv::server {

namespace {

constexpr int64_t kSyncioResolutionMs = 10;  // Redis's SYNCIO__RESOLUTION
constexpr size_t kBlockingReadChunk = 16 * 1024;

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

BlockingSocket::Deadline BlockingSocket::Deadline::in(int64_t timeout_ms) {
  return {monotonic_ms(), timeout_ms};
}

bool BlockingSocket::waited(short events, Deadline deadline) const {
  pollfd p{fd_, events, 0};
  if (deadline.timeout_ms <= 0) {
    while (::poll(&p, 1, -1) < 0) {
      if (errno != EINTR) return false;
    }
    return true;
  }
  const int64_t left = deadline.timeout_ms - (monotonic_ms() - deadline.start_ms);
  if (::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left, kSyncioResolutionMs, INT_MAX))) <
          0 &&
      errno != EINTR) {
    return false;
  }
  if (monotonic_ms() - deadline.start_ms >= deadline.timeout_ms) {
    errno = ETIMEDOUT;
    return false;
  }
  return true;
}

bool BlockingSocket::send_raw(std::string_view data, Deadline deadline) const {
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!waited(POLLOUT, deadline)) return false;
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

bool BlockingSocket::recv_raw(std::string& in, Deadline deadline) const {
  char buf[kBlockingReadChunk];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) {
      errno = ECONNRESET;  // the other side closed the connection
      return false;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!waited(POLLIN, deadline)) return false;
    } else if (errno != EINTR) {
      return false;
    }
  }
}

bool BlockingSocket::send_tls_output(Deadline deadline) {
  std::string out;
  tls_->take_output(out);
  return out.empty() || send_raw(out, deadline);
}

bool BlockingSocket::tls_failed() const {
  spdlog::debug("blocking TLS connection: {}", tls_->error().empty() ? "closed" : tls_->error());
  errno = ECONNRESET;
  return false;
}

bool BlockingSocket::handshake(std::string& in, Deadline deadline) {
  if (!tls_->start()) return tls_failed();
  while (!tls_->established()) {
    if (!send_tls_output(deadline)) return false;
    std::string records;
    if (!recv_raw(records, deadline)) return false;
    if (!tls_->receive(records, in)) {
      send_tls_output(deadline);  // the alert
      return tls_failed();
    }
  }
  return send_tls_output(deadline);
}

bool BlockingSocket::write(std::string_view data, Deadline deadline) {
  if (tls_ == nullptr) return send_raw(data, deadline);
  if (!tls_->send(data)) return tls_failed();
  return send_tls_output(deadline);
}

bool BlockingSocket::read_some(std::string& in, Deadline deadline) {
  if (tls_ == nullptr) return recv_raw(in, deadline);
  // Records until one carries data: a record may hold none (a session ticket, a key update).
  const size_t before = in.size();
  while (in.size() == before) {
    std::string records;
    if (!recv_raw(records, deadline)) return false;
    const bool open = tls_->receive(records, in);
    send_tls_output(deadline);  // what the session answers (an alert when it fails)
    if (!open) return tls_failed();
  }
  return true;
}

void BlockingSocket::close_notify(Deadline deadline) {
  if (tls_ == nullptr) return;
  tls_->close_notify();
  send_tls_output(deadline);
}

}  // namespace ringkv::server
