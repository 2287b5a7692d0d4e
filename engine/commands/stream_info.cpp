// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP, with the fields
// and field order of Redis 7.0.15 (times are unix ms; idle times relative to the command's
// clock).
#include <string>

#include "engine/commands/handler_args.h"
#include "engine/commands/stream.h"
#include "engine/commands/stream_args.h"
#include "engine/commands/string_ops.h"
#include "engine/types/stream_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

bool stream_or_reply(CommandContext& ctx, const StreamObject*& s) {
  if (!read_or_reply(ctx, ctx.argv[2], s)) return false;
  if (s == nullptr) {
    ctx.reply.error(err::kNoSuchKey);
    return false;
  }
  return true;
}

void reply_entries_read(protocol::ReplyWriter& reply, const StreamGroup& g) {
  if (g.entries_read != kInvalidEntriesRead) {
    reply.integer(g.entries_read);
  } else {
    reply.null();
  }
}

void reply_lag(protocol::ReplyWriter& reply, const StreamObject& s, const StreamGroup& g) {
  if (auto lag = s.group_lag(g)) {
    reply.integer(*lag);
  } else {
    reply.null();
  }
}

// The fields XINFO STREAM starts with, with or without FULL.
void reply_stream_header(protocol::ReplyWriter& reply, const StreamObject& s) {
  reply.bulk("length");
  reply.integer(static_cast<int64_t>(s.length()));
  reply.bulk("radix-tree-keys");
  reply.integer(static_cast<int64_t>(s.nodes().size()));
  reply.bulk("radix-tree-nodes");
  reply.integer(static_cast<int64_t>(s.rax_node_count()));
  reply.bulk("last-generated-id");
  reply.bulk(format_stream_id(s.last_id()));
  reply.bulk("max-deleted-entry-id");
  reply.bulk(format_stream_id(s.max_deleted_id()));
  reply.bulk("entries-added");
  reply.integer(static_cast<int64_t>(s.entries_added()));
  reply.bulk("recorded-first-entry-id");
  reply.bulk(format_stream_id(s.first_id()));
}

void reply_edge_entry(protocol::ReplyWriter& reply, const StreamObject& s, bool last) {
  bool emitted = false;
  s.for_each(kMinStreamID, kMaxStreamID, last, [&](const StreamItem& item) {
    reply_stream_item(reply, item);
    emitted = true;
    return false;
  });
  if (!emitted) reply.null();
}

void reply_full_group(protocol::ReplyWriter& reply, const StreamObject& s, const std::string& name,
                      const StreamGroup& g, int64_t count) {
  reply.map(7);
  reply.bulk("name");
  reply.bulk(name);
  reply.bulk("last-delivered-id");
  reply.bulk(format_stream_id(g.last_id));
  reply.bulk("entries-read");
  reply_entries_read(reply, g);
  reply.bulk("lag");
  reply_lag(reply, s, g);
  reply.bulk("pel-count");
  reply.integer(static_cast<int64_t>(g.pel().size()));
  reply.bulk("pending");
  const size_t shown =
      count == 0 ? g.pel().size() : std::min(g.pel().size(), static_cast<size_t>(count));
  reply.array(shown);
  size_t n = 0;
  for (auto it = g.pel().begin(); n < shown; ++it, ++n) {
    reply.array(4);
    reply.bulk(format_stream_id(it->first));
    reply.bulk(it->second.consumer->name);
    reply.integer(it->second.delivery_time);
    reply.integer(static_cast<int64_t>(it->second.delivery_count));
  }
  reply.bulk("consumers");
  reply.array(g.consumers().size());
  for (const auto& [cname, c] : g.consumers()) {
    reply.map(4);
    reply.bulk("name");
    reply.bulk(cname);
    reply.bulk("seen-time");
    reply.integer(c->seen_time);
    reply.bulk("pel-count");
    reply.integer(static_cast<int64_t>(c->pending.size()));
    reply.bulk("pending");
    const size_t own =
        count == 0 ? c->pending.size() : std::min(c->pending.size(), static_cast<size_t>(count));
    reply.array(own);
    size_t k = 0;
    for (auto it = c->pending.begin(); k < own; ++it, ++k) {
      const StreamNack& nack = g.pel().at(*it);
      reply.array(3);
      reply.bulk(format_stream_id(*it));
      reply.integer(nack.delivery_time);
      reply.integer(static_cast<int64_t>(nack.delivery_count));
    }
  }
}

}  // namespace

void cmd_xinfo_stream(CommandContext& ctx) {
  const StreamObject* s = nullptr;
  if (!stream_or_reply(ctx, s)) return;
  const auto options = ctx.argv.subspan(3);
  auto& reply = ctx.reply;
  if (options.size() == 2 || options.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  if (options.empty()) {
    reply.map(10);
    reply_stream_header(reply, *s);
    reply.bulk("groups");
    reply.integer(static_cast<int64_t>(s->groups().size()));
    reply.bulk("first-entry");
    reply_edge_entry(reply, *s, false);
    reply.bulk("last-entry");
    reply_edge_entry(reply, *s, true);
    return;
  }
  int64_t count = 10;
  if (!equals_ignore_case(options[0], "full")) {
    reply.error(err::kSyntax);
    return;
  }
  if (options.size() > 1) {
    if (!equals_ignore_case(options[1], "count")) {
      reply.error(err::kSyntax);
      return;
    }
    if (!int64_or_reply(ctx, options[2], count)) return;
    if (count < 0) count = 10;
  }
  reply.map(9);
  reply_stream_header(reply, *s);
  reply.bulk("entries");
  reply_stream_range(reply, *s, kMinStreamID, kMaxStreamID, false, count);
  reply.bulk("groups");
  reply.array(s->groups().size());
  for (const auto& [name, g] : s->groups()) reply_full_group(reply, *s, name, *g, count);
}

void cmd_xinfo_groups(CommandContext& ctx) {
  const StreamObject* s = nullptr;
  if (!stream_or_reply(ctx, s)) return;
  auto& reply = ctx.reply;
  reply.array(s->groups().size());
  for (const auto& [name, g] : s->groups()) {
    reply.map(6);
    reply.bulk("name");
    reply.bulk(name);
    reply.bulk("consumers");
    reply.integer(static_cast<int64_t>(g->consumers().size()));
    reply.bulk("pending");
    reply.integer(static_cast<int64_t>(g->pel().size()));
    reply.bulk("last-delivered-id");
    reply.bulk(format_stream_id(g->last_id));
    reply.bulk("entries-read");
    reply_entries_read(reply, *g);
    reply.bulk("lag");
    reply_lag(reply, *s, *g);
  }
}

void cmd_xinfo_consumers(CommandContext& ctx) {
  const StreamObject* s = nullptr;
  if (!stream_or_reply(ctx, s)) return;
  const StreamGroup* g = s->group(ctx.argv[3]);
  if (g == nullptr) {
    ctx.reply.error("NOGROUP No such consumer group '" + std::string(ctx.argv[3]) +
                    "' for key name '" + std::string(ctx.argv[2]) + "'");
    return;
  }
  const int64_t now = ctx.store.now();
  ctx.reply.array(g->consumers().size());
  for (const auto& [name, c] : g->consumers()) {
    ctx.reply.map(3);
    ctx.reply.bulk("name");
    ctx.reply.bulk(name);
    ctx.reply.bulk("pending");
    ctx.reply.integer(static_cast<int64_t>(c->pending.size()));
    ctx.reply.bulk("idle");
    ctx.reply.integer(std::max<int64_t>(now - c->seen_time, 0));
  }
}

namespace {

constexpr std::string_view kXInfoHelp[] = {
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
};

void cmd_xinfo_help(CommandContext& ctx) { reply_help(ctx.reply, kXInfoHelp); }

constexpr CommandSpec kXInfoSubcommands[] = {
    {.name = "consumers",
     .arity = 4,
     .flags = kReadonly,
     .handler = cmd_xinfo_consumers,
     .group = "stream",
     .since = "5.0.0",
     .summary = "List the consumers in a consumer group",
     .complexity = "O(1)",
     .syntax = "key<key> groupname",
     .acl_categories = "read stream slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|2|0|1|0"},
    {.name = "stream",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_xinfo_stream,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Get information about a stream",
     .complexity = "O(1)",
     .syntax = "key<key> [FULL=full: [COUNT=count<integer>]]",
     .acl_categories = "read stream slow",
     .key_specs = "RO access|2|0|1|0",
     .history = "6.0.0|Added the `FULL` modifier.\n7.0.0|Added the `max-deleted-entry-id`, "
                "`entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"},
    help_row(cmd_xinfo_help, "stream", "5.0.0", "stream slow"),
    {.name = "groups",
     .arity = 3,
     .flags = kReadonly,
     .handler = cmd_xinfo_groups,
     .group = "stream",
     .since = "5.0.0",
     .summary = "List the consumer groups of a stream",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read stream slow",
     .key_specs = "RO access|2|0|1|0",
     .history = "7.0.0|Added the `entries-read` and `lag` fields"},
};

constexpr CommandSpec kStreamInfoCommands[] = {
    container_row("xinfo", "stream", "5.0.0", "A container for stream introspection commands",
                  kXInfoSubcommands),
};

}  // namespace

std::span<const CommandSpec> stream_info_commands() { return kStreamInfoCommands; }

}  // namespace ringkv::engine
