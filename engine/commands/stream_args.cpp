// Stream argument parsing and entry replies shared by the stream command families.
#include "engine/commands/stream_args.h"

#include <charconv>

#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/types/encoding_limits.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

bool parsed_or_reply(CommandContext& ctx, std::string_view arg, StreamIDSyntax syntax,
                     StreamID& out) {
  auto parsed = parse_stream_id(arg, syntax);
  if (!parsed) {
    ctx.reply.error(kInvalidStreamID);
    return false;
  }
  out = parsed->id;
  return true;
}

// streamParseIntervalIDOrReply: "(id" (longer than one byte) is exclusive and strict.
bool interval_or_reply(CommandContext& ctx, std::string_view arg, uint64_t missing_seq,
                       StreamID& out, bool& exclusive) {
  exclusive = arg.size() > 1 && arg[0] == '(';
  if (exclusive) return strict_id_or_reply(ctx, arg.substr(1), out, missing_seq);
  return id_or_reply(ctx, arg, out, missing_seq);
}

}  // namespace

bool strict_id_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out,
                        uint64_t missing_seq) {
  return parsed_or_reply(ctx, arg, {.missing_seq = missing_seq, .strict = true}, out);
}

bool id_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out, uint64_t missing_seq) {
  return parsed_or_reply(ctx, arg, {.missing_seq = missing_seq}, out);
}

bool range_start_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out) {
  bool exclusive = false;
  if (!interval_or_reply(ctx, arg, 0, out, exclusive)) return false;
  if (exclusive && !increment_stream_id(out)) {
    ctx.reply.error(kInvalidStartInterval);
    return false;
  }
  return true;
}

bool range_end_or_reply(CommandContext& ctx, std::string_view arg, StreamID& out) {
  bool exclusive = false;
  if (!interval_or_reply(ctx, arg, UINT64_MAX, out, exclusive)) return false;
  if (exclusive && !decrement_stream_id(out)) {
    ctx.reply.error(kInvalidEndInterval);
    return false;
  }
  return true;
}

bool add_trim_args_or_reply(CommandContext& ctx, bool xadd, AddTrimArgs& out) {
  using Strategy = StreamTrim::Strategy;
  const auto& argv = ctx.argv;
  bool limit_given = false;
  size_t i = 2;
  for (; i < argv.size(); ++i) {
    const size_t more = argv.size() - 1 - i;
    const std::string_view opt = argv[i];
    const bool is_maxlen = equals_ignore_case(opt, "maxlen");
    const bool is_minid = equals_ignore_case(opt, "minid");
    if (xadd && opt == "*") {
      break;
    } else if ((is_maxlen || is_minid) && more > 0) {
      if (out.trim.strategy != Strategy::kNone) {
        ctx.reply.error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return false;
      }
      out.trim.approx = false;
      const std::string_view next = argv[i + 1];
      if (more >= 2 && next == "~") {
        out.trim.approx = true;
        ++i;
      } else if (more >= 2 && next == "=") {
        ++i;
      }
      if (is_maxlen) {
        if (!int64_or_reply(ctx, argv[i + 1], out.trim.maxlen)) return false;
        if (out.trim.maxlen < 0) {
          ctx.reply.error("ERR The MAXLEN argument must be >= 0.");
          return false;
        }
        out.trim.strategy = Strategy::kMaxLen;
      } else {
        if (!strict_id_or_reply(ctx, argv[i + 1], out.trim.minid)) return false;
        out.trim.strategy = Strategy::kMinId;
      }
      ++i;
      out.strategy_pos = i;
    } else if (equals_ignore_case(opt, "limit") && more > 0) {
      if (!int64_or_reply(ctx, argv[i + 1], out.trim.limit)) return false;
      if (out.trim.limit < 0) {
        ctx.reply.error("ERR The LIMIT argument must be >= 0.");
        return false;
      }
      limit_given = true;
      ++i;
    } else if (xadd && equals_ignore_case(opt, "nomkstream")) {
      out.no_mkstream = true;
    } else if (xadd) {
      auto parsed = parse_stream_id(opt, {.strict = true, .allow_auto_seq = true});
      if (!parsed) {
        ctx.reply.error(kInvalidStreamID);
        return false;
      }
      out.id = parsed->id;
      out.seq_given = parsed->seq_given;
      out.id_given = true;
      break;
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  out.id_pos = i;
  if (out.trim.limit != 0 && out.trim.strategy == Strategy::kNone) {
    ctx.reply.error(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return false;
  }
  if (!xadd && out.trim.strategy == Strategy::kNone) {
    ctx.reply.error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return false;
  }
  if (limit_given) {
    if (!out.trim.approx) {
      ctx.reply.error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return false;
    }
  } else if (out.trim.approx) {
    // 100 nodes' worth by default, kept within 10 000 (no entry limit) and 1 000 000.
    const int64_t entries = encoding_limits().stream_node_max_entries;
    out.trim.limit = entries <= 0 ? 10000 : entries > 10000 ? 1000000 : 100 * entries;
  } else {
    out.trim.limit = 0;
  }
  return true;
}

void reply_stream_item(protocol::ReplyWriter& reply, const StreamItem& item) {
  reply.array(2);
  reply.bulk(format_stream_id(item.id));
  reply.array(item.size());
  item.for_each_string([&](std::string_view s) { reply.bulk(s); });
}

size_t reply_stream_range(protocol::ReplyWriter& reply, const StreamObject& stream, StreamID start,
                          StreamID end, bool reverse, int64_t count) {
  const size_t token = reply.begin_deferred();
  size_t n = 0;
  stream.for_each(start, end, reverse, [&](const StreamItem& item) {
    reply_stream_item(reply, item);
    ++n;
    return count == 0 || static_cast<int64_t>(n) < count;
  });
  reply.end_deferred_array(token, n);
  return n;
}

void record_group_effects(CommandContext& ctx, std::vector<std::vector<std::string>>& commands) {
  if (commands.empty()) return;
  for (auto& c : commands) {
    // Each effect names its stream: XCLAIM/XACK <key> ..., XGROUP SETID <key> ...
    const size_t key = c.size() > 2 && equals_ignore_case(c[0], "xgroup") ? 2 : 1;
    if (c.size() > key) ctx.data_changed(c[key]);
    ctx.propagate_as(std::move(c));
  }
  commands.clear();
}

std::string decimal(int64_t v) {
  char buf[24];
  return std::string(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
}

std::string decimal(uint64_t v) {
  char buf[24];
  return std::string(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
}

}  // namespace ringkv::engine
