// Blocking connections for MIGRATE, with Redis's syncio semantics (syncio.c, anet.c): a
// non-blocking connect that waits at most the timeout to become writable, writes and line
// reads that wait at most their timeout and say ETIMEDOUT when it passes. With tls-cluster the
// connection speaks TLS, as Redis's MIGRATE does then.
#include "server/migrate_links.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace ringkv::server {

namespace {

constexpr int64_t kIdleMs = 10 * 1000;  // Redis's MIGRATE_SOCKET_CACHE_TTL
constexpr size_t kMaxLinks = 64;        // MIGRATE_SOCKET_CACHE_ITEMS
constexpr size_t kMaxLine = 1023;       // the 1 024-byte buffers Redis reads replies into

// The cache's key: "host:port", as the command spelled them.
std::string link_name(std::string_view host, std::string_view port) {
  std::string name(host);
  name += ':';
  name += port;
  return name;
}

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits until `fd` is ready for `events` or `timeout_ms` passes (Redis's aeWait).
bool wait_for(int fd, short events, int64_t timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(timeout_ms, 0)));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

// anetTcpNonBlockConnect: the first address that accepts a non-blocking connect; -1 if none.
int start_connect(std::string_view host, std::string_view port) {
  const std::string node(host);
  const std::string service = std::to_string(std::atoi(std::string(port).c_str()));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(node.c_str(), service.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

class MigrateLinks::Link : public engine::MigrateLink {
 public:
  Link(int fd, std::unique_ptr<common::TlsChannel> tls) : fd_(fd), tls_(std::move(tls)) {}
  ~Link() override { ::close(fd_); }

  // With TLS: the handshake, done before anything is written, within `timeout_ms` (Redis's
  // blocking connect for a tls-cluster MIGRATE). False when it fails or times out.
  bool handshake(int64_t timeout_ms) {
    const int64_t start = monotonic_ms();
    if (!tls_->start()) return false;
    while (!tls_->established()) {
      if (!send_output(start, timeout_ms) || !fill(start, timeout_ms)) return false;
    }
    return send_output(start, timeout_ms);
  }

  bool write(std::string_view data, int64_t timeout_ms) override {
    const int64_t start = monotonic_ms();
    if (!tls_) return send_all(data, start, timeout_ms);
    if (!tls_->send(data)) return tls_failed();
    return send_output(start, timeout_ms);
  }

  bool read_line(std::string& line, int64_t timeout_ms) override {
    const int64_t start = monotonic_ms();
    for (;;) {
      // A line ends at its newline, or is cut after kMaxLine bytes (the rest is the next line)
      // as Redis's buffer cuts it.
      const size_t nl = std::string_view(in_).substr(0, kMaxLine).find('\n');
      if (nl != std::string::npos || in_.size() >= kMaxLine) {
        const size_t len = nl != std::string::npos ? nl : kMaxLine;
        line.assign(in_, 0, len);
        in_.erase(0, nl != std::string::npos ? nl + 1 : len);
        if (nl != std::string::npos && !line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      if (!fill(start, timeout_ms)) return false;
    }
  }

  int64_t last_use_ms = 0;

 private:
  bool send_all(std::string_view data, int64_t start, int64_t timeout_ms) const {
    for (;;) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN) return false;
      if (n > 0) data.remove_prefix(static_cast<size_t>(n));
      if (data.empty()) return true;
      if (!waited(POLLOUT, start, timeout_ms)) return false;
    }
  }

  // Sends what the TLS channel has for the network.
  bool send_output(int64_t start, int64_t timeout_ms) {
    std::string out;
    tls_->take_output(out);
    return out.empty() || send_all(out, start, timeout_ms);
  }

  // Reads what the target sent into in_ (decrypted with TLS, whose answers, a handshake's next
  // message, go out at once). False on an error, the end of the stream or the timeout.
  bool fill(int64_t start, int64_t timeout_ms) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        const std::string_view got(buf, static_cast<size_t>(n));
        if (!tls_) {
          in_.append(got);
          return true;
        }
        if (!tls_->receive(got, in_)) return tls_failed();
        return send_output(start, timeout_ms);
      }
      if (n == 0) {
        errno = ECONNRESET;  // the target closed the connection
        return false;
      }
      if (errno != EAGAIN) return false;
      if (!waited(POLLIN, start, timeout_ms)) return false;
    }
  }

  bool tls_failed() const {
    spdlog::debug("MIGRATE over TLS: {}", tls_->error().empty() ? "closed" : tls_->error());
    errno = ECONNRESET;
    return false;
  }

  // Waits for `events` (at least 10 ms, Redis's SYNCIO__RESOLUTION); false with ETIMEDOUT once
  // `timeout_ms` since `start` has passed.
  bool waited(short events, int64_t start, int64_t timeout_ms) const {
    wait_for(fd_, events, std::max<int64_t>(timeout_ms - (monotonic_ms() - start), 10));
    if (monotonic_ms() - start >= timeout_ms) {
      errno = ETIMEDOUT;
      return false;
    }
    return true;
  }

  int fd_;
  std::unique_ptr<common::TlsChannel> tls_;  // null: plain TCP
  std::string in_;                           // read and not yet taken as lines
};

MigrateLinks::MigrateLinks() = default;
MigrateLinks::~MigrateLinks() = default;

engine::MigrateLink* MigrateLinks::get(std::string_view host, std::string_view port,
                                       int64_t timeout_ms, int64_t now_ms,
                                       std::shared_ptr<const common::TlsContext> tls) {
  std::string name = link_name(host, port);
  if (auto it = links_.find(name); it != links_.end()) {
    it->second->last_use_ms = now_ms;
    return it->second.get();
  }
  if (links_.size() >= kMaxLinks) links_.erase(links_.begin());
  const int fd = start_connect(host, port);
  if (fd < 0) return nullptr;
  // As Redis, a plain connection is used even when the wait ends without it being writable:
  // the first write or read then reports the error.
  wait_for(fd, POLLOUT, timeout_ms);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const bool secure = tls != nullptr;
  auto link =
      std::make_unique<Link>(fd, secure ? std::make_unique<common::TlsChannel>(
                                              std::move(tls), common::TlsChannel::Role::kConnect)
                                        : nullptr);
  if (secure && !link->handshake(timeout_ms)) return nullptr;
  link->last_use_ms = now_ms;
  Link* raw = link.get();
  links_.emplace(std::move(name), std::move(link));
  return raw;
}

void MigrateLinks::close(std::string_view host, std::string_view port) {
  links_.erase(link_name(host, port));
}

void MigrateLinks::close_idle(int64_t now_ms) {
  std::erase_if(links_,
                [&](const auto& entry) { return now_ms - entry.second->last_use_ms > kIdleMs; });
}

}  // namespace ringkv::server
