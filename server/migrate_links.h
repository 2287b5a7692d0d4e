// MIGRATE's connections to its targets, as Redis's cached migrate sockets: one per host:port,
// opened on first use with a blocking connect bounded by the command's timeout, kept for the
// next MIGRATE to the same target and closed after 10 s without use (at most 64 at once: a new
// one then closes another). With tls-cluster they speak TLS, as Redis's do.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/tls.h"
#include "engine/command.h"

namespace ringkv::server {

class MigrateLinks {
 public:
  MigrateLinks();
  MigrateLinks(const MigrateLinks&) = delete;
  MigrateLinks& operator=(const MigrateLinks&) = delete;
  ~MigrateLinks();

  // The connection to host:port (port read as C's atoi reads it), opened if there is none,
  // over TLS with `tls` (tls-cluster); null when the connection cannot be started (no such
  // host, refused at once) or its TLS handshake fails or does not end within the timeout.
  engine::MigrateLink* get(std::string_view host, std::string_view port, int64_t timeout_ms,
                           int64_t now_ms, std::shared_ptr<const common::TlsContext> tls);
  void close(std::string_view host, std::string_view port);
  // Closes the connections unused for 10 s (called from the server's cron).
  void close_idle(int64_t now_ms);
  size_t size() const { return links_.size(); }

 private:
  class Link;
  std::map<std::string, std::unique_ptr<Link>, std::less<>> links_;
};

}  // namespace ringkv::server
