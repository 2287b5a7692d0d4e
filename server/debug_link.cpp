#include "server/debug_link.h"

#include <unistd.h>

namespace ringkv::server {

namespace {

// How long a write may wait for the socket (Redis sets a 5 s send timeout on the blocking one).
constexpr int64_t kSendTimeoutMs = 5000;

}  // namespace

void DebugLink::write_all(std::string_view data) {
  // An error is left for the next read to notice.
  socket_.write(data, BlockingSocket::Deadline::in(kSendTimeoutMs));
}

bool DebugLink::read_some(std::string& in, int64_t idle_ms) {
  return socket_.read_some(in, BlockingSocket::Deadline::in(idle_ms));
}

void DebugLink::close() {
  socket_.close_notify(BlockingSocket::Deadline::in(kSendTimeoutMs));
  ::close(fd_);
}

}  // namespace ringkv::server
