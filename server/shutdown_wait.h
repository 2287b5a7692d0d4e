// A shutdown waiting for the replicas of this node's keys to have every write before the node
// exits (shutdown-timeout, as Redis 7 waits for its lagging replicas): SHUTDOWN without NOW, or
// SIGTERM/SIGINT without `now` in shutdown-on-sigterm/-sigint. Meanwhile clients' writes wait
// (as under CLIENT PAUSE WRITE) and writes relayed by peers are refused (TRYAGAIN), so that the
// replicas can catch up; once they have (or the time is up) the shutdown goes on — saving, then
// exiting — and SHUTDOWN ABORT ends the wait, the node staying up (server/shutdown.cpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "server/connection.h"

namespace ringkv::server {

struct ShutdownWait {
  engine::ServerControl::ShutdownFlags flags;  // what the shutdown does once the wait ends
  int64_t deadline_ms = 0;                     // unix time it gives up waiting
  // The SHUTDOWN clients waiting for the outcome: nothing if the node exits (they are closed),
  // an error if it stays up.
  std::vector<Connection::ReplySlot> clients;
  // A CLIENT PAUSE running when the wait began (its end and kind), restored if the node stays up.
  int64_t pause_until_ms = 0;
  bool pause_all = false;
};

// What a write relayed by a peer gets while the wait runs.
inline constexpr std::string_view kShuttingDownError =
    "TRYAGAIN this member is shutting down: its replicas are taking its last writes";

}  // namespace ringkv::server
