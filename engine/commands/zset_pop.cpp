// Sorted-set pops and sampling: ZPOPMIN/ZPOPMAX, ZMPOP, their blocking forms BZPOPMIN/BZPOPMAX
// and BZMPOP, ZSCAN and ZRANDMEMBER. Arguments are parsed in Redis 7.0.15's order, so the first
// error reported is the one Redis reports.
#include "engine/commands/zset_pop.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/random.h"
#include "engine/commands/blocking.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/list_pop.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/commands/zset.h"
#include "engine/keyspace/store.h"
#include "engine/types/zset_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kNumkeysPositive = "ERR numkeys should be greater than 0";

// Pops up to `count` elements from the low (min) or high end of `zset`, writing each as
// member, score (flat) or [member, score] (nested).
void pop_elements(CommandContext& ctx, ZSetObject& zset, size_t count, bool min, bool nested) {
  count = std::min(count, zset.size());
  const size_t start = min ? 0 : zset.size() - 1;
  zset.visit_ranks(start, count, !min, [&](std::string_view m, double s) {
    if (nested) ctx.reply.array(2);
    ctx.reply.bulk(m);
    ctx.reply.double_value(s);
  });
  zset.erase_ranks(min ? 0 : zset.size() - count, count);
}

// ZPOPMIN/ZPOPMAX key [count].
void zpop_generic(CommandContext& ctx, bool min) {
  if (ctx.argv.size() > 3) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  int64_t count = 1;
  const bool has_count = ctx.argv.size() == 3;
  if (has_count && (!parse_int64(ctx.argv[2], count) || count < 0)) {
    ctx.reply.error(err::kMustBePositive);
    return;
  }
  auto found = write_or_reply<ZSetObject>(ctx, ctx.argv[1], false);
  if (!found) return;
  auto& zset = *found;
  if (!zset || count == 0) {
    ctx.reply.array(0);
    return;
  }
  // RESP3 nests the pairs when a count was given; otherwise the reply is flat.
  const bool nested = has_count && ctx.reply.version() == protocol::RespVersion::kResp3;
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), zset->size());
  ctx.key_modified(ctx.argv[1]);
  ctx.reply.array(nested ? n : n * 2);
  pop_elements(ctx, *zset, n, min, nested);
  notify_zset_removed(ctx, ctx.argv[1], min ? "zpopmin" : "zpopmax", zset->size());
}

// BZPOPMIN/BZPOPMAX key [key ...] timeout.
void bzpop_generic(CommandContext& ctx, bool min) {
  int64_t timeout_ms = 0;
  if (!block_timeout_or_reply(ctx, ctx.argv.back(), timeout_ms)) return;
  const auto keys = ctx.argv.subspan(1, ctx.argv.size() - 2);
  for (const std::string_view key : keys) {
    auto found = write_or_reply<ZSetObject>(ctx, key, false);
    if (!found) return;
    auto& zset = *found;
    if (!zset) continue;
    ctx.key_modified(key);
    // Logged as the non-blocking pop of the key that was served.
    ctx.propagate_as({min ? "ZPOPMIN" : "ZPOPMAX", key});
    ctx.reply.array(3);
    ctx.reply.bulk(key);
    pop_elements(ctx, *zset, 1, min, false);
    notify_zset_removed(ctx, key, min ? "zpopmin" : "zpopmax", zset->size());
    return;
  }
  block_or_timeout(ctx, keys, timeout_ms);
}

// ZRANDMEMBER key count [WITHSCORES].
void zrandmember_with_count(CommandContext& ctx) {
  int64_t count = 0;
  if (!random_count_or_reply(ctx, count)) return;
  bool with_scores = false;
  if (!random_with_or_reply(ctx, "withscores", count, with_scores)) return;
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  if (zset == nullptr || count == 0) {
    ctx.reply.array(0);
    return;
  }
  const bool resp3 = ctx.reply.version() == protocol::RespVersion::kResp3;
  const size_t size = zset->size();
  auto emit = [&](std::string_view m, double s) {
    if (with_scores && resp3) ctx.reply.array(2);
    ctx.reply.bulk(m);
    if (with_scores) ctx.reply.double_value(s);
  };
  auto header = [&](uint64_t n) { ctx.reply.array(with_scores && !resp3 ? n * 2 : n); };
  if (count < 0) {
    // With repetition: -count independent picks.
    const auto n = static_cast<uint64_t>(-count);
    header(n);
    for (uint64_t i = 0; i < n; ++i)
      zset->visit_ranks(common::next_random() % size, 1, false, emit);
    return;
  }
  if (static_cast<uint64_t>(count) >= size) {
    // Redis 7.0 answers the whole set from the highest score down.
    header(size);
    zset->visit_ranks(size - 1, size, true, emit);
    return;
  }
  // Distinct ranks: a partial Fisher-Yates shuffle of the rank list.
  std::vector<size_t> ranks(size);
  for (size_t i = 0; i < size; ++i) ranks[i] = i;
  const auto n = static_cast<size_t>(count);
  for (size_t i = 0; i < n; ++i) std::swap(ranks[i], ranks[i + common::next_random() % (size - i)]);
  ranks.resize(n);
  // A listpack answers in its own order, as Redis's lpRandomPairsUnique does.
  if (zset->encoding() == ZSetObject::Encoding::kListpack) std::sort(ranks.begin(), ranks.end());
  header(n);
  for (size_t r : ranks) zset->visit_ranks(r, 1, false, emit);
}

// ZMPOP/BZMPOP's arguments from argv[numkeys_at] on: numkeys, the keys, MIN|MAX, [COUNT count].
bool zmpop_args_or_reply(CommandContext& ctx, size_t numkeys_at,
                         std::span<const std::string_view>& keys, bool& min, int64_t& count) {
  int64_t numkeys = 0;
  if (!parse_int64(ctx.argv[numkeys_at], numkeys) || numkeys < 1) {
    ctx.reply.error(kNumkeysPositive);
    return false;
  }
  const size_t argc = ctx.argv.size();
  if (static_cast<uint64_t>(numkeys) >= argc - numkeys_at - 1) {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  const size_t where_at = numkeys_at + static_cast<size_t>(numkeys) + 1;
  const std::string_view where = ctx.argv[where_at].substr(0, ctx.argv[where_at].find('\0'));
  if (equals_ignore_case(where, "min")) {
    min = true;
  } else if (equals_ignore_case(where, "max")) {
    min = false;
  } else {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  count = -1;
  for (size_t j = where_at + 1; j < argc; ++j) {
    if (count == -1 && equals_ignore_case(ctx.argv[j], "count") && j + 1 < argc) {
      if (!parse_int64(ctx.argv[++j], count) || count < 1) {
        ctx.reply.error(err::kCountGreaterThanZero);
        return false;
      }
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  if (count == -1) count = 1;
  keys = ctx.argv.subspan(numkeys_at + 1, static_cast<size_t>(numkeys));
  return true;
}

// Pops up to `count` elements from the first sorted set among `keys` and replies [key,
// [[member, score]...]]. The first existing key decides: another type is WRONGTYPE. Returns
// false, having written nothing, when every key is absent.
bool zmpop_first_or_reply(CommandContext& ctx, std::span<const std::string_view> keys, bool min,
                          int64_t count) {
  for (const std::string_view key : keys) {
    auto found = write_or_reply<ZSetObject>(ctx, key, false);
    if (!found) return true;
    auto& zset = *found;
    if (!zset) continue;
    const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), zset->size());
    ctx.key_modified(key);
    // Logged as the pop it amounted to.
    ctx.propagate_as({min ? "ZPOPMIN" : "ZPOPMAX", key, std::to_string(n)});
    ctx.reply.array(2);
    ctx.reply.bulk(key);
    ctx.reply.array(n);
    pop_elements(ctx, *zset, n, min, true);
    notify_zset_removed(ctx, key, min ? "zpopmin" : "zpopmax", zset->size());
    return true;
  }
  return false;
}

}  // namespace

void cmd_zmpop(CommandContext& ctx) {
  std::span<const std::string_view> keys;
  bool min = true;
  int64_t count = 0;
  if (!zmpop_args_or_reply(ctx, 1, keys, min, count)) return;
  if (!zmpop_first_or_reply(ctx, keys, min, count)) ctx.reply.null_array();
}

void cmd_bzmpop(CommandContext& ctx) {
  std::span<const std::string_view> keys;
  bool min = true;
  int64_t count = 0;
  if (!zmpop_args_or_reply(ctx, 2, keys, min, count)) return;
  int64_t timeout_ms = 0;
  if (!block_timeout_or_reply(ctx, ctx.argv[1], timeout_ms)) return;
  if (!zmpop_first_or_reply(ctx, keys, min, count)) block_or_timeout(ctx, keys, timeout_ms);
}

void cmd_zpopmin(CommandContext& ctx) { zpop_generic(ctx, true); }

void cmd_zpopmax(CommandContext& ctx) { zpop_generic(ctx, false); }

void cmd_bzpopmin(CommandContext& ctx) { bzpop_generic(ctx, true); }

void cmd_bzpopmax(CommandContext& ctx) { bzpop_generic(ctx, false); }

void cmd_zrandmember(CommandContext& ctx) {
  if (ctx.argv.size() >= 3) {
    zrandmember_with_count(ctx);
    return;
  }
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  if (zset == nullptr) {
    ctx.reply.null();
    return;
  }
  zset->visit_ranks(common::next_random() % zset->size(), 1, false,
                    [&](std::string_view m, double) { ctx.reply.bulk(m); });
}

void cmd_zscan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!scan_cursor_or_reply(ctx, ctx.argv[2], cursor)) return;
  const ZSetObject* zset = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], zset)) return;
  if (zset == nullptr) {
    reply_empty_scan(ctx.reply);
    return;
  }
  ScanOptions options;
  if (!scan_options_or_reply(ctx, 3, false, options)) return;
  std::vector<std::pair<std::string_view, double>> items;
  const uint64_t next =
      zset->scan(cursor, static_cast<size_t>(options.count), [&](std::string_view m, double s) {
        if (options.matches(m)) items.emplace_back(m, s);
      });
  // Members and scores alternate, scores as strings in both protocols. A listpack holds whole
  // scores as integers (Redis's double2ll: exact and within +-LLONG_MAX/2), and ZSCAN prints
  // them back that way; every other score prints as "%.17g".
  const bool listpack = zset->encoding() == ZSetObject::Encoding::kListpack;
  constexpr double kLongLimit = static_cast<double>(INT64_MAX / 2);
  ctx.reply.array(2);
  ctx.reply.bulk_integer(static_cast<int64_t>(next));
  ctx.reply.array(items.size() * 2);
  for (const auto& [member, score] : items) {
    ctx.reply.bulk(member);
    if (listpack && score >= -kLongLimit && score <= kLongLimit &&
        score == static_cast<double>(static_cast<int64_t>(score))) {
      ctx.reply.bulk_integer(static_cast<int64_t>(score));
    } else {
      ctx.reply.double_bulk(score);
    }
  }
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kZsetPopCommands[] = {
    {.name = "zpopmin",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = cmd_zpopmin,
     .group = "sorted-set",
     .since = "5.0.0",
     .summary = "Remove and return members with the lowest scores in a sorted set",
     .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being "
                   "the number of elements popped.",
     .syntax = "key<key> [count<integer>]",
     .acl_categories = "write sortedset fast",
     .key_specs = "RW access delete|1|0|1|0"},
    {.name = "zpopmax",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = cmd_zpopmax,
     .group = "sorted-set",
     .since = "5.0.0",
     .summary = "Remove and return members with the highest scores in a sorted set",
     .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being "
                   "the number of elements popped.",
     .syntax = "key<key> [count<integer>]",
     .acl_categories = "write sortedset fast",
     .key_specs = "RW access delete|1|0|1|0"},
    {.name = "bzpopmin",
     .arity = -3,
     .flags = kWrite | kNoscript | kBlocking | kFast,
     .handler = cmd_bzpopmin,
     .group = "sorted-set",
     .since = "5.0.0",
     .summary = "Remove and return the member with the lowest score from one or more sorted sets, "
                "or block until one is available",
     .complexity = "O(log(N)) with N being the number of elements in the sorted set.",
     .syntax = "key<key>... timeout<double>",
     .acl_categories = "write sortedset fast blocking",
     .key_specs = "RW access delete|1|-2|1|0",
     .history = "6.0.0|`timeout` is interpreted as a double instead of an integer."},
    {.name = "bzpopmax",
     .arity = -3,
     .flags = kWrite | kNoscript | kBlocking | kFast,
     .handler = cmd_bzpopmax,
     .group = "sorted-set",
     .since = "5.0.0",
     .summary = "Remove and return the member with the highest score from one or more sorted sets, "
                "or block until one is available",
     .complexity = "O(log(N)) with N being the number of elements in the sorted set.",
     .syntax = "key<key>... timeout<double>",
     .acl_categories = "write sortedset fast blocking",
     .key_specs = "RW access delete|1|-2|1|0",
     .history = "6.0.0|`timeout` is interpreted as a double instead of an integer."},
    {.name = "zscan",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_zscan,
     .group = "sorted-set",
     .since = "2.8.0",
     .summary = "Incrementally iterate sorted sets elements and associated scores",
     .complexity =
         "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
         "the cursor to return back to 0. N is the number of elements inside the collection..",
     .syntax = "key<key> cursor<integer> [MATCH=pattern<pattern>] [COUNT=count<integer>]",
     .acl_categories = "read sortedset slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zrandmember",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_zrandmember,
     .group = "sorted-set",
     .since = "6.2.0",
     .summary = "Get one or multiple random elements from a sorted set",
     .complexity = "O(N) where N is the number of elements returned",
     .syntax = "key<key> [options: count<integer> [WITHSCORES]]",
     .acl_categories = "read sortedset slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "zmpop",
     .arity = -4,
     .flags = kWrite,
     .handler = cmd_zmpop,
     .group = "sorted-set",
     .since = "7.0.0",
     .summary = "Remove and return members with scores in a sorted set",
     .complexity = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number "
                   "of elements in the sorted set, and M being the number of elements popped.",
     .syntax = "numkeys<integer> key<key>... (where: MIN | MAX) [COUNT=count<integer>]",
     .acl_categories = "write sortedset slow",
     .key_specs = "RW access delete|1|keynum|0,1,1",
     .find_keys = lmpop_keys},
    {.name = "bzmpop",
     .arity = -5,
     .flags = kWrite | kBlocking,
     .handler = cmd_bzmpop,
     .group = "sorted-set",
     .since = "7.0.0",
     .summary = "Remove and return members with scores in a sorted set or block until one is "
                "available",
     .complexity = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number "
                   "of elements in the sorted set, and M being the number of elements popped.",
     .syntax = "timeout<double> numkeys<integer> key<key>... (where: MIN | MAX) "
               "[COUNT=count<integer>]",
     .acl_categories = "write sortedset slow blocking",
     .key_specs = "RW access delete|2|keynum|0,1,1",
     .find_keys = blmpop_keys},
};

}  // namespace

std::span<const CommandSpec> zset_pop_commands() { return kZsetPopCommands; }

}  // namespace ringkv::engine
