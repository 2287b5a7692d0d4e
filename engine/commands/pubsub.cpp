// Publish/subscribe commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, the
// PUBSUB family, and PING as a subscribed RESP2 client gets it. Subscriptions live behind
// ctx.pubsub (PubSubHub); replies and their shapes are Redis 7.0.15's: (un)subscribe
// confirmations are arrays in RESP2 and pushes in RESP3.
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "engine/command.h"
#include "engine/handlers.h"

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

// One confirmation: [kind, name (or null), the client's subscription count].
void confirm(CommandContext& ctx, std::string_view kind, const std::string_view* name) {
  ctx.reply.push(3);
  ctx.reply.bulk(kind);
  if (name != nullptr) {
    ctx.reply.bulk(*name);
  } else {
    ctx.reply.null();
  }
  ctx.reply.integer(static_cast<int64_t>(ctx.pubsub->subscription_count(ctx.client->id())));
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

void cmd_subscribe(CommandContext& ctx) { subscribe_all(ctx, false); }

void cmd_psubscribe(CommandContext& ctx) { subscribe_all(ctx, true); }

void cmd_unsubscribe(CommandContext& ctx) { unsubscribe_all(ctx, false); }

void cmd_punsubscribe(CommandContext& ctx) { unsubscribe_all(ctx, true); }

void cmd_publish(CommandContext& ctx) {
  ctx.reply.integer(ctx.pubsub->publish(ctx.argv[1], ctx.argv[2]));
}

void cmd_pubsub_channels(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    // Redis names the subcommand as the client spelled it.
    std::string error = "ERR unknown subcommand or wrong number of arguments for '";
    error.append(ctx.argv[1]);
    error += "'. Try PUBSUB HELP.";
    ctx.reply.error(error);
    return;
  }
  std::optional<std::string_view> pattern;
  if (ctx.argv.size() == 3) pattern = ctx.argv[2];
  std::vector<std::string> channels = ctx.pubsub->active_channels(pattern);
  ctx.reply.array(channels.size());
  for (const std::string& c : channels) ctx.reply.bulk(c);
}

void cmd_pubsub_numsub(CommandContext& ctx) {
  ctx.reply.array((ctx.argv.size() - 2) * 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.bulk(ctx.argv[i]);
    ctx.reply.integer(ctx.pubsub->subscribers(ctx.argv[i]));
  }
}

void cmd_pubsub_numpat(CommandContext& ctx) { ctx.reply.integer(ctx.pubsub->pattern_count()); }

void cmd_pubsub_help(CommandContext& ctx) {
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

}  // namespace ringkv::engine
