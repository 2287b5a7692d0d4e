// Stream entry commands (XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID): arguments parsed
// in Redis 7.0.15's order, so the first error reported is the one Redis reports; the family's
// table rows at the end.
#include "engine/commands/stream.h"

#include <string>
#include <vector>

#include "engine/commands/handler_args.h"
#include "engine/commands/stream_args.h"
#include "engine/commands/string_ops.h"
#include "engine/types/stream_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// What the append-only file records for a trim: an exact MAXLEN to the length the trim left,
// which replays to the same entries whatever node layout the replaying stream has.
std::vector<std::string> exact_trim_form(CommandContext& ctx, const StreamObject& s) {
  return {"XTRIM", std::string(ctx.argv[1]), "MAXLEN", "=", decimal(s.length())};
}

void xrange_generic(CommandContext& ctx, bool reverse) {
  const std::string_view start_arg = reverse ? ctx.argv[3] : ctx.argv[2];
  const std::string_view end_arg = reverse ? ctx.argv[2] : ctx.argv[3];
  StreamID start;
  StreamID end;
  if (!range_start_or_reply(ctx, start_arg, start)) return;
  if (!range_end_or_reply(ctx, end_arg, end)) return;
  int64_t count = -1;
  for (size_t j = 4; j < ctx.argv.size(); ++j) {
    const size_t more = ctx.argv.size() - j - 1;
    if (equals_ignore_case(ctx.argv[j], "count") && more >= 1) {
      if (!int64_or_reply(ctx, ctx.argv[j + 1], count)) return;
      if (count < 0) count = 0;
      ++j;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  const StreamObject* s = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], s)) return;
  if (s == nullptr) {
    ctx.reply.array(0);
    return;
  }
  if (count == 0) {
    ctx.reply.null_array();
    return;
  }
  reply_stream_range(ctx.reply, *s, start, end, reverse, count == -1 ? 0 : count);
}

}  // namespace

void cmd_xadd(CommandContext& ctx) {
  AddTrimArgs args;
  if (!add_trim_args_or_reply(ctx, true, args)) return;
  const size_t field_pos = args.id_pos + 1;
  if (ctx.argv.size() < field_pos + 2 || (ctx.argv.size() - field_pos) % 2 == 1) {
    reply_wrong_arity(ctx);
    return;
  }
  if (args.id_given && args.seq_given && args.id == kMinStreamID) {
    ctx.reply.error("ERR The ID specified in XADD must be greater than 0-0");
    return;
  }
  const std::string_view key = ctx.argv[1];
  auto found = write_or_reply<StreamObject>(ctx, key, !args.no_mkstream);
  if (!found) return;
  if (!*found) {
    ctx.reply.null();
    return;
  }
  StreamObject& s = *found->get();
  if (s.last_id() == kMaxStreamID) {
    ctx.reply.error("ERR The stream has exhausted the last possible ID, unable to add more items");
    return;
  }
  StreamID id;
  if (!args.id_given) {
    const auto now = static_cast<uint64_t>(ctx.store.now());
    if (now > s.last_id().ms) {
      id = {now, 0};
    } else {
      id = s.last_id();
      increment_stream_id(id);
    }
  } else if (!args.seq_given) {
    if (s.last_id().ms == args.id.ms) {
      if (s.last_id().seq == UINT64_MAX) {
        // Redis 7.0 fails here without setting errno, and XADD's reply falls through to its
        // other branch: redis-server 7.0.15 answers this text.
        ctx.reply.error("ERR Elements are too large to be stored");
        return;
      }
      id = {args.id.ms, s.last_id().seq + 1};
    } else {
      id = args.id;
    }
  } else {
    id = args.id;
  }
  if (id <= s.last_id()) {
    ctx.reply.error(
        "ERR The ID specified in XADD is equal or smaller than the target stream top item");
    return;
  }
  s.append(id, ctx.argv.subspan(field_pos));
  const std::string id_text = format_stream_id(id);
  ctx.reply.bulk(id_text);
  ctx.key_modified(key);
  ctx.notify(common::kNotifyStream, "xadd", key);
  if (args.trim.strategy != StreamTrim::Strategy::kNone && s.trim(args.trim) > 0) {
    ctx.notify(common::kNotifyStream, "xtrim", key);
  }
  if (ctx.propagating()) {
    // Logged with the ID it got, and a trim as the exact length it left.
    std::vector<std::string> effective{"XADD", std::string(key)};
    if (args.trim.strategy != StreamTrim::Strategy::kNone) {
      effective.insert(effective.end(), {"MAXLEN", "=", decimal(s.length())});
    }
    effective.push_back(id_text);
    for (size_t i = field_pos; i < ctx.argv.size(); ++i) effective.emplace_back(ctx.argv[i]);
    ctx.propagate_as(std::move(effective));
  }
  ctx.key_ready(key);
}

void cmd_xlen(CommandContext& ctx) {
  const StreamObject* s = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], s)) return;
  ctx.reply.integer(s == nullptr ? 0 : static_cast<int64_t>(s->length()));
}

void cmd_xrange(CommandContext& ctx) { xrange_generic(ctx, false); }

void cmd_xrevrange(CommandContext& ctx) { xrange_generic(ctx, true); }

void cmd_xdel(CommandContext& ctx) {
  auto found = write_or_reply<StreamObject>(ctx, ctx.argv[1], false);
  if (!found) return;
  if (!*found) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<StreamID> ids(ctx.argv.size() - 2);
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    if (!strict_id_or_reply(ctx, ctx.argv[j], ids[j - 2])) return;
  }
  StreamObject& s = *found->get();
  int64_t deleted = 0;
  for (StreamID id : ids) deleted += s.remove(id) ? 1 : 0;
  if (deleted > 0) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyStream, "xdel", ctx.argv[1]);
  }
  ctx.reply.integer(deleted);
}

void cmd_xtrim(CommandContext& ctx) {
  AddTrimArgs args;
  if (!add_trim_args_or_reply(ctx, false, args)) return;
  auto found = write_or_reply<StreamObject>(ctx, ctx.argv[1], false);
  if (!found) return;
  if (!*found) {
    ctx.reply.integer(0);
    return;
  }
  StreamObject& s = *found->get();
  const int64_t deleted = s.trim(args.trim);
  if (deleted > 0) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyStream, "xtrim", ctx.argv[1]);
    ctx.propagate_as(exact_trim_form(ctx, s));
  }
  ctx.reply.integer(deleted);
}

void cmd_xsetid(CommandContext& ctx) {
  StreamID id;
  if (!strict_id_or_reply(ctx, ctx.argv[2], id)) return;
  int64_t entries_added = -1;
  StreamID max_deleted;
  for (size_t i = 3; i < ctx.argv.size();) {
    const size_t more = ctx.argv.size() - 1 - i;
    const std::string_view opt = ctx.argv[i];
    if (equals_ignore_case(opt, "entriesadded") && more > 0) {
      if (!int64_or_reply(ctx, ctx.argv[i + 1], entries_added)) return;
      if (entries_added < 0) {
        ctx.reply.error("ERR entries_added must be positive");
        return;
      }
      i += 2;
    } else if (equals_ignore_case(opt, "maxdeletedid") && more > 0) {
      if (!strict_id_or_reply(ctx, ctx.argv[i + 1], max_deleted)) return;
      if (id < max_deleted) {
        ctx.reply.error(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
        return;
      }
      i += 2;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  auto found = write_or_reply<StreamObject>(ctx, ctx.argv[1], false);
  if (!found) return;
  if (!*found) {
    ctx.reply.error(err::kNoSuchKey);
    return;
  }
  StreamObject& s = *found->get();
  if (s.length() > 0) {
    if (id < s.last_live_id()) {
      ctx.reply.error("ERR The ID specified in XSETID is smaller than the target stream top item");
      return;
    }
    if (entries_added != -1 && s.length() > static_cast<uint64_t>(entries_added)) {
      ctx.reply.error(
          "ERR The entries_added specified in XSETID is smaller than the target stream length");
      return;
    }
  }
  s.set_last_id(id);
  if (entries_added != -1) s.set_entries_added(static_cast<uint64_t>(entries_added));
  if (max_deleted != kMinStreamID) s.set_max_deleted_id(max_deleted);
  // Redis 7.0.15 signals no key here (WATCH is not touched).
  ctx.data_changed(ctx.argv[1]);
  ctx.notify(common::kNotifyStream, "xsetid", ctx.argv[1]);
  ctx.reply.ok();
}

namespace {

constexpr CommandSpec kStreamCommands[] = {
    {.name = "xadd",
     .arity = -5,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_xadd,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Appends a new entry to a stream",
     .complexity = "O(1) when adding a new entry, O(N) when trimming where N being the number of "
                   "entries evicted.",
     .syntax = "key<key> [NOMKSTREAM]@6.2.0 [trim: (strategy: MAXLEN | MINID@6.2.0) [operator: "
               "equal:\"=\" | approximately:\"~\"] threshold [LIMIT=count<integer>]@6.2.0] "
               "(id_or_auto: auto_id:\"*\" | id) (field_value: field value)...",
     .acl_categories = "write stream fast",
     .tips = "nondeterministic_output",
     .key_specs = "RW update|1|0|1|0|UPDATE instead of INSERT because of the optional trimming "
                  "feature",
     .history = "6.2.0|Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` "
                "option.\n7.0.0|Added support for the `<ms>-*` explicit ID form."},
    {.name = "xlen",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_xlen,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Return the number of entries in a stream",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read stream fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "xrange",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_xrange,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Return a range of elements in a stream, with IDs matching the specified IDs "
                "interval",
     .complexity = "O(N) with N being the number of elements being returned. If N is constant "
                   "(e.g. always asking for the first 10 elements with COUNT), you can consider "
                   "it O(1).",
     .syntax = "key<key> start end [COUNT=count<integer>]",
     .acl_categories = "read stream slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "6.2.0|Added exclusive ranges."},
    {.name = "xrevrange",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_xrevrange,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Return a range of elements in a stream, with IDs matching the specified IDs "
                "interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
     .complexity = "O(N) with N being the number of elements returned. If N is constant (e.g. "
                   "always asking for the first 10 elements with COUNT), you can consider it "
                   "O(1).",
     .syntax = "key<key> end start [COUNT=count<integer>]",
     .acl_categories = "read stream slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "6.2.0|Added exclusive ranges."},
    {.name = "xdel",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_xdel,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Removes the specified entries from the stream. Returns the number of items "
                "actually deleted, that may be different from the number of IDs passed in case "
                "certain IDs do not exist.",
     .complexity = "O(1) for each single item to delete in the stream, regardless of the stream "
                   "size.",
     .syntax = "key<key> id...",
     .acl_categories = "write stream fast",
     .key_specs = "RW delete|1|0|1|0"},
    {.name = "xtrim",
     .arity = -4,
     .flags = kWrite,
     .handler = cmd_xtrim,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Trims the stream to (approximately if '~' is passed) a certain size",
     .complexity = "O(N), with N being the number of evicted entries. Constant times are very "
                   "small however, since entries are organized in macro nodes containing "
                   "multiple entries that can be released with a single deallocation.",
     .syntax = "key<key> (trim: (strategy: MAXLEN | MINID@6.2.0) [operator: equal:\"=\" | "
               "approximately:\"~\"] threshold [LIMIT=count<integer>]@6.2.0)",
     .acl_categories = "write stream slow",
     .tips = "nondeterministic_output",
     .key_specs = "RW delete|1|0|1|0",
     .history = "6.2.0|Added the `MINID` trimming strategy and the `LIMIT` option."},
    {.name = "xsetid",
     .arity = -3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_xsetid,
     .group = "stream",
     .since = "5.0.0",
     .summary = "An internal command for replicating stream values",
     .complexity = "O(1)",
     .syntax = "key<key> last-id [ENTRIESADDED=entries_added<integer>]@7.0.0 "
               "[MAXDELETEDID=max_deleted_entry_id]@7.0.0",
     .acl_categories = "write stream fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "7.0.0|Added the `entries_added` and `max_deleted_entry_id` arguments."},
};

}  // namespace

std::span<const CommandSpec> stream_commands() { return kStreamCommands; }

}  // namespace ringkv::engine
