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
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "server/blocking_socket.h"

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
  Link(int fd, std::unique_ptr<common::TlsChannel> tls)
      : fd_(fd), tls_(std::move(tls)), socket_(fd, tls_.get()) {}
  ~Link() override { ::close(fd_); }

  // With TLS: the handshake, done before anything is written, within `timeout_ms` (Redis's
  // blocking connect for a tls-cluster MIGRATE). False when it fails or times out.
  bool handshake(int64_t timeout_ms) {
    return socket_.handshake(in_, BlockingSocket::Deadline::in(timeout_ms));
  }

  bool write(std::string_view data, int64_t timeout_ms) override {
    return socket_.write(data, BlockingSocket::Deadline::in(timeout_ms));
  }

  bool read_line(std::string& line, int64_t timeout_ms) override {
    const auto deadline = BlockingSocket::Deadline::in(timeout_ms);
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
      if (!socket_.read_some(in_, deadline)) return false;
    }
  }

  int64_t last_use_ms = 0;

 private:
  int fd_;
  std::unique_ptr<common::TlsChannel> tls_;  // null: plain TCP
  BlockingSocket socket_;
  std::string in_;  // read and not yet taken as lines
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
