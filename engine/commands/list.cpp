// List command handlers, blocking ones included: parse arguments in Redis 7.0.15's order (so the
// first error reported is the one Redis reports), call the operations of list_type.h and write
// the reply. Every push reports its key as ready for clients blocked on it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/blocking.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/handlers.h"
#include "engine/keyspace/store.h"
#include "engine/types/list_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;
using End = ListObject::End;

namespace {

constexpr std::string_view kMustBePositive = "ERR value is out of range, must be positive";
constexpr std::string_view kRankZero =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list";
constexpr std::string_view kCountNegative = "ERR COUNT can't be negative";
constexpr std::string_view kMaxlenNegative = "ERR MAXLEN can't be negative";
constexpr std::string_view kNumkeys = "ERR numkeys should be greater than 0";
constexpr std::string_view kCountPositive = "ERR count should be greater than 0";

// LEFT or RIGHT, case-insensitively (getListPositionFromObjectOrReply).
bool end_or_reply(CommandContext& ctx, std::string_view arg, End& end) {
  if (equals_ignore_case(arg, "left")) {
    end = End::kHead;
  } else if (equals_ignore_case(arg, "right")) {
    end = End::kTail;
  } else {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  return true;
}

// The LEFT/RIGHT argument naming an end (LMOVE's spelling).
std::string_view end_name(End end) { return end == End::kHead ? "LEFT" : "RIGHT"; }

// A non-negative integer; one error text for both failures (`msg`, or "must be positive"), as
// getPositiveLongFromObjectOrReply.
bool non_negative_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out,
                           std::string_view msg) {
  if (!parse_int64(arg, out)) {
    ctx.reply.error(msg.empty() ? kMustBePositive : msg);
    return false;
  }
  if (out < 0) {
    ctx.reply.error(msg.empty() ? kMustBePositive : msg);
    return false;
  }
  return true;
}

// An integer of at least 1 (numkeys, LMPOP's COUNT), with one error text for every failure.
bool positive_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out,
                       std::string_view msg) {
  if (parse_int64(arg, out) && out >= 1) return true;
  ctx.reply.error(msg);
  return false;
}

void push_generic(CommandContext& ctx, End end, bool only_existing) {
  auto len = list_push(ctx.store, ctx.argv[1], end, ctx.argv.subspan(2), only_existing);
  if (!len) {
    ctx.reply.error(len.error());
    return;
  }
  // LPUSHX/RPUSHX on a missing key push nothing and change nothing.
  if (*len > 0) {
    ctx.key_ready(ctx.argv[1]);
    ctx.key_modified(ctx.argv[1]);
  }
  ctx.reply.integer(*len);
}

void pop_generic(CommandContext& ctx, End end) {
  if (ctx.argv.size() > 3) {
    reply_wrong_arity(ctx);
    return;
  }
  const bool has_count = ctx.argv.size() == 3;
  int64_t count = 1;
  if (has_count && !non_negative_or_reply(ctx, ctx.argv[2], count, {})) return;
  auto popped = list_pop(ctx.store, ctx.argv[1], end, static_cast<size_t>(count));
  if (!popped) {
    ctx.reply.error(popped.error());
    return;
  }
  const auto& values = *popped;
  if (!values) {
    if (has_count) {
      ctx.reply.null_array();
    } else {
      ctx.reply.null();
    }
    return;
  }
  // A count of 0 pops nothing.
  if (!values->empty()) ctx.key_modified(ctx.argv[1]);
  if (!has_count) {
    ctx.reply.bulk(values->front());
    return;
  }
  ctx.reply.array(values->size());
  for (const std::string& v : *values) ctx.reply.bulk(v);
}

// Pops up to `count` elements from the first non-empty list among `keys` and replies [key,
// [elements]] (LMPOP, BLMPOP) — or [key, element] when `count` is 0 (BLPOP, BRPOP). Replies the
// error on WRONGTYPE (keys before the first list are checked in order). Returns false when every
// key is absent, having written nothing.
bool pop_first_or_reply(CommandContext& ctx, std::span<const std::string_view> keys, End end,
                        int64_t count) {
  for (std::string_view key : keys) {
    auto popped = list_pop(ctx.store, key, end, count == 0 ? 1 : static_cast<size_t>(count));
    if (!popped) {
      ctx.reply.error(popped.error());
      return true;
    }
    const auto& values = *popped;
    if (!values) continue;
    ctx.key_modified(key);
    // Logged as the non-blocking pop of the key that was served, with the count it took.
    if (count == 0) {
      ctx.propagate_as({end == End::kHead ? "LPOP" : "RPOP", key});
    } else {
      ctx.propagate_as({end == End::kHead ? "LPOP" : "RPOP", key, std::to_string(values->size())});
    }
    ctx.reply.array(2);
    ctx.reply.bulk(key);
    if (count == 0) {
      ctx.reply.bulk(values->front());
      return true;
    }
    ctx.reply.array(values->size());
    for (const std::string& v : *values) ctx.reply.bulk(v);
    return true;
  }
  return false;
}

// Parses LMPOP/BLMPOP from argv[numkeys_at] on: numkeys, the keys, LEFT|RIGHT, [COUNT count].
bool mpop_args_or_reply(CommandContext& ctx, size_t numkeys_at,
                        std::span<const std::string_view>& keys, End& end, int64_t& count) {
  int64_t numkeys = 0;
  if (!positive_or_reply(ctx, ctx.argv[numkeys_at], numkeys, kNumkeys)) return false;
  const size_t argc = ctx.argv.size();
  if (static_cast<uint64_t>(numkeys) >= argc - numkeys_at - 1) {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  const size_t where_at = numkeys_at + static_cast<size_t>(numkeys) + 1;
  if (!end_or_reply(ctx, ctx.argv[where_at], end)) return false;
  count = 0;
  for (size_t j = where_at + 1; j < argc; ++j) {
    if (count == 0 && equals_ignore_case(ctx.argv[j], "count") && j + 1 < argc) {
      if (!positive_or_reply(ctx, ctx.argv[++j], count, kCountPositive)) return false;
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  if (count == 0) count = 1;
  keys = ctx.argv.subspan(numkeys_at + 1, static_cast<size_t>(numkeys));
  return true;
}

// LMOVE's common part (BLMOVE, RPOPLPUSH, BRPOPLPUSH): moves one element, replying it, or the
// null bulk when the source is absent. Returns whether an element moved.
bool move_generic(CommandContext& ctx, End from, End to) {
  auto moved = list_move(ctx.store, ctx.argv[1], ctx.argv[2], from, to);
  if (!moved) {
    ctx.reply.error(moved.error());
    return false;
  }
  if (!*moved) {
    ctx.reply.null();
    return false;
  }
  ctx.key_ready(ctx.argv[2]);
  ctx.key_modified(ctx.argv[1]);
  ctx.key_modified(ctx.argv[2]);
  ctx.reply.bulk(**moved);
  return true;
}

// BLMOVE and BRPOPLPUSH once their arguments are parsed: move now, or wait for the source.
void blocking_move(CommandContext& ctx, End from, End to, std::string_view timeout_arg) {
  int64_t timeout_ms = 0;
  if (!block_timeout_or_reply(ctx, timeout_arg, timeout_ms)) return;
  auto source = read_object<ListObject>(ctx.store, ctx.argv[1]);
  if (!source) {
    ctx.reply.error(source.error());
    return;
  }
  if (*source == nullptr) {
    block_or_timeout(ctx, ctx.argv.subspan(1, 1), timeout_ms, DeniedReply::kNullBulk);
    return;
  }
  // Logged as the LMOVE it amounted to.
  if (move_generic(ctx, from, to)) {
    ctx.propagate_as({"LMOVE", ctx.argv[1], ctx.argv[2], end_name(from), end_name(to)});
  }
}

// BLPOP and BRPOP: key... timeout.
void blocking_pop(CommandContext& ctx, End end) {
  int64_t timeout_ms = 0;
  if (!block_timeout_or_reply(ctx, ctx.argv.back(), timeout_ms)) return;
  auto keys = ctx.argv.subspan(1, ctx.argv.size() - 2);
  if (!pop_first_or_reply(ctx, keys, end, 0)) block_or_timeout(ctx, keys, timeout_ms);
}

// Appends the key positions of a numkeys-style command whose numkeys is at argv[at].
void numkeys_positions(std::span<const std::string_view> argv, size_t at,
                       std::vector<size_t>& positions) {
  int64_t numkeys = 0;
  if (argv.size() <= at || !parse_int64(argv[at], numkeys) || numkeys < 1 ||
      static_cast<uint64_t>(numkeys) > argv.size() - at - 1) {
    return;
  }
  for (size_t i = 0; i < static_cast<size_t>(numkeys); ++i) positions.push_back(at + 1 + i);
}

}  // namespace

void lmpop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  numkeys_positions(argv, 1, positions);
}

void blmpop_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  numkeys_positions(argv, 2, positions);
}

void cmd_lpush(CommandContext& ctx) { push_generic(ctx, End::kHead, false); }

void cmd_rpush(CommandContext& ctx) { push_generic(ctx, End::kTail, false); }

void cmd_lpushx(CommandContext& ctx) { push_generic(ctx, End::kHead, true); }

void cmd_rpushx(CommandContext& ctx) { push_generic(ctx, End::kTail, true); }

void cmd_lpop(CommandContext& ctx) { pop_generic(ctx, End::kHead); }

void cmd_rpop(CommandContext& ctx) { pop_generic(ctx, End::kTail); }

void cmd_llen(CommandContext& ctx) {
  const ListObject* list = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], list)) return;
  ctx.reply.integer(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
}

void cmd_lrange(CommandContext& ctx) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], start) || !int64_or_reply(ctx, ctx.argv[3], stop)) return;
  const ListObject* list = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], list)) return;
  const int64_t len = list == nullptr ? 0 : static_cast<int64_t>(list->size());
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) {
    ctx.reply.array(0);
    return;
  }
  if (stop >= len) stop = len - 1;
  size_t left = static_cast<size_t>(stop - start + 1);
  ctx.reply.array(left);
  list->walk(static_cast<size_t>(start), false, [&](std::string_view v) {
    ctx.reply.bulk(v);
    return --left > 0;
  });
}

void cmd_lindex(CommandContext& ctx) {
  const ListObject* list = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], list)) return;
  if (list == nullptr) {
    ctx.reply.null();
    return;
  }
  int64_t index = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], index)) return;
  const int64_t len = static_cast<int64_t>(list->size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) {
    ctx.reply.null();
    return;
  }
  ctx.reply.bulk(list->at(static_cast<size_t>(index)));
}

void cmd_lset(CommandContext& ctx) {
  auto list = write_or_reply<ListObject>(ctx, ctx.argv[1], false);
  if (!list) return;
  auto& o = *list;
  if (!o) {
    ctx.reply.error(err::kNoSuchKey);
    return;
  }
  int64_t index = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], index)) return;
  const int64_t len = static_cast<int64_t>(o->size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) {
    ctx.reply.error(kListIndexOutOfRange);
    return;
  }
  o->set(static_cast<size_t>(index), ctx.argv[3]);
  ctx.key_modified(ctx.argv[1]);
  ctx.reply.ok();
}

void cmd_linsert(CommandContext& ctx) {
  bool after = false;
  if (equals_ignore_case(ctx.argv[2], "after")) {
    after = true;
  } else if (!equals_ignore_case(ctx.argv[2], "before")) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  auto list = write_or_reply<ListObject>(ctx, ctx.argv[1], false);
  if (!list) return;
  auto& o = *list;
  if (!o) {
    ctx.reply.integer(0);
    return;
  }
  const std::string_view pivot = ctx.argv[3];
  std::optional<size_t> found;
  size_t index = 0;
  o->walk(0, false, [&](std::string_view v) {
    if (v == pivot) {
      found = index;
      return false;
    }
    ++index;
    return true;
  });
  if (!found) {
    ctx.reply.integer(-1);
    return;
  }
  o->insert(*found + (after ? 1 : 0), ctx.argv[4]);
  ctx.key_modified(ctx.argv[1]);
  ctx.reply.integer(static_cast<int64_t>(o->size()));
}

void cmd_lrem(CommandContext& ctx) {
  int64_t count = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], count)) return;
  auto list = write_or_reply<ListObject>(ctx, ctx.argv[1], false);
  if (!list) return;
  auto& o = *list;
  if (!o) {
    ctx.reply.integer(0);
    return;
  }
  const std::string_view value = ctx.argv[3];
  if (count >= 0) {
    const size_t removed = o->remove_matches(0, value, static_cast<size_t>(count));
    if (removed > 0) ctx.key_modified(ctx.argv[1]);
    ctx.reply.integer(static_cast<int64_t>(removed));
    return;
  }
  // From the tail: find where the |count|-th match from the end is, then remove every match from
  // there on (exactly those).
  const uint64_t wanted = 0 - static_cast<uint64_t>(count);
  uint64_t matches = 0;
  std::optional<size_t> from;
  size_t index = o->size();
  o->walk(o->size() - 1, true, [&](std::string_view v) {
    --index;
    if (v == value) {
      from = index;
      if (++matches == wanted) return false;
    }
    return true;
  });
  const size_t removed = from ? o->remove_matches(*from, value, 0) : 0;
  if (removed > 0) ctx.key_modified(ctx.argv[1]);
  ctx.reply.integer(static_cast<int64_t>(removed));
}

void cmd_ltrim(CommandContext& ctx) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], start) || !int64_or_reply(ctx, ctx.argv[3], stop)) return;
  auto list = write_or_reply<ListObject>(ctx, ctx.argv[1], false);
  if (!list) return;
  auto& o = *list;
  if (o) {
    const int64_t len = static_cast<int64_t>(o->size());
    if (start < 0) start += len;
    if (stop < 0) stop += len;
    if (start < 0) start = 0;
    if (start > stop || start >= len) {
      o->erase(0, o->size());
    } else {
      if (stop >= len) stop = len - 1;
      o->erase(static_cast<size_t>(stop + 1), static_cast<size_t>(len - stop - 1));
      o->erase(0, static_cast<size_t>(start));
    }
    // Redis reports an existing list as changed even when nothing was trimmed.
    ctx.key_modified(ctx.argv[1]);
  }
  ctx.reply.ok();
}

void cmd_lpos(CommandContext& ctx) {
  int64_t rank = 1;
  int64_t count = -1;  // -1: no COUNT option
  int64_t maxlen = 0;
  const size_t argc = ctx.argv.size();
  for (size_t j = 3; j < argc; ++j) {
    const std::string_view opt = ctx.argv[j];
    const bool more = j + 1 < argc;
    if (equals_ignore_case(opt, "rank") && more) {
      if (!int64_or_reply(ctx, ctx.argv[++j], rank)) return;
      if (rank == 0) {
        ctx.reply.error(kRankZero);
        return;
      }
    } else if (equals_ignore_case(opt, "count") && more) {
      if (!non_negative_or_reply(ctx, ctx.argv[++j], count, kCountNegative)) return;
    } else if (equals_ignore_case(opt, "maxlen") && more) {
      if (!non_negative_or_reply(ctx, ctx.argv[++j], maxlen, kMaxlenNegative)) return;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  // A negative rank searches from the tail. Redis negates it in a long, so RANK
  // -9223372036854775808 stays negative and then matches from the first match on.
  bool from_tail = false;
  if (rank < 0) {
    rank = static_cast<int64_t>(0 - static_cast<uint64_t>(rank));
    from_tail = true;
  }
  const ListObject* list = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], list)) return;
  if (list == nullptr) {
    if (count != -1) {
      ctx.reply.array(0);
    } else {
      ctx.reply.null();
    }
    return;
  }
  const int64_t len = static_cast<int64_t>(list->size());
  std::vector<int64_t> found;
  int64_t index = 0;
  int64_t matches = 0;
  const std::string_view element = ctx.argv[2];
  list->walk(from_tail ? list->size() - 1 : 0, from_tail, [&](std::string_view v) {
    if (maxlen != 0 && index >= maxlen) return false;
    if (v == element) {
      ++matches;
      if (matches >= rank) {
        found.push_back(from_tail ? len - index - 1 : index);
        // matches - rank + 1 wraps like Redis's long arithmetic for the extreme rank.
        const int64_t taken =
            static_cast<int64_t>(static_cast<uint64_t>(matches) - static_cast<uint64_t>(rank) + 1);
        if (count == -1 || (count != 0 && taken >= count)) return false;
      }
    }
    ++index;
    return true;
  });
  if (count == -1) {
    if (found.empty()) {
      ctx.reply.null();
    } else {
      ctx.reply.integer(found.front());
    }
    return;
  }
  ctx.reply.array(found.size());
  for (int64_t i : found) ctx.reply.integer(i);
}

void cmd_lmove(CommandContext& ctx) {
  End from = End::kHead;
  End to = End::kHead;
  if (!end_or_reply(ctx, ctx.argv[3], from) || !end_or_reply(ctx, ctx.argv[4], to)) return;
  move_generic(ctx, from, to);
}

void cmd_rpoplpush(CommandContext& ctx) { move_generic(ctx, End::kTail, End::kHead); }

void cmd_lmpop(CommandContext& ctx) {
  std::span<const std::string_view> keys;
  End end = End::kHead;
  int64_t count = 0;
  if (!mpop_args_or_reply(ctx, 1, keys, end, count)) return;
  if (!pop_first_or_reply(ctx, keys, end, count)) ctx.reply.null_array();
}

void cmd_blpop(CommandContext& ctx) { blocking_pop(ctx, End::kHead); }

void cmd_brpop(CommandContext& ctx) { blocking_pop(ctx, End::kTail); }

void cmd_blmove(CommandContext& ctx) {
  End from = End::kHead;
  End to = End::kHead;
  if (!end_or_reply(ctx, ctx.argv[3], from) || !end_or_reply(ctx, ctx.argv[4], to)) return;
  blocking_move(ctx, from, to, ctx.argv[5]);
}

void cmd_brpoplpush(CommandContext& ctx) {
  blocking_move(ctx, End::kTail, End::kHead, ctx.argv[3]);
}

void cmd_blmpop(CommandContext& ctx) {
  std::span<const std::string_view> keys;
  End end = End::kHead;
  int64_t count = 0;
  if (!mpop_args_or_reply(ctx, 2, keys, end, count)) return;
  int64_t timeout_ms = 0;
  if (!block_timeout_or_reply(ctx, ctx.argv[1], timeout_ms)) return;
  if (!pop_first_or_reply(ctx, keys, end, count)) block_or_timeout(ctx, keys, timeout_ms);
}

}  // namespace ringkv::engine
