// XREAD and XREADGROUP (Redis 7.0.15's xreadCommand): options, then per stream its type, group
// and ID, then every stream that has something is served; with BLOCK and nothing served the
// client waits on all the streams. A blocked client runs again when one of its streams is
// written: XREAD with the IDs resolved when it blocked ('$' is the last ID then) and COUNT 1000
// when it gave none (XREAD_BLOCKED_DEFAULT_COUNT); XREADGROUP learns then whether its stream or
// group went away meanwhile.
#include <string>
#include <vector>

#include "engine/commands/blocking.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/stream.h"
#include "engine/commands/stream_args.h"
#include "engine/commands/string_ops.h"
#include "engine/types/stream_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr int64_t kBlockedDefaultCount = 1000;

struct ReadArgs {
  bool group_mode = false;
  bool group_given = false;
  std::string_view group;
  std::string_view consumer;
  bool noack = false;
  int64_t count = 0;
  bool count_given = false;
  bool block = false;
  int64_t timeout_ms = 0;
  std::string_view block_arg;
  size_t streams_arg = 0;
  size_t streams = 0;
};

bool parse_read_args(CommandContext& ctx, ReadArgs& a) {
  const auto& argv = ctx.argv;
  for (size_t i = 1; i < argv.size(); ++i) {
    const size_t more = argv.size() - i - 1;
    const std::string_view o = argv[i];
    if (equals_ignore_case(o, "block") && more > 0) {
      if (ctx.from_script) {
        ctx.reply.error("ERR " + std::string(argv[0]) +
                        " command is not allowed with BLOCK option from scripts");
        return false;
      }
      ++i;
      int64_t ms = 0;
      if (!parse_int64(argv[i], ms)) {
        ctx.reply.error("ERR timeout is not an integer or out of range");
        return false;
      }
      if (ms < 0) {
        ctx.reply.error(kTimeoutNegative);
        return false;
      }
      if (ms > 0 && ms > INT64_MAX - ctx.store.now()) {
        ctx.reply.error("ERR timeout is out of range");
        return false;
      }
      a.block = true;
      a.timeout_ms = ms;
      a.block_arg = argv[i];
    } else if (equals_ignore_case(o, "count") && more > 0) {
      ++i;
      if (!int64_or_reply(ctx, argv[i], a.count)) return false;
      if (a.count < 0) a.count = 0;
      a.count_given = true;
    } else if (equals_ignore_case(o, "streams") && more > 0) {
      a.streams_arg = i + 1;
      const size_t n = argv.size() - a.streams_arg;
      if (n % 2 != 0) {
        // Redis 7.0.15 names XREAD and '$' here for XREADGROUP too.
        ctx.reply.error(
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
        return false;
      }
      a.streams = n / 2;
      break;
    } else if (equals_ignore_case(o, "group") && more >= 2) {
      if (!a.group_mode) {
        ctx.reply.error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a.group = argv[i + 1];
      a.consumer = argv[i + 2];
      a.group_given = true;
      i += 2;
    } else if (equals_ignore_case(o, "noack")) {
      if (!a.group_mode) {
        ctx.reply.error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a.noack = true;
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  if (a.streams_arg == 0) {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  if (a.group_mode && !a.group_given) {
    ctx.reply.error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  return true;
}

// One stream to read: its object (null when absent), group, and the ID entries must be above.
struct Source {
  const StreamObject* stream = nullptr;
  StreamGroup* group = nullptr;
  StreamID after;
  bool new_entries = false;  // XREADGROUP '>'
  bool skip = false;         // woken by another key: not served this time
};

// Records what XREADGROUP changed, as the commands the append-only file replays.
class GroupEffects {
 public:
  GroupEffects(std::string_view key, std::string_view group, std::string_view consumer)
      : key_(key), group_(group), consumer_(consumer) {}
  void consumer_created() {
    commands_.push_back({"XGROUP", "CREATECONSUMER", key_, group_, consumer_});
  }
  void delivered(StreamID id, const StreamNack& nack, StreamID last_id) {
    commands_.push_back({"XCLAIM", key_, group_, consumer_, "0", format_stream_id(id), "TIME",
                         decimal(nack.delivery_time), "RETRYCOUNT", decimal(nack.delivery_count),
                         "FORCE", "JUSTID", "LASTID", format_stream_id(last_id)});
  }
  void group_moved(const StreamGroup& g) {
    commands_.push_back({"XGROUP", "SETID", key_, group_, format_stream_id(g.last_id),
                         "ENTRIESREAD", decimal(g.entries_read)});
  }
  void flush(CommandContext& ctx) { record_group_effects(ctx, commands_); }

 private:
  std::string key_;
  std::string group_;
  std::string consumer_;
  std::vector<std::vector<std::string>> commands_;
};

// The consumer's own pending entries above `after` (XREADGROUP with an ID): each delivered
// again, an entry deleted meanwhile reported as [id, nil].
void serve_history(CommandContext& ctx, const StreamObject& s, StreamGroup& g, StreamConsumer& c,
                   StreamID after, int64_t count, GroupEffects& effects) {
  StreamID start = after;
  increment_stream_id(start);
  const size_t token = ctx.reply.begin_deferred();
  size_t n = 0;
  for (auto it = c.pending.lower_bound(start); it != c.pending.end(); ++it) {
    if (count != 0 && static_cast<int64_t>(n) >= count) break;
    StreamItem item;
    if (s.find(*it, &item)) {
      reply_stream_item(ctx.reply, item);
      StreamNack* nack = g.nack(*it);
      nack->delivery_time = ctx.store.now();
      ++nack->delivery_count;
      effects.delivered(*it, *nack, g.last_id);
    } else {
      ctx.reply.array(2);
      ctx.reply.bulk(format_stream_id(*it));
      ctx.reply.null_array();
    }
    ++n;
  }
  ctx.reply.end_deferred_array(token, n);
}

// New entries for the group (XREADGROUP '>'): the group's last ID and read counter move past
// each, and each joins the consumer's pending entries unless NOACK.
void serve_new(CommandContext& ctx, const StreamObject& s, StreamGroup& g, StreamConsumer& c,
               StreamID after, int64_t count, bool noack, GroupEffects& effects) {
  StreamID start = after;
  increment_stream_id(start);
  const size_t token = ctx.reply.begin_deferred();
  size_t n = 0;
  bool moved = false;
  s.for_each(start, kMaxStreamID, false, [&](const StreamItem& item) {
    if (item.id > g.last_id) {
      if (g.entries_read != kInvalidEntriesRead && !s.range_has_tombstones(item.id, kMaxStreamID)) {
        ++g.entries_read;
      } else if (s.entries_added() != 0) {
        g.entries_read = s.estimate_entries_read(item.id);
      }
      g.last_id = item.id;
      moved = true;
    }
    if (!noack) {
      g.set_pending(item.id, &c, ctx.store.now(), 1);
      effects.delivered(item.id, *g.nack(item.id), g.last_id);
    }
    reply_stream_item(ctx.reply, item);
    ++n;
    return count == 0 || static_cast<int64_t>(n) < count;
  });
  ctx.reply.end_deferred_array(token, n);
  if (moved) effects.group_moved(g);
}

// The command to run when woken: the same options with the IDs resolved now.
std::vector<std::string> rerun_form(const CommandContext& ctx, const ReadArgs& a,
                                    const std::vector<Source>& sources) {
  std::vector<std::string> out{std::string(ctx.argv[0])};
  if (a.group_mode) out.insert(out.end(), {"GROUP", std::string(a.group), std::string(a.consumer)});
  if (a.noack) out.emplace_back("NOACK");
  out.insert(out.end(), {"COUNT", decimal(a.count != 0 ? a.count : kBlockedDefaultCount), "BLOCK",
                         std::string(a.block_arg), "STREAMS"});
  for (size_t i = 0; i < a.streams; ++i) out.emplace_back(ctx.argv[a.streams_arg + i]);
  for (const Source& src : sources) {
    out.push_back(src.new_entries ? std::string(">") : format_stream_id(src.after));
  }
  return out;
}

void xread_generic(CommandContext& ctx, bool group_mode) {
  ReadArgs a;
  a.group_mode = group_mode;
  if (!parse_read_args(ctx, a)) return;
  if (ctx.timed_out) {
    ctx.reply.null_array();
    return;
  }
  const bool woken = ctx.blocked_retry;
  std::vector<Source> sources(a.streams);
  // XREADGROUP changes its groups: write access, one guard per distinct key, so the store
  // accounts the memory the groups gained.
  std::vector<ObjectWrite<StreamObject>> guards;
  if (!group_mode && !woken) {
    // Redis's XREAD reads every key once while it takes the IDs (stopping at a key of another
    // type) and again to serve them: a missing key is two misses and two keymiss events. The
    // errors are left to the loop below, which meets them in Redis's order.
    for (size_t i = 0; i < a.streams; ++i) {
      const Entry* e = ctx.store.lookup(ctx.argv[a.streams_arg + i]);
      if (e != nullptr && e->type() != ValueType::kStream) break;
    }
  }
  for (size_t i = 0; i < a.streams; ++i) {
    const std::string_view key = ctx.argv[a.streams_arg + i];
    const std::string_view id_arg = ctx.argv[a.streams_arg + a.streams + i];
    Source& src = sources[i];
    // Woken by a write to one key, the reader is served from that key alone: the others are
    // neither served nor checked.
    src.skip = woken && !ctx.ready_key.empty() && key != ctx.ready_key;
    if (src.skip) continue;
    if (group_mode) {
      auto found = write_object<StreamObject>(ctx.store, key, false);
      if (!found && !woken) {
        ctx.reply.error(found.error());
        return;
      }
      // Redis reads the key (lookupKeyRead): a missing one is a keyspace miss.
      if (found && !*found && !woken) ctx.store.lookup_notouch(key);
      if (found && *found) {
        src.stream = found->get();
        src.group = found->get()->group(a.group);
        bool guarded = false;
        for (const auto& g : guards) guarded |= g.get() == src.stream;
        if (!guarded) guards.push_back(std::move(found.value()));
      }
    } else {
      auto found = read_object<StreamObject>(ctx.store, key);
      if (!found && !woken) {
        ctx.reply.error(found.error());
        return;
      }
      // A reader woken by a write learns nothing from a key of another type: it keeps waiting.
      if (found) src.stream = *found;
    }
    if (group_mode) {
      if (woken && src.stream == nullptr) {
        ctx.reply.error("UNBLOCKED the stream key no longer exists");
        return;
      }
      if (woken && src.group == nullptr) {
        ctx.reply.error("NOGROUP the consumer group this client was blocked on no longer exists");
        return;
      }
      if (src.group == nullptr) {
        ctx.reply.error("NOGROUP No such key '" + std::string(key) + "' or consumer group '" +
                        std::string(a.group) + "' in XREADGROUP with GROUP option");
        return;
      }
    }
    if (id_arg == "$") {
      if (group_mode) {
        ctx.reply.error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
        return;
      }
      src.after = src.stream != nullptr ? src.stream->last_id() : kMinStreamID;
      continue;
    }
    if (id_arg == ">") {
      if (!group_mode) {
        ctx.reply.error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
            "<group> <consumer> option.");
        return;
      }
      src.new_entries = true;
      continue;
    }
    if (!strict_id_or_reply(ctx, id_arg, src.after)) return;
    // Redis marks '>' with the largest ID, so that ID written out means '>' too.
    if (group_mode && src.after == kMaxStreamID) src.new_entries = true;
  }

  const bool resp3 = ctx.reply.version() == protocol::RespVersion::kResp3;
  size_t served = 0;
  size_t token = 0;
  for (size_t i = 0; i < a.streams; ++i) {
    Source& src = sources[i];
    if (src.skip || src.stream == nullptr) continue;
    const StreamObject& s = *src.stream;
    const std::string_view key = ctx.argv[a.streams_arg + i];
    bool serve = false;
    StreamID after = src.after;
    StreamConsumer* consumer = nullptr;
    GroupEffects effects(key, a.group, a.consumer);
    if (group_mode) {
      if (!src.new_entries) {
        serve = true;
      } else if (s.length() > 0 && s.last_live_id() > src.group->last_id) {
        serve = true;
        after = src.group->last_id;
      }
    } else if (s.length() > 0 && s.last_live_id() > after) {
      serve = true;
    }
    if (serve) {
      if (group_mode) {
        // As in Redis 7.0, the consumer appears when it is served.
        bool created = false;
        consumer = src.group->get_or_create_consumer(a.consumer, ctx.store.now(), &created);
        consumer->seen_time = ctx.store.now();
        if (created) {
          effects.consumer_created();
          ctx.notify(common::kNotifyStream, "xgroup-createconsumer", key);
        }
      }
      if (served++ == 0) token = ctx.reply.begin_deferred();
      if (!resp3) ctx.reply.array(2);
      ctx.reply.bulk(key);
      if (!group_mode) {
        StreamID start = after;
        increment_stream_id(start);
        reply_stream_range(ctx.reply, s, start, kMaxStreamID, false, a.count);
      } else if (!src.new_entries) {
        serve_history(ctx, s, *src.group, *consumer, after, a.count, effects);
      } else {
        serve_new(ctx, s, *src.group, *consumer, after, a.count, a.noack, effects);
      }
    }
    effects.flush(ctx);
  }
  if (served > 0) {
    if (resp3) {
      ctx.reply.end_deferred_map(token, served);
    } else {
      ctx.reply.end_deferred_array(token, served);
    }
    return;
  }
  if (!a.block) {
    ctx.reply.null_array();
    return;
  }
  std::vector<std::string_view> keys(ctx.argv.begin() + a.streams_arg,
                                     ctx.argv.begin() + a.streams_arg + a.streams);
  block_or_timeout(ctx, keys, a.timeout_ms);
  if (ctx.block != nullptr && ctx.block->active) {
    ctx.block->rerun_argv = rerun_form(ctx, a, sources);
    ctx.block->independent = true;
  }
}

// Positions of the keys: what follows STREAMS, first half (Redis's xreadGetKeys).
void xread_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  size_t streams_pos = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string_view arg = argv[i];
    if (equals_ignore_case(arg, "block") || equals_ignore_case(arg, "count")) {
      ++i;
    } else if (equals_ignore_case(arg, "group")) {
      i += 2;
    } else if (equals_ignore_case(arg, "noack")) {
      continue;
    } else if (equals_ignore_case(arg, "streams")) {
      streams_pos = i;
      break;
    } else {
      break;
    }
  }
  if (streams_pos == 0) return;
  const size_t num = argv.size() - streams_pos - 1;
  if (num == 0 || num % 2 != 0) return;
  for (size_t i = streams_pos + 1; i < argv.size() - num / 2; ++i) positions.push_back(i);
}

}  // namespace

void cmd_xread(CommandContext& ctx) { xread_generic(ctx, false); }

void cmd_xreadgroup(CommandContext& ctx) { xread_generic(ctx, true); }

namespace {

constexpr CommandSpec kStreamReadCommands[] = {
    {.name = "xread",
     .arity = -4,
     .flags = kReadonly | kBlocking,
     .handler = cmd_xread,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Return never seen elements in multiple streams, with IDs greater than the ones "
                "reported by the caller for each stream. Can block.",
     .complexity = "For each stream mentioned: O(N) with N being the number of elements being "
                   "returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when "
                   "the BLOCK option is used, XADD will pay O(M) time in order to serve the M "
                   "clients blocked on the stream getting new data.",
     .syntax = "[COUNT=count<integer>] [BLOCK=milliseconds<integer>] (STREAMS=streams: "
               "key<key>... id...)",
     .acl_categories = "read stream slow blocking",
     .key_specs = "RO access|keyword:STREAMS:1|-1|1|2",
     .find_keys = xread_keys},
    {.name = "xreadgroup",
     .arity = -7,
     .flags = kWrite | kBlocking,
     .handler = cmd_xreadgroup,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Return new entries from a stream using a consumer group, or access the history "
                "of the pending entries for a given consumer. Can block.",
     .complexity = "For each stream mentioned: O(M) with M being the number of elements returned. "
                   "If M is constant (e.g. always asking for the first 10 elements with COUNT), "
                   "you can consider it O(1). On the other side when XREADGROUP blocks, XADD will "
                   "pay the O(N) time in order to serve the N clients blocked on the stream "
                   "getting new data.",
     .syntax = "(GROUP=group_consumer: group consumer) [COUNT=count<integer>] "
               "[BLOCK=milliseconds<integer>] [NOACK] (STREAMS=streams: key<key>... id...)",
     .acl_categories = "write stream slow blocking",
     .key_specs = "RO access|keyword:STREAMS:4|-1|1|2",
     .find_keys = xread_keys},
};

}  // namespace

std::span<const CommandSpec> stream_read_commands() { return kStreamReadCommands; }

}  // namespace ringkv::engine
