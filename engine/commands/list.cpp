// List command handlers, blocking ones included: parse arguments in Redis 7.0.15's order (so the
// first error reported is the one Redis reports), call the operations of list_type.h and write
// the reply. Every push reports its key as ready for clients blocked on it.
#include "engine/commands/list.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/blocking.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/list_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;
using End = ListObject::End;

namespace {

constexpr std::string_view kRankZero =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list";
constexpr std::string_view kCountNegative = "ERR COUNT can't be negative";
constexpr std::string_view kMaxlenNegative = "ERR MAXLEN can't be negative";

// A non-negative integer; one error text for both failures (`msg`, or "must be positive"), as
// getPositiveLongFromObjectOrReply.
bool non_negative_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out,
                           std::string_view msg) {
  if (!parse_int64(arg, out)) {
    ctx.reply.error(msg.empty() ? err::kMustBePositive : msg);
    return false;
  }
  if (out < 0) {
    ctx.reply.error(msg.empty() ? err::kMustBePositive : msg);
    return false;
  }
  return true;
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
    ctx.notify(common::kNotifyList, end == End::kHead ? "lpush" : "rpush", ctx.argv[1]);
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
  if (!values->empty()) {
    ctx.key_modified(ctx.argv[1]);
    notify_popped(ctx, ctx.argv[1], end);
  }
  if (!has_count) {
    ctx.reply.bulk(values->front());
    return;
  }
  ctx.reply.array(values->size());
  for (const std::string& v : *values) ctx.reply.bulk(v);
}

}  // namespace

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

void notify_popped(CommandContext& ctx, std::string_view key, End end) {
  ctx.notify(common::kNotifyList, end == End::kHead ? "lpop" : "rpop", key);
  if (ctx.store.peek(key) == nullptr) ctx.notify(common::kNotifyGeneric, "del", key);
}

// An element was removed from `key` by `event` (LREM, LTRIM): that event, and del when it emptied
// the list.
static void notify_removed(CommandContext& ctx, std::string_view key, std::string_view event) {
  ctx.notify(common::kNotifyList, event, key);
  if (ctx.store.peek(key) == nullptr) ctx.notify(common::kNotifyGeneric, "del", key);
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
  // Redis's order: the push onto the destination, then the pop from the source.
  ctx.notify(common::kNotifyList, to == End::kHead ? "lpush" : "rpush", ctx.argv[2]);
  notify_popped(ctx, ctx.argv[1], from);
  ctx.reply.bulk(**moved);
  return true;
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
  const Result<bool> set = list_set(ctx.store, ctx.argv[1], ctx.argv[2], ctx.argv[3]);
  if (!set) {
    ctx.reply.error(set.error());
    return;
  }
  ctx.key_modified(ctx.argv[1]);
  ctx.notify(common::kNotifyList, "lset", ctx.argv[1]);
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
  const Result<int64_t> len = list_insert(ctx.store, ctx.argv[1], after, ctx.argv[3], ctx.argv[4]);
  if (!len) {
    ctx.reply.error(len.error());
    return;
  }
  if (*len > 0) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyList, "linsert", ctx.argv[1]);
  }
  ctx.reply.integer(*len);
}

void cmd_lrem(CommandContext& ctx) {
  int64_t count = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], count)) return;
  const Result<int64_t> removed = list_remove(ctx.store, ctx.argv[1], count, ctx.argv[3]);
  if (!removed) {
    ctx.reply.error(removed.error());
    return;
  }
  if (*removed > 0) {
    ctx.key_modified(ctx.argv[1]);
    notify_removed(ctx, ctx.argv[1], "lrem");
  }
  ctx.reply.integer(*removed);
}

void cmd_ltrim(CommandContext& ctx) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], start) || !int64_or_reply(ctx, ctx.argv[3], stop)) return;
  const Result<bool> existed = list_trim(ctx.store, ctx.argv[1], start, stop);
  if (!existed) {
    ctx.reply.error(existed.error());
    return;
  }
  // Redis reports an existing list as changed even when nothing was trimmed.
  if (*existed) {
    ctx.key_modified(ctx.argv[1]);
    notify_removed(ctx, ctx.argv[1], "ltrim");
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

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kListCommands[] = {
    {.name = "lpush",
     .arity = -3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_lpush,
     .group = "list",
     .since = "1.0.0",
     .summary = "Prepend one or multiple elements to a list",
     .complexity = "O(1) for each element added, so O(N) to add N elements when the command is "
                   "called with multiple arguments.",
     .syntax = "key<key> element...",
     .acl_categories = "write list fast",
     .key_specs = "RW insert|1|0|1|0",
     .history = "2.4.0|Accepts multiple `element` arguments."},
    {.name = "rpush",
     .arity = -3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_rpush,
     .group = "list",
     .since = "1.0.0",
     .summary = "Append one or multiple elements to a list",
     .complexity = "O(1) for each element added, so O(N) to add N elements when the command is "
                   "called with multiple arguments.",
     .syntax = "key<key> element...",
     .acl_categories = "write list fast",
     .key_specs = "RW insert|1|0|1|0",
     .history = "2.4.0|Accepts multiple `element` arguments."},
    {.name = "lpushx",
     .arity = -3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_lpushx,
     .group = "list",
     .since = "2.2.0",
     .summary = "Prepend an element to a list, only if the list exists",
     .complexity = "O(1) for each element added, so O(N) to add N elements when the command is "
                   "called with multiple arguments.",
     .syntax = "key<key> element...",
     .acl_categories = "write list fast",
     .key_specs = "RW insert|1|0|1|0",
     .history = "4.0.0|Accepts multiple `element` arguments."},
    {.name = "rpushx",
     .arity = -3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_rpushx,
     .group = "list",
     .since = "2.2.0",
     .summary = "Append an element to a list, only if the list exists",
     .complexity = "O(1) for each element added, so O(N) to add N elements when the command is "
                   "called with multiple arguments.",
     .syntax = "key<key> element...",
     .acl_categories = "write list fast",
     .key_specs = "RW insert|1|0|1|0",
     .history = "4.0.0|Accepts multiple `element` arguments."},
    {.name = "lpop",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = cmd_lpop,
     .group = "list",
     .since = "1.0.0",
     .summary = "Remove and get the first elements in a list",
     .complexity = "O(N) where N is the number of elements returned",
     .syntax = "key<key> [count<integer>]@6.2.0",
     .acl_categories = "write list fast",
     .key_specs = "RW access delete|1|0|1|0",
     .history = "6.2.0|Added the `count` argument."},
    {.name = "rpop",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = cmd_rpop,
     .group = "list",
     .since = "1.0.0",
     .summary = "Remove and get the last elements in a list",
     .complexity = "O(N) where N is the number of elements returned",
     .syntax = "key<key> [count<integer>]@6.2.0",
     .acl_categories = "write list fast",
     .key_specs = "RW access delete|1|0|1|0",
     .history = "6.2.0|Added the `count` argument."},
    {.name = "llen",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_llen,
     .group = "list",
     .since = "1.0.0",
     .summary = "Get the length of a list",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read list fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "lrange",
     .arity = 4,
     .flags = kReadonly,
     .handler = cmd_lrange,
     .group = "list",
     .since = "1.0.0",
     .summary = "Get a range of elements from a list",
     .complexity = "O(S+N) where S is the distance of start offset from HEAD for small lists, from "
                   "nearest end (HEAD or TAIL) for large lists; and N is the number of elements in "
                   "the specified range.",
     .syntax = "key<key> start<integer> stop<integer>",
     .acl_categories = "read list slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "lindex",
     .arity = 3,
     .flags = kReadonly,
     .handler = cmd_lindex,
     .group = "list",
     .since = "1.0.0",
     .summary = "Get an element from a list by its index",
     .complexity = "O(N) where N is the number of elements to traverse to get to the element at "
                   "index. This makes asking for the first or the last element of the list O(1).",
     .syntax = "key<key> index<integer>",
     .acl_categories = "read list slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "lset",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_lset,
     .group = "list",
     .since = "1.0.0",
     .summary = "Set the value of an element in a list by its index",
     .complexity = "O(N) where N is the length of the list. Setting either the first or the last "
                   "element of the list is O(1).",
     .syntax = "key<key> index<integer> element",
     .acl_categories = "write list slow",
     .key_specs = "RW update|1|0|1|0"},
    {.name = "linsert",
     .arity = 5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_linsert,
     .group = "list",
     .since = "2.2.0",
     .summary = "Insert an element before or after another element in a list",
     .complexity =
         "O(N) where N is the number of elements to traverse before seeing the value pivot. This "
         "means that inserting somewhere on the left end on the list (head) can be considered O(1) "
         "and inserting somewhere on the right end (tail) is O(N).",
     .syntax = "key<key> (where: BEFORE | AFTER) pivot element",
     .acl_categories = "write list slow",
     .key_specs = "RW insert|1|0|1|0"},
    {.name = "lrem",
     .arity = 4,
     .flags = kWrite,
     .handler = cmd_lrem,
     .group = "list",
     .since = "1.0.0",
     .summary = "Remove elements from a list",
     .complexity =
         "O(N+M) where N is the length of the list and M is the number of elements removed.",
     .syntax = "key<key> count<integer> element",
     .acl_categories = "write list slow",
     .key_specs = "RW delete|1|0|1|0"},
    {.name = "ltrim",
     .arity = 4,
     .flags = kWrite,
     .handler = cmd_ltrim,
     .group = "list",
     .since = "1.0.0",
     .summary = "Trim a list to the specified range",
     .complexity = "O(N) where N is the number of elements to be removed by the operation.",
     .syntax = "key<key> start<integer> stop<integer>",
     .acl_categories = "write list slow",
     .key_specs = "RW delete|1|0|1|0"},
    {.name = "lpos",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_lpos,
     .group = "list",
     .since = "6.0.6",
     .summary = "Return the index of matching elements on a list",
     .complexity = "O(N) where N is the number of elements in the list, for the average case. When "
                   "searching for elements near the head or the tail of the list, or when the "
                   "MAXLEN option is provided, the command may run in constant time.",
     .syntax =
         "key<key> element [RANK=rank<integer>] [COUNT=num-matches<integer>] [MAXLEN=len<integer>]",
     .acl_categories = "read list slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "lmove",
     .arity = 5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_lmove,
     .group = "list",
     .since = "6.2.0",
     .summary = "Pop an element from a list, push it to another list and return it",
     .complexity = "O(1)",
     .syntax = "source<key> destination<key:1> (wherefrom: LEFT | RIGHT) (whereto: LEFT | RIGHT)",
     .acl_categories = "write list slow",
     .key_specs = "RW access delete|1|0|1|0;RW insert|2|0|1|0"},
    {.name = "rpoplpush",
     .arity = 3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_rpoplpush,
     .group = "list",
     .since = "1.2.0",
     .summary = "Remove the last element in a list, prepend it to another list and return it",
     .complexity = "O(1)",
     .syntax = "source<key> destination<key:1>",
     .acl_categories = "write list slow",
     .key_specs = "RW access delete|1|0|1|0;RW insert|2|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`LMOVE` with the `RIGHT` and `LEFT` arguments"},
};

}  // namespace

std::span<const CommandSpec> list_commands() { return kListCommands; }

}  // namespace ringkv::engine
