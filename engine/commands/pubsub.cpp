// Publish/subscribe commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, their
// sharded forms SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH, the PUBSUB family, and PING as a
// subscribed RESP2 client gets it. Subscriptions live behind
// ctx.pubsub (PubSubHub); replies and their shapes are Redis 7.0.15's: (un)subscribe
// confirmations are arrays in RESP2 and pushes in RESP3.
#include "engine/commands/pubsub.h"

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "engine/command.h"
#include "engine/commands/handler_args.h"

namespace ringkv::engine {

namespace {

constexpr std::string_view kPubsubHelp[] = {
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
};

// One confirmation: [kind, name (or null), the client's subscription count] — of channels and
// patterns, or with `shard` of shard channels.
void confirm(CommandContext& ctx, std::string_view kind, const std::string_view* name,
             bool shard = false) {
  ctx.reply.push(3);
  ctx.reply.bulk(kind);
  if (name != nullptr) {
    ctx.reply.bulk(*name);
  } else {
    ctx.reply.null();
  }
  const uint64_t id = ctx.client->id();
  ctx.reply.integer(static_cast<int64_t>(shard ? ctx.pubsub->shard_subscription_count(id)
                                               : ctx.pubsub->subscription_count(id)));
}

void subscribe_all(CommandContext& ctx, bool pattern) {
  const std::string_view kind = pattern ? "psubscribe" : "subscribe";
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    ctx.pubsub->subscribe(ctx.client->id(), ctx.argv[i], pattern);
    confirm(ctx, kind, &ctx.argv[i]);
  }
}

void unsubscribe_all(CommandContext& ctx, bool pattern) {
  const std::string_view kind = pattern ? "punsubscribe" : "unsubscribe";
  const uint64_t id = ctx.client->id();
  if (ctx.argv.size() > 1) {
    // Names the client never subscribed to are confirmed too, as Redis does.
    for (size_t i = 1; i < ctx.argv.size(); ++i) {
      ctx.pubsub->unsubscribe(id, ctx.argv[i], pattern);
      confirm(ctx, kind, &ctx.argv[i]);
    }
    return;
  }
  std::vector<std::string> names = ctx.pubsub->subscriptions(id, pattern);
  if (names.empty()) {
    confirm(ctx, kind, nullptr);
    return;
  }
  for (const std::string& name : names) {
    ctx.pubsub->unsubscribe(id, name, pattern);
    std::string_view view = name;
    confirm(ctx, kind, &view);
  }
}

}  // namespace

static void cmd_ssubscribe(CommandContext& ctx) {
  // Redis refuses it to clients that may not block (inside MULTI).
  if (ctx.block == nullptr) {
    ctx.reply.error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    return;
  }
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    ctx.pubsub->shard_subscribe(ctx.client->id(), ctx.argv[i]);
    confirm(ctx, "ssubscribe", &ctx.argv[i], true);
  }
}

static void cmd_sunsubscribe(CommandContext& ctx) {
  const uint64_t id = ctx.client->id();
  if (ctx.argv.size() > 1) {
    for (size_t i = 1; i < ctx.argv.size(); ++i) {
      ctx.pubsub->shard_unsubscribe(id, ctx.argv[i]);
      confirm(ctx, "sunsubscribe", &ctx.argv[i], true);
    }
    return;
  }
  const std::vector<std::string> names = ctx.pubsub->shard_subscriptions(id);
  if (names.empty()) {
    confirm(ctx, "sunsubscribe", nullptr, true);
    return;
  }
  for (const std::string& name : names) {
    ctx.pubsub->shard_unsubscribe(id, name);
    const std::string_view view = name;
    confirm(ctx, "sunsubscribe", &view, true);
  }
}

static void cmd_spublish(CommandContext& ctx) {
  ctx.reply.integer(ctx.pubsub->shard_publish(ctx.argv[1], ctx.argv[2]));
}

static void cmd_subscribe(CommandContext& ctx) { subscribe_all(ctx, false); }

static void cmd_psubscribe(CommandContext& ctx) { subscribe_all(ctx, true); }

static void cmd_unsubscribe(CommandContext& ctx) { unsubscribe_all(ctx, false); }

static void cmd_punsubscribe(CommandContext& ctx) { unsubscribe_all(ctx, true); }

static void cmd_publish(CommandContext& ctx) {
  ctx.reply.integer(ctx.pubsub->publish(ctx.argv[1], ctx.argv[2]));
}

// PUBSUB CHANNELS and SHARDCHANNELS: [pattern] with at most one argument.
static void pubsub_channels(CommandContext& ctx, bool shard) {
  if (ctx.argv.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  std::optional<std::string_view> pattern;
  if (ctx.argv.size() == 3) pattern = ctx.argv[2];
  std::vector<std::string> channels =
      shard ? ctx.pubsub->active_shard_channels(pattern) : ctx.pubsub->active_channels(pattern);
  ctx.reply.array(channels.size());
  for (const std::string& c : channels) ctx.reply.bulk(c);
}

static void cmd_pubsub_channels(CommandContext& ctx) { pubsub_channels(ctx, false); }

static void cmd_pubsub_shardchannels(CommandContext& ctx) { pubsub_channels(ctx, true); }

static void cmd_pubsub_numsub(CommandContext& ctx) {
  ctx.reply.array((ctx.argv.size() - 2) * 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.bulk(ctx.argv[i]);
    ctx.reply.integer(ctx.pubsub->subscribers(ctx.argv[i]));
  }
}

static void cmd_pubsub_shardnumsub(CommandContext& ctx) {
  ctx.reply.array((ctx.argv.size() - 2) * 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.bulk(ctx.argv[i]);
    ctx.reply.integer(ctx.pubsub->shard_subscribers(ctx.argv[i]));
  }
}

static void cmd_pubsub_numpat(CommandContext& ctx) {
  ctx.reply.integer(ctx.pubsub->pattern_count());
}

static void cmd_pubsub_help(CommandContext& ctx) {
  ctx.reply.array(std::size(kPubsubHelp));
  for (std::string_view line : kPubsubHelp) ctx.reply.simple(line);
}

void cmd_ping_subscribed(CommandContext& ctx) {
  if (ctx.argv.size() > 2) {
    ctx.reply.error("ERR wrong number of arguments for 'ping' command");
    return;
  }
  ctx.reply.array(2);
  ctx.reply.bulk("pong");
  ctx.reply.bulk(ctx.argv.size() == 2 ? ctx.argv[1] : std::string_view());
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kPubsubSubcommands[] = {
    {.name = "channels",
     .arity = -2,
     .flags = kPubsub | kLoading | kStale | kClusterWide,
     .handler = cmd_pubsub_channels,
     .group = "pubsub",
     .since = "2.8.0",
     .summary = "List active channels",
     .complexity = "O(N) where N is the number of active channels, and assuming constant time "
                   "pattern matching (relatively short channels and patterns)",
     .syntax = "[pattern<pattern>]",
     .acl_categories = "pubsub slow",
     .merge = MergePolicy::kUnion},
    {.name = "numsub",
     .arity = -2,
     .flags = kPubsub | kLoading | kStale | kClusterWide,
     .handler = cmd_pubsub_numsub,
     .group = "pubsub",
     .since = "2.8.0",
     .summary = "Get the count of subscribers for channels",
     .complexity = "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
     .syntax = "[channel]...",
     .acl_categories = "pubsub slow",
     .merge = MergePolicy::kPairSums},
    {.name = "numpat",
     .arity = 2,
     .flags = kPubsub | kLoading | kStale | kClusterWide,
     .handler = cmd_pubsub_numpat,
     .group = "pubsub",
     .since = "2.8.0",
     .summary = "Get the count of unique patterns pattern subscriptions",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "pubsub slow",
     .merge = MergePolicy::kSumReachable},
    {.name = "shardchannels",
     .arity = -2,
     .flags = kPubsub | kLoading | kStale | kClusterWide,
     .handler = cmd_pubsub_shardchannels,
     .group = "pubsub",
     .since = "7.0.0",
     .summary = "List active shard channels",
     .complexity = "O(N) where N is the number of active shard channels, and assuming constant "
                   "time pattern matching (relatively short shard channels).",
     .syntax = "[pattern<pattern>]",
     .acl_categories = "pubsub slow",
     .merge = MergePolicy::kUnion},
    {.name = "shardnumsub",
     .arity = -2,
     .flags = kPubsub | kLoading | kStale | kClusterWide,
     .handler = cmd_pubsub_shardnumsub,
     .group = "pubsub",
     .since = "7.0.0",
     .summary = "Get the count of subscribers for shard channels",
     .complexity = "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard "
                   "channels",
     .syntax = "[shardchannel]...",
     .acl_categories = "pubsub slow",
     .merge = MergePolicy::kPairSums},
    help_row(cmd_pubsub_help, "pubsub", "6.2.0"),
};

constexpr CommandSpec kPubsubCommands[] = {
    {.name = "subscribe",
     .arity = -2,
     .flags = kSubscribedOk | kPubsub | kNoscript | kLoading | kStale,
     .handler = cmd_subscribe,
     .group = "pubsub",
     .since = "2.0.0",
     .summary = "Listen for messages published to the given channels",
     .complexity = "O(N) where N is the number of channels to subscribe to.",
     .syntax = "channel...",
     .acl_categories = "pubsub slow"},
    {.name = "unsubscribe",
     .arity = -1,
     .flags = kSubscribedOk | kPubsub | kNoscript | kLoading | kStale,
     .handler = cmd_unsubscribe,
     .group = "pubsub",
     .since = "2.0.0",
     .summary = "Stop listening for messages posted to the given channels",
     .complexity = "O(N) where N is the number of clients already subscribed to a channel.",
     .syntax = "[channel]...",
     .acl_categories = "pubsub slow"},
    {.name = "psubscribe",
     .arity = -2,
     .flags = kSubscribedOk | kPubsub | kNoscript | kLoading | kStale,
     .handler = cmd_psubscribe,
     .group = "pubsub",
     .since = "2.0.0",
     .summary = "Listen for messages published to channels matching the given patterns",
     .complexity = "O(N) where N is the number of patterns the client is already subscribed to.",
     .syntax = "(pattern: pattern<pattern>)...",
     .acl_categories = "pubsub slow"},
    {.name = "punsubscribe",
     .arity = -1,
     .flags = kSubscribedOk | kPubsub | kNoscript | kLoading | kStale,
     .handler = cmd_punsubscribe,
     .group = "pubsub",
     .since = "2.0.0",
     .summary = "Stop listening for messages posted to channels matching the given patterns",
     .complexity = "O(N+M) where N is the number of patterns the client is already subscribed and "
                   "M is the number of total patterns subscribed in the system (by any client).",
     .syntax = "[pattern<pattern>]...",
     .acl_categories = "pubsub slow"},
    {.name = "publish",
     .arity = 3,
     .flags = kPubsub | kLoading | kStale | kFast | kMayReplicate | kClusterWide,
     .handler = cmd_publish,
     .group = "pubsub",
     .since = "2.0.0",
     .summary = "Post a message to a channel",
     .complexity = "O(N+M) where N is the number of clients subscribed to the receiving channel "
                   "and M is the total number of subscribed patterns (by any client).",
     .syntax = "channel message",
     .acl_categories = "pubsub fast",
     .merge = MergePolicy::kSumReachable},
    {.name = "ssubscribe",
     .arity = -2,
     .flags = kSubscribedOk | kPubsub | kNoscript | kLoading | kStale | kSubscribesHere,
     .handler = cmd_ssubscribe,
     .group = "pubsub",
     .since = "7.0.0",
     .summary = "Listen for messages published to the given shard channels",
     .complexity = "O(N) where N is the number of shard channels to subscribe to.",
     .syntax = "shardchannel...",
     .acl_categories = "pubsub slow",
     .key_specs = "not_key|1|-1|1|0"},
    {.name = "sunsubscribe",
     .arity = -1,
     .flags = kSubscribedOk | kPubsub | kNoscript | kLoading | kStale | kSubscribesHere,
     .handler = cmd_sunsubscribe,
     .group = "pubsub",
     .since = "7.0.0",
     .summary = "Stop listening for messages posted to the given shard channels",
     .complexity = "O(N) where N is the number of clients already subscribed to a shard channel.",
     .syntax = "[shardchannel]...",
     .acl_categories = "pubsub slow",
     .key_specs = "not_key|1|-1|1|0"},
    {.name = "spublish",
     .arity = 3,
     .flags = kPubsub | kLoading | kStale | kFast | kMayReplicate,
     .handler = cmd_spublish,
     .group = "pubsub",
     .since = "7.0.0",
     .summary = "Post a message to a shard channel",
     .complexity = "O(N) where N is the number of clients subscribed to the receiving shard "
                   "channel.",
     .syntax = "shardchannel message",
     .acl_categories = "pubsub fast",
     .key_specs = "not_key|1|0|1|0"},
    container_row("pubsub", "pubsub", "2.8.0", "A container for Pub/Sub commands",
                  kPubsubSubcommands),
};

}  // namespace

std::span<const CommandSpec> pubsub_commands() { return kPubsubCommands; }

}  // namespace ringkv::engine
