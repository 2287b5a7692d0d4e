// Replication commands: WAIT, ROLE, REPLICAOF, SLAVEOF and FAILOVER (see replication.h).
#include "engine/commands/replication.h"

#include <string>
#include <string_view>

#include "common/numbers.h"
#include "engine/commands/handler_args.h"
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

// Redis Cluster's refusal of REPLICAOF and FAILOVER, on a cluster node (the cluster keeps and
// fails over its copies itself). Returns whether it refused.
bool refused_in_cluster(CommandContext& ctx, std::string_view command) {
  if (ctx.server == nullptr || !ctx.server->clustered()) return false;
  ctx.reply.error("ERR " + std::string(command) + " not allowed in cluster mode.");
  return true;
}

// REPLICAOF / SLAVEOF: a node is always a master. NO ONE answers +OK (as a Redis master does);
// another master is refused once its port checked out as Redis checks it: ringkv keeps its copies
// within its cluster, and CLUSTER IMPORT copies a redis-server's keys live.
void cmd_replicaof(CommandContext& ctx) {
  if (refused_in_cluster(ctx, "REPLICAOF")) return;
  if (is(ctx.argv[1], "no") && is(ctx.argv[2], "one")) {
    ctx.reply.ok();
    return;
  }
  const std::optional<int64_t> port = common::parse_integer(ctx.argv[2]);
  if (!port || *port < 0 || *port > 65535) {
    ctx.reply.error("ERR Invalid master port");
    return;
  }
  ctx.reply.error(
      "ERR ringkv can't replicate another server: it keeps copies within its cluster "
      "(replication-factor), and CLUSTER IMPORT copies a redis-server's keys live");
}

// FAILOVER: its options checked as Redis checks them; a node never has replicas of its own (a
// redis-server can't replicate it), so there is never a failover to start or abort.
void cmd_failover(CommandContext& ctx) {
  const auto& argv = ctx.argv;
  if (refused_in_cluster(ctx, "FAILOVER")) return;
  if (argv.size() == 2 && is(argv[1], "abort")) {
    ctx.reply.error("ERR No failover in progress.");
    return;
  }
  int64_t timeout = 0;
  bool to = false;
  bool force = false;
  for (size_t j = 1; j < argv.size(); ++j) {
    if (is(argv[j], "timeout") && j + 1 < argv.size() && timeout <= 0) {
      if (!int64_or_reply(ctx, argv[j + 1], timeout)) return;
      if (timeout <= 0) {
        ctx.reply.error("ERR FAILOVER timeout must be greater than 0");
        return;
      }
      ++j;
    } else if (is(argv[j], "to") && j + 2 < argv.size() && !to) {
      int64_t port = 0;
      if (!int64_or_reply(ctx, argv[j + 2], port)) return;
      to = true;
      j += 2;
    } else if (is(argv[j], "force") && !force) {
      force = true;
    } else {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
  }
  ctx.reply.error("ERR FAILOVER requires connected replicas.");
}

}  // namespace

void ServerControl::wait_replicas(CommandContext& ctx, int64_t, int64_t) { ctx.reply.integer(0); }

void ServerControl::role(CommandContext& ctx) {
  ctx.reply.array(3);
  ctx.reply.bulk("master");
  ctx.reply.integer(0);
  ctx.reply.array(0);
}

namespace {

constexpr CommandSpec kReplicaofRow = {
    .name = "replicaof",
    .arity = 3,
    .flags = kAdmin | kNoscript | kStale | kNoAsyncLoading,
    .handler = cmd_replicaof,
    .group = "server",
    .since = "5.0.0",
    .summary = "Make the server a replica of another instance, or promote it as master.",
    .complexity = "O(1)",
    .syntax = "(args: (host-port: host port<integer>) | (no-one: NO ONE))",
    .acl_categories = "admin slow dangerous"};

// SLAVEOF: REPLICAOF's older name, deprecated since 5.0.0.
constexpr CommandSpec slaveof_row() {
  CommandSpec row = deprecated_row(kReplicaofRow, "5.0.0", "`REPLICAOF`");
  row.name = "slaveof";
  row.since = "1.0.0";
  return row;
}

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
    kReplicaofRow,
    slaveof_row(),
    {.name = "failover",
     .arity = -1,
     .flags = kAdmin | kNoscript | kStale,
     .handler = cmd_failover,
     .group = "server",
     .since = "6.2.0",
     .summary = "Start a coordinated failover between this server and one of its replicas.",
     .complexity = "O(1)",
     .syntax = "[TO=target: host port<integer> [FORCE]] [ABORT] [TIMEOUT=milliseconds<integer>]",
     .acl_categories = "admin slow dangerous"},
};

}  // namespace

std::span<const CommandSpec> replication_commands() { return kReplicationCommands; }

}  // namespace ringkv::engine
