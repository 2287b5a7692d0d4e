// The pending entries of consumer groups: XACK, XPENDING, XCLAIM and XAUTOCLAIM, checking
// arguments in Redis 7.0.15's order. Their changes are reported with data_changed (logged, WATCH
// unaffected), and logged as XCLAIM ... FORCE JUSTID (and XACK of entries gone), whose replay
// does not depend on the clock.
#include <limits>
#include <string>
#include <vector>

#include "engine/commands/handler_args.h"
#include "engine/commands/stream.h"
#include "engine/commands/stream_args.h"
#include "engine/commands/string_ops.h"
#include "engine/types/stream_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// The consumer group a command names, for XCLAIM and XAUTOCLAIM (whose errors name both).
std::string no_group_error(CommandContext& ctx) {
  return "NOGROUP No such key '" + std::string(ctx.argv[1]) + "' or consumer group '" +
         std::string(ctx.argv[2]) + "'";
}

// What XCLAIM and XAUTOCLAIM record for one claimed (or dropped) pending entry.
std::vector<std::string> claim_form(CommandContext& ctx, StreamID id, const StreamNack& nack,
                                    const StreamGroup& g) {
  return {"XCLAIM",
          std::string(ctx.argv[1]),
          std::string(ctx.argv[2]),
          nack.consumer->name,
          "0",
          format_stream_id(id),
          "TIME",
          decimal(nack.delivery_time),
          "RETRYCOUNT",
          decimal(nack.delivery_count),
          "FORCE",
          "JUSTID",
          "LASTID",
          format_stream_id(g.last_id)};
}

std::vector<std::string> ack_form(CommandContext& ctx, StreamID id) {
  return {"XACK", std::string(ctx.argv[1]), std::string(ctx.argv[2]), format_stream_id(id)};
}

// The stream and group XCLAIM and XAUTOCLAIM work on (NOGROUP naming both when either is
// missing); the guard keeps the write open for the command.
StreamGroup* claim_group_or_reply(CommandContext& ctx,
                                  std::optional<ObjectWrite<StreamObject>>& guard,
                                  StreamObject*& s) {
  auto found = write_or_reply<StreamObject>(ctx, ctx.argv[1], false);
  if (!found) return nullptr;
  guard.emplace(std::move(*found));
  s = *guard ? guard->get() : nullptr;
  StreamGroup* g = s == nullptr ? nullptr : s->group(ctx.argv[2]);
  if (g == nullptr) ctx.reply.error(no_group_error(ctx));
  return g;
}

// min-idle-time of XCLAIM and XAUTOCLAIM: an integer, negative taken as 0.
bool min_idle_or_reply(CommandContext& ctx, std::string_view command, int64_t& min_idle) {
  if (!parse_int64(ctx.argv[4], min_idle)) {
    ctx.reply.error("ERR Invalid min-idle-time argument for " + std::string(command));
    return false;
  }
  if (min_idle < 0) min_idle = 0;
  return true;
}

// Replies the entry `id` as XRANGE does, or nil when it is gone.
void reply_entry_or_null(CommandContext& ctx, const StreamObject& s, StreamID id) {
  StreamItem item;
  if (s.find(id, &item)) {
    reply_stream_item(ctx.reply, item);
  } else {
    ctx.reply.null();
  }
}

}  // namespace

void cmd_xack(CommandContext& ctx) {
  auto found = write_or_reply<StreamObject>(ctx, ctx.argv[1], false);
  if (!found) return;
  StreamGroup* g = *found ? (*found)->group(ctx.argv[2]) : nullptr;
  if (g == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<StreamID> ids(ctx.argv.size() - 3);
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    if (!strict_id_or_reply(ctx, ctx.argv[j], ids[j - 3])) return;
  }
  int64_t acked = 0;
  for (StreamID id : ids) acked += g->acknowledge(id) ? 1 : 0;
  if (acked > 0) ctx.data_changed(ctx.argv[1]);
  ctx.reply.integer(acked);
}

void cmd_xpending(CommandContext& ctx) {
  const auto& argv = ctx.argv;
  const bool summary = argv.size() == 3;
  if (argv.size() != 3 && (argv.size() < 6 || argv.size() > 9)) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  StreamID start;
  StreamID end;
  int64_t count = 0;
  int64_t min_idle = 0;
  std::string_view consumer_name;
  bool consumer_given = false;
  if (argv.size() >= 6) {
    size_t at = 3;
    if (equals_ignore_case(argv[3], "idle")) {
      if (!int64_or_reply(ctx, argv[4], min_idle)) return;
      if (argv.size() < 8) {
        ctx.reply.error(err::kSyntax);
        return;
      }
      at += 2;
    }
    if (!int64_or_reply(ctx, argv[at + 2], count)) return;
    if (count < 0) count = 0;
    if (!range_start_or_reply(ctx, argv[at], start)) return;
    if (!range_end_or_reply(ctx, argv[at + 1], end)) return;
    if (at + 3 < argv.size()) {
      consumer_name = argv[at + 3];
      consumer_given = true;
    }
  }
  const StreamObject* s = nullptr;
  if (!read_or_reply(ctx, argv[1], s)) return;
  const StreamGroup* g = s == nullptr ? nullptr : s->group(argv[2]);
  if (g == nullptr) {
    ctx.reply.error(no_group_error(ctx));
    return;
  }
  if (summary) {
    ctx.reply.array(4);
    ctx.reply.integer(static_cast<int64_t>(g->pel().size()));
    if (g->pel().empty()) {
      ctx.reply.null();
      ctx.reply.null();
      ctx.reply.null_array();
      return;
    }
    ctx.reply.bulk(format_stream_id(g->pel().begin()->first));
    ctx.reply.bulk(format_stream_id(std::prev(g->pel().end())->first));
    size_t owners = 0;
    for (const auto& [name, c] : g->consumers()) owners += c->pending.empty() ? 0 : 1;
    ctx.reply.array(owners);
    for (const auto& [name, c] : g->consumers()) {
      if (c->pending.empty()) continue;
      ctx.reply.array(2);
      ctx.reply.bulk(name);
      ctx.reply.bulk_integer(static_cast<int64_t>(c->pending.size()));
    }
    return;
  }
  const StreamConsumer* consumer = nullptr;
  if (consumer_given) {
    consumer = g->consumer(consumer_name);
    if (consumer == nullptr) {
      ctx.reply.array(0);
      return;
    }
  }
  const int64_t now = ctx.store.now();
  const size_t token = ctx.reply.begin_deferred();
  size_t n = 0;
  auto emit = [&](StreamID id, const StreamNack& nack) {
    if (min_idle != 0 && now - nack.delivery_time < min_idle) return;
    ++n;
    --count;
    ctx.reply.array(4);
    ctx.reply.bulk(format_stream_id(id));
    ctx.reply.bulk(nack.consumer->name);
    ctx.reply.integer(std::max<int64_t>(now - nack.delivery_time, 0));
    ctx.reply.integer(static_cast<int64_t>(nack.delivery_count));
  };
  if (consumer != nullptr) {
    for (auto it = consumer->pending.lower_bound(start);
         count != 0 && it != consumer->pending.end() && *it <= end; ++it) {
      emit(*it, g->pel().at(*it));
    }
  } else {
    for (auto it = g->pel().lower_bound(start);
         count != 0 && it != g->pel().end() && it->first <= end; ++it) {
      emit(it->first, it->second);
    }
  }
  ctx.reply.end_deferred_array(token, n);
}

void cmd_xclaim(CommandContext& ctx) {
  // Redis reads the stream first, before any argument is checked (a hit or a miss, and the
  // keymiss event); claim_group_or_reply then looks it up as a write.
  ctx.store.lookup(ctx.argv[1]);
  const auto& argv = ctx.argv;
  std::optional<ObjectWrite<StreamObject>> guard;
  StreamObject* s = nullptr;
  StreamGroup* g = claim_group_or_reply(ctx, guard, s);
  if (g == nullptr) return;
  int64_t min_idle = 0;
  if (!min_idle_or_reply(ctx, "XCLAIM", min_idle)) return;
  size_t j = 5;
  std::vector<StreamID> ids;
  for (; j < argv.size(); ++j) {
    auto parsed = parse_stream_id(argv[j], {.strict = true});
    if (!parsed) break;
    ids.push_back(parsed->id);
  }
  const int64_t now = ctx.store.now();
  int64_t retry_count = -1;
  int64_t delivery_time = -1;
  bool force = false;
  bool justid = false;
  StreamID last_id;
  for (; j < argv.size(); ++j) {
    const size_t more = argv.size() - 1 - j;
    const std::string_view opt = argv[j];
    if (equals_ignore_case(opt, "force")) {
      force = true;
    } else if (equals_ignore_case(opt, "justid")) {
      justid = true;
    } else if (equals_ignore_case(opt, "idle") && more > 0) {
      if (!parse_int64(argv[++j], delivery_time)) {
        ctx.reply.error("ERR Invalid IDLE option argument for XCLAIM");
        return;
      }
      delivery_time = now - delivery_time;
    } else if (equals_ignore_case(opt, "time") && more > 0) {
      if (!parse_int64(argv[++j], delivery_time)) {
        ctx.reply.error("ERR Invalid TIME option argument for XCLAIM");
        return;
      }
    } else if (equals_ignore_case(opt, "retrycount") && more > 0) {
      if (!parse_int64(argv[++j], retry_count)) {
        ctx.reply.error("ERR Invalid RETRYCOUNT option argument for XCLAIM");
        return;
      }
    } else if (equals_ignore_case(opt, "lastid") && more > 0) {
      if (!strict_id_or_reply(ctx, argv[++j], last_id)) return;
    } else {
      ctx.reply.error("ERR Unrecognized XCLAIM option '" + std::string(opt) + "'");
      return;
    }
  }
  const bool last_id_moved = last_id > g->last_id;
  if (last_id_moved) g->last_id = last_id;
  if (delivery_time == -1 || delivery_time < 0 || delivery_time > now) delivery_time = now;
  StreamConsumer* consumer = nullptr;
  std::vector<std::vector<std::string>> effects;
  const size_t token = ctx.reply.begin_deferred();
  size_t n = 0;
  for (StreamID id : ids) {
    StreamNack* nack = g->nack(id);
    if (!s->find(id)) {
      // The entry is gone: its pending record goes too.
      if (nack != nullptr) {
        g->acknowledge(id);
        effects.push_back(ack_form(ctx, id));
      }
      continue;
    }
    const bool created = nack == nullptr;
    if (created && !force) continue;
    if (!created && min_idle != 0 && now - nack->delivery_time < min_idle) continue;
    if (consumer == nullptr) {
      bool made = false;
      consumer = g->get_or_create_consumer(argv[3], now, &made);
      consumer->seen_time = now;
      if (made) ctx.notify(common::kNotifyStream, "xgroup-createconsumer", argv[1]);
    }
    // A record FORCE creates starts at one delivery (streamCreateNACK).
    uint64_t deliveries = created ? 1 : nack->delivery_count;
    if (retry_count >= 0) {
      deliveries = static_cast<uint64_t>(retry_count);
    } else if (!justid) {
      ++deliveries;
    }
    g->set_pending(id, consumer, delivery_time, deliveries);
    if (justid) {
      ctx.reply.bulk(format_stream_id(id));
    } else {
      reply_entry_or_null(ctx, *s, id);
    }
    ++n;
    effects.push_back(claim_form(ctx, id, *g->nack(id), *g));
  }
  ctx.reply.end_deferred_array(token, n);
  if (last_id_moved) {
    effects.push_back({"XGROUP", "SETID", std::string(argv[1]), std::string(argv[2]),
                       format_stream_id(g->last_id), "ENTRIESREAD", decimal(g->entries_read)});
  }
  record_group_effects(ctx, effects);
}

void cmd_xautoclaim(CommandContext& ctx) {
  // As XCLAIM: a read of the stream before the arguments are checked.
  ctx.store.lookup(ctx.argv[1]);
  const auto& argv = ctx.argv;
  int64_t min_idle = 0;
  if (!min_idle_or_reply(ctx, "XAUTOCLAIM", min_idle)) return;
  StreamID start;
  if (!range_start_or_reply(ctx, argv[5], start)) return;
  int64_t count = 100;
  bool justid = false;
  constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max() / 16;
  for (size_t j = 6; j < argv.size(); ++j) {
    const size_t more = argv.size() - 1 - j;
    if (equals_ignore_case(argv[j], "count") && more > 0) {
      if (!parse_int64(argv[j + 1], count) || count < 1 || count > kMaxCount) {
        ctx.reply.error("ERR COUNT must be > 0");
        return;
      }
      ++j;
    } else if (equals_ignore_case(argv[j], "justid")) {
      justid = true;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  std::optional<ObjectWrite<StreamObject>> guard;
  StreamObject* s = nullptr;
  StreamGroup* g = claim_group_or_reply(ctx, guard, s);
  if (g == nullptr) return;
  int64_t attempts = count * 10;
  const int64_t now = ctx.store.now();
  StreamConsumer* consumer = nullptr;
  std::vector<StreamID> deleted;
  std::vector<std::vector<std::string>> effects;
  ctx.reply.array(3);
  // The reply's cursor comes first but is known last: claim into a side buffer.
  std::string claimed_out;
  protocol::ReplyWriter claimed(claimed_out, ctx.reply.version());
  size_t n = 0;
  auto it = g->pel().lower_bound(start);
  while (attempts-- > 0 && count > 0 && it != g->pel().end()) {
    const StreamID id = it->first;
    ++it;
    if (!s->find(id)) {
      g->acknowledge(id);
      effects.push_back(ack_form(ctx, id));
      deleted.push_back(id);
      --count;
      continue;
    }
    StreamNack* nack = g->nack(id);
    if (min_idle != 0 && now - nack->delivery_time < min_idle) continue;
    if (consumer == nullptr) {
      bool made = false;
      consumer = g->get_or_create_consumer(argv[3], now, &made);
      consumer->seen_time = now;
      if (made) ctx.notify(common::kNotifyStream, "xgroup-createconsumer", argv[1]);
    }
    g->set_pending(id, consumer, now, nack->delivery_count + (justid ? 0 : 1));
    if (justid) {
      claimed.bulk(format_stream_id(id));
    } else {
      StreamItem item;
      s->find(id, &item);
      reply_stream_item(claimed, item);
    }
    ++n;
    --count;
    effects.push_back(claim_form(ctx, id, *g->nack(id), *g));
  }
  ctx.reply.bulk(it == g->pel().end() ? "0-0" : format_stream_id(it->first));
  ctx.reply.array(n);
  ctx.reply.raw(claimed_out);
  ctx.reply.array(deleted.size());
  for (StreamID id : deleted) ctx.reply.bulk(format_stream_id(id));
  record_group_effects(ctx, effects);
}

namespace {

constexpr CommandSpec kStreamPendingCommands[] = {
    {.name = "xack",
     .arity = -4,
     .flags = kWrite | kFast,
     .handler = cmd_xack,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Marks a pending message as correctly processed, effectively removing it from the "
                "pending entries list of the consumer group. Return value of the command is the "
                "number of messages successfully acknowledged, that is, the IDs we were actually "
                "able to resolve in the PEL.",
     .complexity = "O(1) for each message ID processed.",
     .syntax = "key<key> group id...",
     .acl_categories = "write stream fast",
     .key_specs = "RW update|1|0|1|0"},
    {.name = "xpending",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_xpending,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Return information and entries from a stream consumer group pending entries "
                "list, that are messages fetched but never acknowledged.",
     .complexity = "O(N) with N being the number of elements returned, so asking for a small "
                   "fixed number of entries per call is O(1). O(M), where M is the total number "
                   "of entries scanned when used with the IDLE filter. When the command returns "
                   "just the summary and the list of consumers is small, it runs in O(1) time; "
                   "otherwise, an additional O(N) time for iterating every consumer.",
     .syntax = "key<key> group [filters: [IDLE=min-idle-time<integer>]@6.2.0 start end "
               "count<integer> [consumer]]",
     .acl_categories = "read stream slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0",
     .history = "6.2.0|Added the `IDLE` option and exclusive range intervals."},
    {.name = "xclaim",
     .arity = -6,
     .flags = kWrite | kFast,
     .handler = cmd_xclaim,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Changes (or acquires) ownership of a message in a consumer group, as if the "
                "message was delivered to the specified consumer.",
     .complexity = "O(log N) with N being the number of messages in the PEL of the consumer "
                   "group.",
     .syntax = "key<key> group consumer min-idle-time id... [IDLE=ms<integer>] "
               "[TIME=unix-time-milliseconds<unix-time>] [RETRYCOUNT=count<integer>] [FORCE] "
               "[JUSTID] [LASTID=id]",
     .acl_categories = "write stream fast",
     .tips = "nondeterministic_output",
     .key_specs = "RW update|1|0|1|0"},
    {.name = "xautoclaim",
     .arity = -6,
     .flags = kWrite | kFast,
     .handler = cmd_xautoclaim,
     .group = "stream",
     .since = "6.2.0",
     .summary = "Changes (or acquires) ownership of messages in a consumer group, as if the "
                "messages were delivered to the specified consumer.",
     .complexity = "O(1) if COUNT is small.",
     .syntax = "key<key> group consumer min-idle-time start [COUNT=count<integer>] [JUSTID]",
     .acl_categories = "write stream fast",
     .tips = "nondeterministic_output",
     .key_specs = "RW delete|1|0|1|0",
     .history = "7.0.0|Added an element to the reply array, containing deleted entries the "
                "command cleared from the PEL"},
};

}  // namespace

std::span<const CommandSpec> stream_pending_commands() { return kStreamPendingCommands; }

}  // namespace ringkv::engine
