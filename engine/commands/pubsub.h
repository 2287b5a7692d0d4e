// Publish/subscribe: the family's command-table rows, and the handlers that code outside the family
// (the server, the tests) calls directly.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> pubsub_commands();

// PING from a RESP2 client in subscribed mode: ["pong", message-or-empty], as Redis replies
// there (the server runs it instead of PING's row handler in that context).
void cmd_ping_subscribed(CommandContext& ctx);

}  // namespace ringkv::engine
