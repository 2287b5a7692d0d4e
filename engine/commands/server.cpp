// Server administration: CLUSTER (INFO, NODES, OWNER), CONFIG (GET, SET, RESETSTAT), TIME,
// BGREWRITEAOF, SAVE, BGSAVE, LASTSAVE, SHUTDOWN, and the replication handshake tools use for a
// snapshot (REPLCONF, SYNC, PSYNC). Process-wide state is reached through ctx.server
// (ServerControl).
#include "engine/commands/server.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "engine/command.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/digest.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace {

using protocol::ReplyWriter;

constexpr std::string_view kConfigHelp[] = {
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
};

constexpr std::string_view kClusterHelp[] = {
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "INFO",
    "    Return information about the ring: members, hash, replicas, version.",
    "NODES",
    "    Return the members of the ring, one per line, with their link state.",
    "OWNER <key>",
    "    Return the address of the node that owns <key>.",
    "DIGEST",
    "    The DEBUG DIGEST of the whole cluster's data: what one server holding every key",
    "    would answer.",
    "SLOTS, SHARDS",
    "    Redis Cluster's slot map: a ring has none (any node serves every key), so these",
    "    answer that cluster support is disabled, and cluster clients use the node as is.",
    "JOIN <host:port> [WEIGHT <weight>]",
    "    Add an empty node to the ring; its keys move to it in the background.",
    "LEAVE <host:port> [FORCE]",
    "    Remove a member once its keys moved to their new owners. FORCE removes a member",
    "    that is down for good at once (its keys are lost).",
    "SETWEIGHT <host:port> <weight>",
    "    Change a member's weight; the keys whose owner changes move in the background.",
    "IMPORT <host:port> [AUTH <password>]",
    "    Replicate a running redis-server into the cluster: its snapshot, then its writes,",
    "    each key on its owner, until IMPORT STOP [<host:port>].",
    "HELP",
    "    Prints this help.",
};

constexpr std::string_view kClusterDisabled = "ERR This instance has cluster support disabled";

}  // namespace

void cmd_config_get(CommandContext& ctx) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 2; i < ctx.argv.size(); ++i) ctx.server->config_get(ctx.argv[i], pairs);
  // Redis collects matches in a dict, so a parameter matched by several patterns appears once.
  std::vector<std::pair<std::string, std::string>> unique;
  for (auto& p : pairs) {
    bool seen = std::any_of(unique.begin(), unique.end(),
                            [&](const auto& u) { return u.first == p.first; });
    if (!seen) unique.push_back(std::move(p));
  }
  ctx.reply.map(unique.size());
  for (const auto& [name, value] : unique) {
    ctx.reply.bulk(name);
    ctx.reply.bulk(value);
  }
}

static void cmd_config_set(CommandContext& ctx) {
  if (ctx.argv.size() % 2 != 0) {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  pairs.reserve(ctx.argv.size() / 2);
  for (size_t i = 2; i < ctx.argv.size(); i += 2) pairs.emplace_back(ctx.argv[i], ctx.argv[i + 1]);
  std::string error = ctx.server->config_set(pairs);
  if (error.empty()) {
    ctx.reply.ok();
  } else {
    ctx.reply.error(error);
  }
}

static void cmd_config_resetstat(CommandContext& ctx) {
  ctx.server->config_resetstat();
  ctx.reply.ok();
}

static void cmd_config_rewrite(CommandContext& ctx) {
  const std::string error = ctx.server->config_rewrite();
  if (error.empty()) {
    ctx.reply.ok();
  } else {
    ctx.reply.error(error);
  }
}

static void cmd_config_help(CommandContext& ctx) { reply_help(ctx.reply, kConfigHelp); }

static void cmd_cluster_disabled(CommandContext& ctx) { ctx.reply.error(kClusterDisabled); }

static void cmd_cluster_info(CommandContext& ctx) {
  std::string text = ctx.server->cluster_info();
  if (text.empty()) {
    ctx.reply.error(kClusterDisabled);
  } else {
    ctx.reply.verbatim(text);
  }
}

static void cmd_cluster_nodes(CommandContext& ctx) {
  std::string text = ctx.server->cluster_nodes();
  if (text.empty()) {
    ctx.reply.error(kClusterDisabled);
  } else {
    ctx.reply.verbatim(text);
  }
}

static void cmd_cluster_copies(CommandContext& ctx) {
  const std::vector<std::string> copies = ctx.server->cluster_copies(ctx.argv[2]);
  if (copies.empty()) {
    ctx.reply.error(kClusterDisabled);
    return;
  }
  ctx.reply.array(copies.size());
  for (const std::string& address : copies) ctx.reply.bulk(address);
}

static void cmd_cluster_owner(CommandContext& ctx) {
  std::string owner = ctx.server->cluster_owner(ctx.argv[2]);
  if (owner.empty()) {
    ctx.reply.error(kClusterDisabled);
  } else {
    ctx.reply.bulk(owner);
  }
}

static void cmd_cluster_change(CommandContext& ctx) {
  if (!ctx.server->cluster_change(ctx)) ctx.reply.error(kClusterDisabled);
}

static void cmd_cluster_import(CommandContext& ctx) {
  if (!ctx.server->cluster_import(ctx)) ctx.reply.error(kClusterDisabled);
}

static void cmd_cluster_help(CommandContext& ctx) { reply_help(ctx.reply, kClusterHelp); }

// CLUSTER DIGEST: every node runs it and answers its own keys' DEBUG DIGEST; the cluster
// combines the answers (MergePolicy::kDigest) into the digest one redis-server holding every key
// would give, so a cluster's data can be compared with a Redis's.
static void cmd_cluster_digest(CommandContext& ctx) {
  if (ctx.server == nullptr || !ctx.server->clustered()) {
    ctx.reply.error(kClusterDisabled);
    return;
  }
  ctx.reply.simple(digest_hex(dataset_digest(ctx.store)));
}

// CLUSTER SLOTS and SHARDS: Redis Cluster's slot map. A ring has no slots, and any node serves
// every key, so every node answers as a Redis with cluster support disabled: smart clients
// then know to use it as a plain server.
static void cmd_time(CommandContext& ctx) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  ctx.reply.array(2);
  ctx.reply.bulk_integer(us / 1000000);
  ctx.reply.bulk_integer(us % 1000000);
}

static void cmd_lastsave(CommandContext& ctx) { ctx.reply.integer(ctx.server->last_save_unix()); }

static void cmd_bgrewriteaof(CommandContext& ctx) {
  ctx.server->rewrite_append_only_file(ctx.reply);
}

static void cmd_save(CommandContext& ctx) { ctx.server->save_snapshot(ctx.reply); }

static void cmd_bgsave(CommandContext& ctx) {
  bool schedule = false;
  if (ctx.argv.size() > 1) {
    if (ctx.argv.size() != 2 || !equals_ignore_case(ctx.argv[1], "schedule")) {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
    schedule = true;
  }
  ctx.server->background_save(schedule, ctx.reply);
}

static void cmd_replconf(CommandContext& ctx) { ctx.server->replconf(ctx); }
static void cmd_sync(CommandContext& ctx) { ctx.server->sync(ctx, false); }
static void cmd_psync(CommandContext& ctx) { ctx.server->sync(ctx, true); }

static void cmd_shutdown(CommandContext& ctx) {
  ServerControl::ShutdownFlags f;
  bool flagged = false;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    std::string_view opt = ctx.argv[i];
    if (equals_ignore_case(opt, "nosave")) {
      f.nosave = flagged = true;
    } else if (equals_ignore_case(opt, "save")) {
      f.save = flagged = true;
    } else if (equals_ignore_case(opt, "now")) {
      f.now = flagged = true;
    } else if (equals_ignore_case(opt, "force")) {
      f.force = flagged = true;
    } else if (equals_ignore_case(opt, "abort")) {
      f.abort = true;
    } else {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
  }
  if ((f.abort && flagged) || (f.nosave && f.save)) {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  ctx.server->shutdown_command(ctx, f);
}

void ServerControl::shutdown_command(CommandContext& ctx, const ShutdownFlags& flags) {
  if (flags.abort) {
    ctx.reply.error("ERR No shutdown in progress.");
    return;
  }
  // As Redis: a failed save stops the shutdown, unless FORCE.
  if (!save_before_shutdown(flags.save, flags.nosave) && !flags.force) {
    ctx.reply.error("ERR Errors trying to SHUTDOWN. Check logs.");
    return;
  }
  shutdown();
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kConfigSubcommands[] = {
    {.name = "get",
     .arity = -3,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_config_get,
     .group = "server",
     .since = "2.0.0",
     .summary = "Get the values of configuration parameters",
     .complexity = "O(N) when N is the number of configuration parameters provided",
     .syntax = "(parameter: parameter)...",
     .acl_categories = "admin slow dangerous",
     .history = "7.0.0|Added the ability to pass multiple pattern parameters in one call"},
    {.name = "set",
     .arity = -4,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_config_set,
     .group = "server",
     .since = "2.0.0",
     .summary = "Set configuration parameters to the given values",
     .complexity = "O(N) when N is the number of configuration parameters provided",
     .syntax = "(parameter_value: parameter value)...",
     .acl_categories = "admin slow dangerous",
     .tips = "request_policy:all_nodes response_policy:all_succeeded",
     .history = "7.0.0|Added the ability to set multiple parameters in one call."},
    {.name = "resetstat",
     .arity = 2,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_config_resetstat,
     .group = "server",
     .since = "2.0.0",
     .summary = "Reset the stats returned by INFO",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous"},
    {.name = "rewrite",
     .arity = 2,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_config_rewrite,
     .group = "server",
     .since = "2.8.0",
     .summary = "Rewrite the configuration file with the in memory configuration",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous"},
    help_row(cmd_config_help, "server", "5.0.0"),
};

constexpr std::string_view kAdminAcl = "admin slow dangerous";

// The row of one of Redis Cluster's subcommands (they all answer kClusterDisabled here).
constexpr CommandSpec slot_row(std::string_view name, int arity, uint32_t flags,
                               std::string_view since, std::string_view summary,
                               std::string_view complexity, std::string_view syntax,
                               std::string_view acl_categories, std::string_view tips = {},
                               std::string_view history = {}) {
  CommandSpec row = keyless_row(name, arity, flags, cmd_cluster_disabled, "cluster", since, summary,
                                complexity, acl_categories);
  row.syntax = syntax;
  row.tips = tips;
  row.history = history;
  return row;
}

constexpr CommandSpec kClusterSubcommands[] = {
    {.name = "info",
     .arity = 2,
     .flags = kStale,
     .handler = cmd_cluster_info,
     .group = "cluster",
     .since = "3.0.0",
     .summary = "Return information about the ring this node belongs to",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output"},
    {.name = "nodes",
     .arity = 2,
     .flags = kStale,
     .handler = cmd_cluster_nodes,
     .group = "cluster",
     .since = "3.0.0",
     .summary = "List the members of the ring with their link state",
     .complexity = "O(N) where N is the number of members",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output"},
    {.name = "owner",
     .arity = 3,
     .flags = kStale | kFast,
     .handler = cmd_cluster_owner,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Return the address of the node that owns a key",
     .complexity = "O(log N) where N is the number of virtual nodes",
     .syntax = "key<string>",
     .acl_categories = "slow"},
    {.name = "copies",
     .arity = 3,
     .flags = kStale | kFast,
     .handler = cmd_cluster_copies,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Return the addresses of the nodes that keep a key: its primary, then its "
                "replicas",
     .complexity = "O(R log N) where R is the replication factor and N the number of virtual "
                   "nodes",
     .syntax = "key<string>",
     .acl_categories = "slow"},
    {.name = "import",
     .arity = -3,
     .flags = kAdmin | kNoscript | kNoMulti,
     .handler = cmd_cluster_import,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Replicate a running redis-server into the cluster, or stop importing",
     .complexity = "O(N) where N is the number of keys and writes imported",
     .syntax = "address<string> [AUTH=password<string>]",
     .acl_categories = "admin slow dangerous"},
    {.name = "join",
     .arity = -3,
     .flags = kAdmin | kNoscript | kNoMulti,
     .handler = cmd_cluster_change,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Add an empty node to the ring; keys move to it in the background",
     .complexity = "O(N) where N is the number of keys that move",
     .syntax = "address<string> [WEIGHT=weight<integer>]",
     .acl_categories = "admin slow dangerous"},
    {.name = "leave",
     .arity = -3,
     .flags = kAdmin | kNoscript | kNoMulti,
     .handler = cmd_cluster_change,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Remove a member from the ring once its keys moved to their new owners",
     .complexity = "O(N) where N is the number of keys that move",
     .syntax = "address<string> [FORCE]",
     .acl_categories = "admin slow dangerous"},
    {.name = "setweight",
     .arity = 4,
     .flags = kAdmin | kNoscript | kNoMulti,
     .handler = cmd_cluster_change,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Change a member's weight; keys whose owner changes move in the background",
     .complexity = "O(N) where N is the number of keys that move",
     .syntax = "address<string> weight<integer>",
     .acl_categories = "admin slow dangerous"},
    {.name = "digest",
     .arity = 2,
     .flags = kAdmin | kClusterWide,
     .handler = cmd_cluster_digest,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Return the digest of the whole cluster's data, as DEBUG DIGEST of one server",
     .complexity = "O(N) where N is the number of keys in the cluster",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .merge = MergePolicy::kDigest},
    {.name = "slots",
     .arity = 2,
     .flags = kStale,
     .handler = cmd_cluster_disabled,
     .group = "cluster",
     .since = "3.0.0",
     .summary = "Get array of Cluster slot to node mappings",
     .complexity = "O(N) where N is the total number of Cluster nodes",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output",
     .history = "4.0.0|Added node IDs.\n7.0.0|Added additional networking metadata field.",
     .doc_flags = "deprecated",
     .deprecated_since = "7.0.0",
     .replaced_by = "`CLUSTER SHARDS`"},
    {.name = "shards",
     .arity = 2,
     .flags = kStale,
     .handler = cmd_cluster_disabled,
     .group = "cluster",
     .since = "7.0.0",
     .summary = "Get array of cluster slots to node mappings",
     .complexity = "O(N) where N is the total number of cluster nodes",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output"},
    help_row(cmd_cluster_help, "cluster", "5.0.0"),
    // Redis Cluster's own subcommands, with Redis's rows: ringkv's ring has no slots, so they
    // answer as a Redis without cluster support does.
    slot_row("addslots", -3, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Assign new hash slots to receiving node",
             "O(N) where N is the total number of hash slot arguments", "slot<integer>...",
             kAdminAcl),
    slot_row("addslotsrange", -4, kAdmin | kStale | kNoAsyncLoading, "7.0.0",
             "Assign new hash slots to receiving node",
             "O(N) where N is the total number of the slots between the start slot and end slot "
             "arguments.",
             "(start-slot_end-slot: start-slot<integer> end-slot<integer>)...", kAdminAcl),
    slot_row("bumpepoch", 2, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Advance the cluster config epoch", "O(1)", "", kAdminAcl, "nondeterministic_output"),
    slot_row("count-failure-reports", 3, kAdmin | kStale, "3.0.0",
             "Return the number of failure reports active for a given node",
             "O(N) where N is the number of failure reports", "node-id", kAdminAcl,
             "nondeterministic_output"),
    slot_row("countkeysinslot", 3, kStale, "3.0.0",
             "Return the number of local keys in the specified hash slot", "O(1)", "slot<integer>",
             "slow"),
    slot_row("delslots", -3, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Set hash slots as unbound in receiving node",
             "O(N) where N is the total number of hash slot arguments", "slot<integer>...",
             kAdminAcl),
    slot_row("delslotsrange", -4, kAdmin | kStale | kNoAsyncLoading, "7.0.0",
             "Set hash slots as unbound in receiving node",
             "O(N) where N is the total number of the slots between the start slot and end slot "
             "arguments.",
             "(start-slot_end-slot: start-slot<integer> end-slot<integer>)...", kAdminAcl),
    slot_row("failover", -2, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Forces a replica to perform a manual failover of its master.", "O(1)",
             "[options: FORCE | TAKEOVER]", kAdminAcl),
    slot_row("flushslots", 2, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Delete a node's own slots information", "O(1)", "", kAdminAcl),
    slot_row("forget", 3, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Remove a node from the nodes table", "O(1)", "node-id", kAdminAcl),
    slot_row("getkeysinslot", 4, kStale, "3.0.0",
             "Return local key names in the specified hash slot",
             "O(log(N)) where N is the number of requested keys", "slot<integer> count<integer>",
             "slow", "nondeterministic_output"),
    slot_row("keyslot", 3, kStale, "3.0.0", "Returns the hash slot of the specified key",
             "O(N) where N is the number of bytes in the key", "key", "slow"),
    slot_row("links", 2, kStale, "7.0.0",
             "Returns a list of all TCP links to and from peer nodes in cluster",
             "O(N) where N is the total number of Cluster nodes", "", "slow",
             "nondeterministic_output"),
    slot_row("meet", -4, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Force a node cluster to handshake with another node", "O(1)",
             "ip port<integer> [cluster_bus_port<integer>]@4.0.0", kAdminAcl, {},
             "4.0.0|Added the optional `cluster_bus_port` argument."),
    slot_row("myid", 2, kStale, "3.0.0", "Return the node id", "O(1)", "", "slow"),
    slot_row("replicas", 3, kAdmin | kStale, "5.0.0",
             "List replica nodes of the specified master node", "O(1)", "node-id", kAdminAcl,
             "nondeterministic_output"),
    slot_row("replicate", 3, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Reconfigure a node as a replica of the specified master node", "O(1)", "node-id",
             kAdminAcl),
    slot_row("reset", -2, kAdmin | kNoscript | kStale, "3.0.0", "Reset a Redis Cluster node",
             "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a "
             "side effect.",
             "[hard_soft: HARD | SOFT]", kAdminAcl),
    slot_row("saveconfig", 2, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Forces the node to save cluster state on disk", "O(1)", "", kAdminAcl),
    slot_row("set-config-epoch", 3, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
             "Set the configuration epoch in a new node", "O(1)", "config-epoch<integer>",
             kAdminAcl),
    slot_row(
        "setslot", -4, kAdmin | kStale | kNoAsyncLoading, "3.0.0",
        "Bind a hash slot to a specific node", "O(1)",
        "slot<integer> (subcommand: IMPORTING=node-id | MIGRATING=node-id | NODE=node-id | STABLE)",
        kAdminAcl),
    deprecated_row(slot_row("slaves", 3, kAdmin | kStale, "3.0.0",
                            "List replica nodes of the specified master node", "O(1)", "node-id",
                            kAdminAcl, "nondeterministic_output"),
                   "5.0.0", "`CLUSTER REPLICAS`"),
};

constexpr CommandSpec kServerCommands[] = {
    container_row("cluster", "cluster", "3.0.0", "A container for ring and membership commands",
                  kClusterSubcommands),
    // Redis Cluster's client commands: ringkv routes every key itself, and answers them as a
    // Redis without cluster support does.
    keyless_row("readonly", 1, kLoading | kStale | kFast, cmd_cluster_disabled, "cluster", "3.0.0",
                "Enables read queries for a connection to a cluster replica node", "O(1)",
                "fast connection"),
    keyless_row("readwrite", 1, kLoading | kStale | kFast, cmd_cluster_disabled, "cluster", "3.0.0",
                "Disables read queries for a connection to a cluster replica node", "O(1)",
                "fast connection"),
    keyless_row("asking", 1, kFast, cmd_cluster_disabled, "cluster", "3.0.0",
                "Sent by cluster clients after an -ASK redirect", "O(1)", "fast connection"),
    container_row("config", "server", "2.0.0", "A container for server configuration commands",
                  kConfigSubcommands),
    {.name = "time",
     .arity = 1,
     .flags = kLoading | kStale | kFast,
     .handler = cmd_time,
     .group = "server",
     .since = "2.6.0",
     .summary = "Return the current server time",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "fast",
     .tips = "nondeterministic_output"},
    {.name = "bgrewriteaof",
     .arity = 1,
     .flags = kAdmin | kNoscript | kNoAsyncLoading,
     .handler = cmd_bgrewriteaof,
     .group = "server",
     .since = "1.0.0",
     .summary = "Asynchronously rewrite the append-only file",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous"},
    {.name = "lastsave",
     .arity = 1,
     .flags = kLoading | kStale | kFast,
     .handler = cmd_lastsave,
     .group = "server",
     .since = "1.0.0",
     .summary = "Get the UNIX time stamp of the last successful save to disk",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin fast dangerous",
     .tips = "nondeterministic_output"},
    {.name = "shutdown",
     .arity = -1,
     .flags = kAdmin | kNoscript | kLoading | kStale | kNoMulti | kAllowBusy,
     .handler = cmd_shutdown,
     .group = "server",
     .since = "1.0.0",
     .summary = "Synchronously save the dataset to disk and then shut down the server",
     .complexity = "O(N) when saving, where N is the total number of keys in all databases when "
                   "saving data, otherwise O(1)",
     .syntax = "[nosave_save: NOSAVE | SAVE] [NOW]@7.0.0 [FORCE]@7.0.0 [ABORT]@7.0.0",
     .acl_categories = "admin slow dangerous",
     .history = "7.0.0|Added the `NOW`, `FORCE` and `ABORT` modifiers."},
    {.name = "save",
     .arity = 1,
     .flags = kAdmin | kNoscript | kNoAsyncLoading | kNoMulti,
     .handler = cmd_save,
     .group = "server",
     .since = "1.0.0",
     .summary = "Synchronously save the dataset to disk",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .syntax = "",
     .acl_categories = "admin slow dangerous"},
    {.name = "bgsave",
     .arity = -1,
     .flags = kAdmin | kNoscript | kNoAsyncLoading,
     .handler = cmd_bgsave,
     .group = "server",
     .since = "1.0.0",
     .summary = "Asynchronously save the dataset to disk",
     .complexity = "O(1)",
     .syntax = "[SCHEDULE]@3.2.2",
     .acl_categories = "admin slow dangerous",
     .history = "3.2.2|Added the `SCHEDULE` option."},
    {.name = "replconf",
     .arity = -1,
     .flags = kAdmin | kNoscript | kLoading | kStale | kAllowBusy,
     .handler = cmd_replconf,
     .group = "server",
     .since = "3.0.0",
     .summary = "An internal command for configuring the replication stream",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .doc_flags = "syscmd"},
    {.name = "sync",
     .arity = 1,
     .flags = kAdmin | kNoscript | kNoAsyncLoading | kNoMulti,
     .handler = cmd_sync,
     .group = "server",
     .since = "1.0.0",
     .summary = "Internal command used for replication",
     .syntax = "",
     .acl_categories = "admin slow dangerous"},
    {.name = "psync",
     .arity = -3,
     .flags = kAdmin | kNoscript | kNoAsyncLoading | kNoMulti,
     .handler = cmd_psync,
     .group = "server",
     .since = "2.8.0",
     .summary = "Internal command used for replication",
     .syntax = "replicationid<string> offset<integer>",
     .acl_categories = "admin slow dangerous"},
};

}  // namespace

std::span<const CommandSpec> server_commands() { return kServerCommands; }

void ServerControl::replconf(CommandContext& ctx) { ctx.reply.ok(); }

void ServerControl::sync(CommandContext& ctx, bool /*psync*/) {
  ctx.reply.error("ERR snapshots are not available here");
}

}  // namespace ringkv::engine
