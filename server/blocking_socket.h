// A socket used in a blocking way beside the event loop, as Redis's syncio does: MIGRATE's
// links to their targets and the Lua debugger's dialogue with its client. Each call waits for
// the socket with poll(), at least 10 ms at a time (Redis's SYNCIO__RESOLUTION), and fails with
// errno ETIMEDOUT once its deadline has passed. With a TLS session the bytes go through it: what
// is written is encrypted, what is read decrypted, and the session's own answers (a
// handshake's next message, an alert) go out as they arise.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/tls.h"

namespace ringkv::server {

class BlockingSocket {
 public:
  // How long a call may wait: `timeout_ms` from `start_ms` (monotonic); none when 0.
  struct Deadline {
    int64_t start_ms = 0;
    int64_t timeout_ms = 0;
    static Deadline in(int64_t timeout_ms);
  };

  // `tls`: the connection's TLS session, null for plain TCP; not owned, it outlives the socket.
  BlockingSocket(int fd, common::TlsChannel* tls) : fd_(fd), tls_(tls) {}

  // A connecting TLS session's handshake, before anything is written; application data that
  // arrives with its last message is appended to `in`.
  bool handshake(std::string& in, Deadline deadline);
  // Writes all of `data`. False on an error or the deadline (errno says which).
  bool write(std::string_view data, Deadline deadline);
  // Appends to `in` what the other side sent (at least one byte of it); false when it closed
  // (errno ECONNRESET), on an error or at the deadline.
  bool read_some(std::string& in, Deadline deadline);
  // Ends a TLS session in order (its close_notify), a best effort.
  void close_notify(Deadline deadline);

 private:
  bool send_raw(std::string_view data, Deadline deadline) const;
  bool recv_raw(std::string& in, Deadline deadline) const;
  bool send_tls_output(Deadline deadline);
  bool tls_failed() const;
  bool waited(short events, Deadline deadline) const;

  int fd_;
  common::TlsChannel* tls_;
};

}  // namespace ringkv::server
