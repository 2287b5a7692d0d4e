// Blocking connections for MIGRATE, with Redis's syncio semantics (syncio.c, anet.c): a
// non-blocking connect that waits at most the timeout to become writable, writes and line
// reads that wait at most their timeout and say ETIMEDOUT when it passes.
#include "server/migrate_links.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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
  explicit Link(int fd) : fd_(fd) {}
  ~Link() override { ::close(fd_); }

  bool write(std::string_view data, int64_t timeout_ms) override {
    const int64_t start = monotonic_ms();
    for (;;) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN) return false;
      if (n > 0) data.remove_prefix(static_cast<size_t>(n));
      if (data.empty()) return true;
      if (!waited(POLLOUT, start, timeout_ms)) return false;
    }
  }

  bool read_line(std::string& line, int64_t timeout_ms) override {
    line.clear();
    const int64_t start = monotonic_ms();
    while (line.size() < kMaxLine) {
      char c = 0;
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n == 1) {
        if (c == '\n') {
          if (!line.empty() && line.back() == '\r') line.pop_back();
          return true;
        }
        line.push_back(c);
        continue;
      }
      if (n == 0) {
        errno = ECONNRESET;  // the target closed the connection
        return false;
      }
      if (errno != EAGAIN) return false;
      if (!waited(POLLIN, start, timeout_ms)) return false;
    }
    return true;  // a longer line is cut, as Redis's buffer cuts it
  }

  int64_t last_use_ms = 0;

 private:
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
};

MigrateLinks::MigrateLinks() = default;
MigrateLinks::~MigrateLinks() = default;

engine::MigrateLink* MigrateLinks::get(std::string_view host, std::string_view port,
                                       int64_t timeout_ms, int64_t now_ms) {
  std::string name = link_name(host, port);
  if (auto it = links_.find(name); it != links_.end()) {
    it->second->last_use_ms = now_ms;
    return it->second.get();
  }
  if (links_.size() >= kMaxLinks) links_.erase(links_.begin());
  const int fd = start_connect(host, port);
  if (fd < 0) return nullptr;
  // As Redis, the connection is used even when the wait ends without it being writable: the
  // first write or read then reports the error.
  wait_for(fd, POLLOUT, timeout_ms);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto link = std::make_unique<Link>(fd);
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
