// The Lua debugger's link to its client (engine::DebugLink): a blocking dialogue on the
// client's socket beside the event loop (see BlockingSocket), through the client's TLS session
// on a TLS connection. The debugger runs in the node itself (SCRIPT DEBUG SYNC) or in a forked
// copy that owns the connection from then on (YES), so the session's records continue the
// client's TLS session either way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/tls.h"
#include "engine/command.h"
#include "server/blocking_socket.h"

namespace ringkv::server {

class DebugLink final : public engine::DebugLink {
 public:
  // `tls`: the connection's TLS session, null on a plain connection; both outlive the link.
  DebugLink(int fd, common::TlsChannel* tls) : fd_(fd), socket_(fd, tls) {}

  void write_all(std::string_view data) override;
  bool read_some(std::string& in, int64_t idle_ms) override;
  void close() override;

 private:
  int fd_;
  BlockingSocket socket_;
};

}  // namespace ringkv::server
