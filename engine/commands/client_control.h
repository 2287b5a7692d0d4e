// Client controls: CLIENT REPLY, PAUSE/UNPAUSE, NO-EVICT, UNBLOCK, TRACKING, CACHING, GETREDIR,
// TRACKINGINFO and HELP. The handlers check arguments with Redis 7.0.15's error texts; the state
// they change lives with the client (ClientSession) or the server (ServerControl).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// A client's CLIENT TRACKING state (Redis's CLIENT_TRACKING* flags and redirection).
struct ClientTracking {
  bool on = false;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  // CLIENT CACHING YES (OPTIN) or NO (OPTOUT) applies to the client's next command.
  bool caching = false;
  // The client invalidations are redirected to has gone: nothing more is sent.
  bool broken_redirect = false;
  uint64_t redirect = 0;              // 0 = the client itself
  std::vector<std::string> prefixes;  // BCAST prefixes, in the order they were added
};

// Whether a read by a client with this tracking state remembers its keys (default mode; OPTIN
// only after CLIENT CACHING YES, OPTOUT unless CLIENT CACHING NO).
inline bool tracking_remembers_reads(const ClientTracking& t) {
  return t.on && !t.bcast && !(t.optin && !t.caching) && !(t.optout && t.caching);
}

void cmd_client_reply(CommandContext& ctx);
void cmd_client_pause(CommandContext& ctx);
void cmd_client_unpause(CommandContext& ctx);
void cmd_client_no_evict(CommandContext& ctx);
void cmd_client_unblock(CommandContext& ctx);
void cmd_client_tracking(CommandContext& ctx);
void cmd_client_caching(CommandContext& ctx);
void cmd_client_getredir(CommandContext& ctx);
void cmd_client_trackinginfo(CommandContext& ctx);
void cmd_client_help(CommandContext& ctx);

}  // namespace ringkv::engine
