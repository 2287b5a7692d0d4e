// The Lua debugger's link to its client (engine::DebugLink): blocking reads and writes on the
// client's socket, beside the event loop (Redis's ldb sets its client's socket blocking the
// same way), through the client's TLS session on a TLS connection. The debugger runs in the
// node itself (SCRIPT DEBUG SYNC) or in a forked copy that owns the connection from then on
// (YES), so the session's records continue the client's TLS session either way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/tls.h"
#include "engine/command.h"

namespace ringkv::server {

class DebugLink final : public engine::DebugLink {
 public:
  // `tls`: the connection's TLS session, null on a plain connection; both outlive the link.
  DebugLink(int fd, common::TlsChannel* tls) : fd_(fd), tls_(tls) {}

  void write_all(std::string_view data) override;
  bool read_some(std::string& in, int64_t idle_ms) override;
  void close() override;

 private:
  // The socket's own bytes (TLS records on a TLS connection).
  void write_socket(std::string_view data) const;
  bool read_socket(std::string& in, int64_t idle_ms) const;
  // Writes what the TLS session has for the network.
  void send_tls_output() const;

  int fd_;
  common::TlsChannel* tls_;
};

}  // namespace ringkv::server
