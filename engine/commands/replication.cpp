// Replication commands: WAIT and ROLE (see replication.h).
#include "engine/commands/replication.h"

#include "common/numbers.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

void cmd_wait(CommandContext& ctx) {
  const std::optional<int64_t> replicas = common::parse_integer(ctx.argv[1]);
  if (!replicas) {
    ctx.reply.error(protocol::err::kNotInteger);
    return;
  }
  const std::optional<int64_t> timeout = common::parse_integer(ctx.argv[2]);
  if (!timeout) {
    ctx.reply.error("ERR timeout is not an integer or out of range");
    return;
  }
  if (*timeout < 0) {
    ctx.reply.error("ERR timeout is negative");
    return;
  }
  ctx.server->wait_replicas(ctx, *replicas, *timeout);
}

void cmd_role(CommandContext& ctx) { ctx.server->role(ctx); }

}  // namespace

void ServerControl::wait_replicas(CommandContext& ctx, int64_t, int64_t) { ctx.reply.integer(0); }

void ServerControl::role(CommandContext& ctx) {
  ctx.reply.array(3);
  ctx.reply.bulk("master");
  ctx.reply.integer(0);
  ctx.reply.array(0);
}

namespace {

const CommandSpec kReplicationCommands[] = {
    {.name = "wait",
     .arity = 3,
     .flags = kNoscript,
     .handler = cmd_wait,
     .group = "generic",
     .since = "3.0.0",
     .summary = "Wait for the synchronous replication of all the write commands sent in the "
                "context of the current connection",
     .complexity = "O(1)",
     .syntax = "numreplicas<integer> timeout<integer>",
     .acl_categories = "slow connection",
     .tips = "request_policy:all_shards response_policy:agg_min"},
    {.name = "role",
     .arity = 1,
     .flags = kNoscript | kLoading | kStale | kFast,
     .handler = cmd_role,
     .group = "server",
     .since = "2.8.12",
     .summary = "Return the role of the instance in the context of replication",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin fast dangerous"},
};

}  // namespace

std::span<const CommandSpec> replication_commands() { return kReplicationCommands; }

}  // namespace ringkv::engine
