// Sorted-set command handlers for single keys: ZADD, ZINCRBY, the queries, the ranges (ZRANGE and
// its older forms) and removals. Arguments are parsed in Redis 7.0.15's order, so the first error
// reported is the one Redis reports. Pops, ZSCAN and ZRANDMEMBER live in zset_pop.cpp, the
// multi-key set operations in zset_combine.cpp.
#include "engine/commands/zset.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/random.h"
#include "engine/commands/blocking.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/zset_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kNxXxConflict =
    "ERR XX and NX options at the same time are not compatible";
constexpr std::string_view kGtLtNxConflict =
    "ERR GT, LT, and/or NX options at the same time are not compatible";
constexpr std::string_view kIncrSinglePair =
    "ERR INCR option supports a single increment-element pair";
constexpr std::string_view kLimitNeedsByScoreOrLex =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
constexpr std::string_view kWithScoresByLex =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
constexpr std::string_view kMinMaxNotFloat = "ERR min or max is not a float";
constexpr std::string_view kMinMaxNotLex = "ERR min or max not valid string range item";

// ZADD and ZINCRBY (which is ZADD INCR): options from argv[2] on, then score/member pairs.
void zadd_generic(CommandContext& ctx, ZAddFlags flags) {
  size_t score_index = 2;
  for (; score_index < ctx.argv.size(); ++score_index) {
    const std::string_view opt = ctx.argv[score_index];
    if (equals_ignore_case(opt, "nx")) {
      flags.nx = true;
    } else if (equals_ignore_case(opt, "xx")) {
      flags.xx = true;
    } else if (equals_ignore_case(opt, "ch")) {
      flags.ch = true;
    } else if (equals_ignore_case(opt, "incr")) {
      flags.incr = true;
    } else if (equals_ignore_case(opt, "gt")) {
      flags.gt = true;
    } else if (equals_ignore_case(opt, "lt")) {
      flags.lt = true;
    } else {
      break;
    }
  }
  const size_t args = ctx.argv.size() - score_index;
  if (args == 0 || args % 2 != 0) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  if (flags.nx && flags.xx) {
    ctx.reply.error(kNxXxConflict);
    return;
  }
  if ((flags.gt && flags.nx) || (flags.lt && flags.nx) || (flags.gt && flags.lt)) {
    ctx.reply.error(kGtLtNxConflict);
    return;
  }
  if (flags.incr && args > 2) {
    ctx.reply.error(kIncrSinglePair);
    return;
  }
  std::vector<ScoredMember> pairs(args / 2);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!parse_score(ctx.argv[score_index + 2 * i], pairs[i].score)) {
      ctx.reply.error(err::kNotFloat);
      return;
    }
    pairs[i].member = ctx.argv[score_index + 2 * i + 1];
  }
  const std::string_view key = ctx.argv[1];
  const Result<ZAddOutcome> done = zset_add(ctx.store, key, pairs, flags);
  if (!done) {
    ctx.reply.error(done.error());
    return;
  }
  if (done->added > 0) ctx.key_ready(key);
  // Only a new member or a new score changes the key (ZINCRBY by 0 does not).
  if (done->added > 0 || done->updated > 0) {
    ctx.key_modified(key);
    ctx.notify(common::kNotifyZset, flags.incr ? "zincr" : "zadd", key);
  }
  if (flags.incr) {
    if (done->processed > 0) {
      ctx.reply.double_value(done->score);
    } else {
      ctx.reply.null();
    }
    return;
  }
  ctx.reply.integer(flags.ch ? done->added + done->updated : done->added);
}

// Which range ZRANGE's arguments describe, and in which direction (kAuto: options decide).
enum class RangeKind : uint8_t { kAuto, kRank, kScore, kLex };
enum class Direction : uint8_t { kAuto, kForward, kReverse };

// A resolved range: `count` elements from ascending rank `start`, going down when `reverse`.
struct RankSpan {
  size_t start = 0;
  size_t count = 0;
  bool reverse = false;
};

// Z[REV]RANGE rank normalization: negative indexes count from the end, out-of-range clamps.
RankSpan rank_span(int64_t start, int64_t end, size_t size, bool reverse) {
  const auto len = static_cast<int64_t>(size);
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return {};
  if (end >= len) end = len - 1;
  const auto count = static_cast<size_t>(end - start + 1);
  if (reverse) return {static_cast<size_t>(len - 1 - start), count, true};
  return {static_cast<size_t>(start), count, false};
}

// A score or lex range: the elements of ranks [lower, upper) after skipping `offset` and taking
// at most `limit` (negative: all), walked downwards when `reverse`. A negative offset selects
// nothing, as in Redis.
RankSpan window(size_t lower, size_t upper, int64_t offset, int64_t limit, bool reverse) {
  if (upper <= lower || offset < 0) return {};
  const size_t in_range = upper - lower;
  if (static_cast<uint64_t>(offset) >= in_range) return {};
  size_t count = in_range - static_cast<size_t>(offset);
  if (limit >= 0) count = std::min<size_t>(count, static_cast<uint64_t>(limit));
  if (count == 0) return {};
  if (reverse) return {upper - 1 - static_cast<size_t>(offset), count, true};
  return {lower + static_cast<size_t>(offset), count, false};
}

// Writes the elements of `span` as Redis does: members, with scores after each (RESP2 flat) or
// as [member, score] pairs (RESP3).
void reply_span(CommandContext& ctx, const ZSetObject* zset, RankSpan span, bool with_scores) {
  const bool resp3 = ctx.reply.version() == protocol::RespVersion::kResp3;
  ctx.reply.array(with_scores && !resp3 ? span.count * 2 : span.count);
  if (zset == nullptr) return;
  zset->visit_ranks(span.start, span.count, span.reverse, [&](std::string_view m, double s) {
    if (with_scores && resp3) ctx.reply.array(2);
    ctx.reply.bulk(m);
    if (with_scores) ctx.reply.double_value(s);
  });
}

// ZRANGESTORE's result: the elements of `span` in a new sorted set at argv[1] (replacing what
// was there), or the destination deleted when the span is empty. Replies the count.
void store_span(CommandContext& ctx, const ZSetObject* zset, RankSpan span) {
  const std::string_view dest = ctx.argv[1];
  auto result = std::make_unique<ZSetObject>();
  if (zset != nullptr && span.count > 0) {
    zset->visit_ranks(span.start, span.count, span.reverse,
                      [&](std::string_view m, double s) { result->set(m, s); });
  }
  const bool existed = span.count > 0 ? ctx.store.peek(dest) != nullptr : ctx.store.erase(dest);
  if (span.count > 0) {
    ctx.store.put_object(dest, std::move(result));
    ctx.key_ready(dest);
    ctx.notify(common::kNotifyZset, "zrangestore", dest);
  } else if (existed) {
    ctx.notify(common::kNotifyGeneric, "del", dest);
  }
  if (existed || span.count > 0) ctx.key_modified(dest);
  ctx.reply.integer(static_cast<int64_t>(span.count));
}

// The ranks [lower, upper) a lex range covers. Redis first rejects ranges whose last member is
// below the minimum or whose first member is above the maximum; with equal scores (the only case
// where lex ranges are defined) that changes nothing, and with mixed scores it keeps the answer
// Redis gives.
std::pair<size_t, size_t> lex_ranks(const ZSetObject& zset, const LexRange& range) {
  bool reachable = true;
  zset.visit_ranks(zset.size() - 1, 1, false, [&](std::string_view m, double) {
    reachable = reachable && lex_gte_min(m, range.min);
  });
  zset.visit_ranks(0, 1, false, [&](std::string_view m, double) {
    reachable = reachable && lex_lte_max(m, range.max);
  });
  if (!reachable) return {0, 0};
  return {zset.lex_lower_rank(range), zset.lex_upper_rank(range)};
}

// ZRANGE and its older forms, and ZRANGESTORE (Redis's zrangeGenericCommand): with `store` the
// arguments start one later (after the destination) and the range goes to a new sorted set.
void zrange_generic(CommandContext& ctx, RangeKind kind, Direction direction, bool store) {
  const size_t first = store ? 2 : 1;
  bool with_scores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = first + 3; j < ctx.argv.size(); ++j) {
    const size_t left = ctx.argv.size() - j - 1;
    const std::string_view opt = ctx.argv[j];
    if (!store && equals_ignore_case(opt, "withscores")) {
      with_scores = true;
    } else if (equals_ignore_case(opt, "limit") && left >= 2) {
      if (!parse_int64(ctx.argv[j + 1], offset) || !parse_int64(ctx.argv[j + 2], limit)) {
        ctx.reply.error(err::kNotInteger);
        return;
      }
      j += 2;
    } else if (direction == Direction::kAuto && equals_ignore_case(opt, "rev")) {
      direction = Direction::kReverse;
    } else if (kind == RangeKind::kAuto && equals_ignore_case(opt, "bylex")) {
      kind = RangeKind::kLex;
    } else if (kind == RangeKind::kAuto && equals_ignore_case(opt, "byscore")) {
      kind = RangeKind::kScore;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  if (kind == RangeKind::kAuto) kind = RangeKind::kRank;
  const bool reverse = direction == Direction::kReverse;
  if (limit != -1 && kind == RangeKind::kRank) {
    ctx.reply.error(kLimitNeedsByScoreOrLex);
    return;
  }
  if (with_scores && kind == RangeKind::kLex) {
    ctx.reply.error(kWithScoresByLex);
    return;
  }
  // Score and lex ranges are given as max, min when reversed.
  std::string_view min_arg = ctx.argv[first + 1];
  std::string_view max_arg = ctx.argv[first + 2];
  if (reverse && kind != RangeKind::kRank) std::swap(min_arg, max_arg);
  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  switch (kind) {
    case RangeKind::kAuto:
    case RangeKind::kRank:
      if (!parse_int64(min_arg, start) || !parse_int64(max_arg, end)) {
        ctx.reply.error(err::kNotInteger);
        return;
      }
      break;
    case RangeKind::kScore:
      if (!parse_score_range(min_arg, max_arg, score_range)) {
        ctx.reply.error(kMinMaxNotFloat);
        return;
      }
      break;
    case RangeKind::kLex:
      if (!parse_lex_range(min_arg, max_arg, lex_range)) {
        ctx.reply.error(kMinMaxNotLex);
        return;
      }
      break;
  }
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[first], zset)) return;
  RankSpan span;
  if (zset == nullptr) {
    // Nothing to range over.
  } else if (kind == RangeKind::kRank) {
    span = rank_span(start, end, zset->size(), reverse);
  } else if (offset <= 0 || static_cast<uint64_t>(offset) < zset->size()) {
    const auto [lower, upper] =
        kind == RangeKind::kScore
            ? std::pair(zset->score_lower_rank(score_range), zset->score_upper_rank(score_range))
            : lex_ranks(*zset, lex_range);
    span = window(lower, upper, offset, limit, reverse);
  }
  if (store) {
    store_span(ctx, zset, span);
  } else {
    reply_span(ctx, zset, span, with_scores);
  }
}

// ZREMRANGEBYRANK/SCORE/LEX: parse the range, then remove what it covers.
void zremrange_generic(CommandContext& ctx, RangeKind kind) {
  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  if (kind == RangeKind::kRank) {
    if (!parse_int64(ctx.argv[2], start) || !parse_int64(ctx.argv[3], end)) {
      ctx.reply.error(err::kNotInteger);
      return;
    }
  } else if (kind == RangeKind::kScore) {
    if (!parse_score_range(ctx.argv[2], ctx.argv[3], score_range)) {
      ctx.reply.error(kMinMaxNotFloat);
      return;
    }
  } else if (!parse_lex_range(ctx.argv[2], ctx.argv[3], lex_range)) {
    ctx.reply.error(kMinMaxNotLex);
    return;
  }
  auto found = write_or_reply<ZSetObject>(ctx, ctx.argv[1], false);
  if (!found) return;
  auto& zset = *found;
  if (!zset) {
    ctx.reply.integer(0);
    return;
  }
  RankSpan span;
  if (kind == RangeKind::kRank) {
    span = rank_span(start, end, zset->size(), false);
  } else if (kind == RangeKind::kScore) {
    span = window(zset->score_lower_rank(score_range), zset->score_upper_rank(score_range), 0, -1,
                  false);
  } else {
    const auto [lower, upper] = lex_ranks(*zset, lex_range);
    span = window(lower, upper, 0, -1, false);
  }
  const size_t removed = zset->erase_ranks(span.start, span.count);
  if (removed > 0) {
    ctx.key_modified(ctx.argv[1]);
    const char* event = kind == RangeKind::kRank ? "zremrangebyrank" : "zremrangebylex";
    if (kind == RangeKind::kScore) event = "zremrangebyscore";
    notify_zset_removed(ctx, ctx.argv[1], event, zset->size());
  }
  ctx.reply.integer(static_cast<int64_t>(removed));
}

}  // namespace

void cmd_zadd(CommandContext& ctx) { zadd_generic(ctx, {}); }

void cmd_zincrby(CommandContext& ctx) { zadd_generic(ctx, {.incr = true}); }

void cmd_zscore(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  const auto score = zset == nullptr ? std::nullopt : zset->score(ctx.argv[2]);
  if (score) {
    ctx.reply.double_value(*score);
  } else {
    ctx.reply.null();
  }
}

void cmd_zmscore(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    const auto score = zset == nullptr ? std::nullopt : zset->score(ctx.argv[i]);
    if (score) {
      ctx.reply.double_value(*score);
    } else {
      ctx.reply.null();
    }
  }
}

void cmd_zcard(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  ctx.reply.integer(zset == nullptr ? 0 : static_cast<int64_t>(zset->size()));
}

void cmd_zcount(CommandContext& ctx) {
  ScoreRange range;
  if (!parse_score_range(ctx.argv[2], ctx.argv[3], range)) {
    ctx.reply.error(kMinMaxNotFloat);
    return;
  }
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  if (zset == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  const size_t lower = zset->score_lower_rank(range);
  const size_t upper = zset->score_upper_rank(range);
  ctx.reply.integer(upper > lower ? static_cast<int64_t>(upper - lower) : 0);
}

void cmd_zlexcount(CommandContext& ctx) {
  LexRange range;
  if (!parse_lex_range(ctx.argv[2], ctx.argv[3], range)) {
    ctx.reply.error(kMinMaxNotLex);
    return;
  }
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  if (zset == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  const auto [lower, upper] = lex_ranks(*zset, range);
  ctx.reply.integer(upper > lower ? static_cast<int64_t>(upper - lower) : 0);
}

void cmd_zrangestore(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kAuto, Direction::kAuto, true);
}

void cmd_zrange(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kAuto, Direction::kAuto, false);
}

void cmd_zrevrange(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kRank, Direction::kReverse, false);
}

void cmd_zrangebyscore(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kScore, Direction::kForward, false);
}

void cmd_zrevrangebyscore(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kScore, Direction::kReverse, false);
}

void cmd_zrangebylex(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kLex, Direction::kForward, false);
}

void cmd_zrevrangebylex(CommandContext& ctx) {
  zrange_generic(ctx, RangeKind::kLex, Direction::kReverse, false);
}

void cmd_zrank(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  const auto rank = zset == nullptr ? std::nullopt : zset->rank(ctx.argv[2]);
  if (rank) {
    ctx.reply.integer(static_cast<int64_t>(*rank));
  } else {
    ctx.reply.null();
  }
}

void cmd_zrevrank(CommandContext& ctx) {
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  const auto rank = zset == nullptr ? std::nullopt : zset->rank(ctx.argv[2]);
  if (rank) {
    ctx.reply.integer(static_cast<int64_t>(zset->size() - 1 - *rank));
  } else {
    ctx.reply.null();
  }
}

void cmd_zrem(CommandContext& ctx) {
  auto removed = remove_each<ZSetObject>(
      ctx.store, ctx.argv[1], ctx.argv.subspan(2),
      [](ZSetObject& zset, std::string_view member) { return zset.erase(member); });
  if (removed) {
    if (*removed > 0) {
      ctx.key_modified(ctx.argv[1]);
      // The guard has deleted an emptied key by now.
      notify_zset_removed(ctx, ctx.argv[1], "zrem", ctx.store.peek(ctx.argv[1]) == nullptr ? 0 : 1);
    }
    ctx.reply.integer(*removed);
  } else {
    ctx.reply.error(removed.error());
  }
}

void cmd_zremrangebyrank(CommandContext& ctx) { zremrange_generic(ctx, RangeKind::kRank); }

void cmd_zremrangebyscore(CommandContext& ctx) { zremrange_generic(ctx, RangeKind::kScore); }

void cmd_zremrangebylex(CommandContext& ctx) { zremrange_generic(ctx, RangeKind::kLex); }

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kZsetCommands[] = {
    {.name = "zadd",
     .arity = -4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_zadd,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Add one or more members to a sorted set, or update its score if it already exists",
     .complexity =
         "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
     .syntax =
         "key<key> [condition: NX | XX]@3.0.2 [comparison: GT | LT]@6.2.0 [change:\"CH\"]@3.0.2 "
         "[increment:\"INCR\"]@3.0.2 (score_member: score<double> member)...",
     .acl_categories = "write sortedset fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "2.4.0|Accepts multiple elements.\n3.0.2|Added the `XX`, `NX`, `CH` and `INCR` "
                "options.\n6.2.0|Added the `GT` and `LT` options."},
    {.name = "zincrby",
     .arity = 4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_zincrby,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Increment the score of a member in a sorted set",
     .complexity = "O(log(N)) where N is the number of elements in the sorted set.",
     .syntax = "key<key> increment<integer> member",
     .acl_categories = "write sortedset fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "zscore",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_zscore,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Get the score associated with the given member in a sorted set",
     .complexity = "O(1)",
     .syntax = "key<key> member",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zmscore",
     .arity = -3,
     .flags = kReadonly | kFast,
     .handler = cmd_zmscore,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Get the score associated with the given members in a sorted set",
     .complexity = "O(N) where N is the number of members being requested.",
     .syntax = "key<key> member...",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zcard",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_zcard,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Get the number of members in a sorted set",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "zcount",
     .arity = 4,
     .flags = kReadonly | kFast,
     .handler = cmd_zcount,
     .group = "sorted-set",
     .since = "2.0.0",
     .summary = "Count the members in a sorted set with scores within the given values",
     .complexity = "O(log(N)) with N being the number of elements in the sorted set.",
     .syntax = "key<key> min<double> max<double>",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zlexcount",
     .arity = 4,
     .flags = kReadonly | kFast,
     .handler = cmd_zlexcount,
     .group = "sorted-set",
     .since = "2.8.9",
     .summary = "Count the number of members in a sorted set between a given lexicographical range",
     .complexity = "O(log(N)) with N being the number of elements in the sorted set.",
     .syntax = "key<key> min max",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zrange",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_zrange,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Return a range of members in a sorted set",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements returned.",
     .syntax = "key<key> start stop [sortby: BYSCORE | BYLEX]@6.2.0 [REV]@6.2.0 "
               "[LIMIT=offset_count: offset<integer> count<integer>]@6.2.0 [WITHSCORES]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "6.2.0|Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options."},
    {.name = "zrangebyscore",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_zrangebyscore,
     .group = "sorted-set",
     .since = "1.0.5",
     .summary = "Return a range of members in a sorted set, by score",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements being returned. If M is constant (e.g. always asking for "
                   "the first 10 elements with LIMIT), you can consider it O(log(N)).",
     .syntax = "key<key> min<double> max<double> [WITHSCORES]@2.0.0 [LIMIT=offset_count: "
               "offset<integer> count<integer>]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "2.0.0|Added the `WITHSCORES` modifier.",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`ZRANGE` with the `BYSCORE` argument"},
    {.name = "zrevrangebyscore",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_zrevrangebyscore,
     .group = "sorted-set",
     .since = "2.2.0",
     .summary = "Return a range of members in a sorted set, by score, with scores ordered from "
                "high to low",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements being returned. If M is constant (e.g. always asking for "
                   "the first 10 elements with LIMIT), you can consider it O(log(N)).",
     .syntax = "key<key> max<double> min<double> [WITHSCORES] [LIMIT=offset_count: offset<integer> "
               "count<integer>]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|0|1|0",
     .history = "2.1.6|`min` and `max` can be exclusive.",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`ZRANGE` with the `REV` and `BYSCORE` arguments"},
    {.name = "zrangebylex",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_zrangebylex,
     .group = "sorted-set",
     .since = "2.8.9",
     .summary = "Return a range of members in a sorted set, by lexicographical range",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements being returned. If M is constant (e.g. always asking for "
                   "the first 10 elements with LIMIT), you can consider it O(log(N)).",
     .syntax = "key<key> min max [LIMIT=offset_count: offset<integer> count<integer>]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`ZRANGE` with the `BYLEX` argument"},
    {.name = "zrevrangebylex",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_zrevrangebylex,
     .group = "sorted-set",
     .since = "2.8.9",
     .summary = "Return a range of members in a sorted set, by lexicographical range, ordered from "
                "higher to lower strings.",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements being returned. If M is constant (e.g. always asking for "
                   "the first 10 elements with LIMIT), you can consider it O(log(N)).",
     .syntax = "key<key> max min [LIMIT=offset_count: offset<integer> count<integer>]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`ZRANGE` with the `REV` and `BYLEX` arguments"},
    {.name = "zrevrange",
     .arity = -4,
     .flags = kReadonly,
     .handler = cmd_zrevrange,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Return a range of members in a sorted set, by index, with scores ordered from "
                "high to low",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements returned.",
     .syntax = "key<key> start<integer> stop<integer> [WITHSCORES]",
     .acl_categories = "read sortedset slow",
     .key_specs = "RO access|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`ZRANGE` with the `REV` argument"},
    {.name = "zrank",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_zrank,
     .group = "sorted-set",
     .since = "2.0.0",
     .summary = "Determine the index of a member in a sorted set",
     .complexity = "O(log(N))",
     .syntax = "key<key> member",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zrevrank",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_zrevrank,
     .group = "sorted-set",
     .since = "2.0.0",
     .summary =
         "Determine the index of a member in a sorted set, with scores ordered from high to low",
     .complexity = "O(log(N))",
     .syntax = "key<key> member",
     .acl_categories = "read sortedset fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zrem",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_zrem,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Remove one or more members from a sorted set",
     .complexity = "O(M*log(N)) with N being the number of elements in the sorted set and M the "
                   "number of elements to be removed.",
     .syntax = "key<key> member...",
     .acl_categories = "write sortedset fast",
     .key_specs = "RW delete|1|0|1|0",
     .history = "2.4.0|Accepts multiple elements."},
    {.name = "zremrangebyrank",
     .arity = 4,
     .flags = kWrite,
     .handler = cmd_zremrangebyrank,
     .group = "sorted-set",
     .since = "2.0.0",
     .summary = "Remove all members in a sorted set within the given indexes",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements removed by the operation.",
     .syntax = "key<key> start<integer> stop<integer>",
     .acl_categories = "write sortedset slow",
     .key_specs = "RW delete|1|0|1|0"},
    {.name = "zremrangebyscore",
     .arity = 4,
     .flags = kWrite,
     .handler = cmd_zremrangebyscore,
     .group = "sorted-set",
     .since = "1.2.0",
     .summary = "Remove all members in a sorted set within the given scores",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements removed by the operation.",
     .syntax = "key<key> min<double> max<double>",
     .acl_categories = "write sortedset slow",
     .key_specs = "RW delete|1|0|1|0"},
    {.name = "zremrangebylex",
     .arity = 4,
     .flags = kWrite,
     .handler = cmd_zremrangebylex,
     .group = "sorted-set",
     .since = "2.8.9",
     .summary = "Remove all members in a sorted set between the given lexicographical range",
     .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the "
                   "number of elements removed by the operation.",
     .syntax = "key<key> min max",
     .acl_categories = "write sortedset slow",
     .key_specs = "RW delete|1|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> zset_commands() { return kZsetCommands; }

}  // namespace ringkv::engine
