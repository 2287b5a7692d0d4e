// Set command handlers: parse arguments in Redis 7.0.15's order (so the first error reported is
// the one Redis reports), call the operations of set_type.h and write the reply. Also the key
// finder of SINTERCARD, whose keys follow a numkeys argument.
#include "engine/commands/set.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/set_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

constexpr std::string_view kNumkeysNotPositive = "ERR numkeys should be greater than 0";
constexpr std::string_view kTooManyNumkeys =
    "ERR Number of keys can't be greater than number of args";

void reply_int_or_error(CommandContext& ctx, const Result<int64_t>& n) {
  if (n) {
    ctx.reply.integer(*n);
  } else {
    ctx.reply.error(n.error());
  }
}

// SUNION, SDIFF (and SINTER through its own path): the result as a RESP3 set.
void reply_combination(CommandContext& ctx, SetOp op) {
  auto result = set_combine(ctx.store, op, ctx.argv.subspan(1));
  if (!result) {
    ctx.reply.error(result.error());
    return;
  }
  const SetObject* set = result.value().get();
  ctx.reply.set(set == nullptr ? 0 : set->size());
  if (set != nullptr) set->for_each([&](std::string_view m) { ctx.reply.bulk(m); });
}

// Reports `key` changed when the write's count says it changed something.
void reply_count_and_report(CommandContext& ctx, std::string_view key, const Result<int64_t>& n) {
  if (n && *n > 0) ctx.key_modified(key);
  reply_int_or_error(ctx, n);
}

// Members left `key` by `event` (SREM, SPOP, SMOVE's source): that event, and del when it emptied
// the set.
void notify_set_removed(CommandContext& ctx, std::string_view key, std::string_view event) {
  ctx.notify(common::kNotifySet, event, key);
  if (ctx.store.peek(key) == nullptr) ctx.notify(common::kNotifyGeneric, "del", key);
}

void store_combination(CommandContext& ctx, SetOp op) {
  // An empty result changes the destination only when it deletes an existing key.
  const bool existed = ctx.store.peek(ctx.argv[1]) != nullptr;
  auto n = set_combine_store(ctx.store, op, ctx.argv[1], ctx.argv.subspan(2));
  if (n && (*n > 0 || existed)) ctx.key_modified(ctx.argv[1]);
  if (n && *n > 0) {
    constexpr std::string_view kEvents[] = {"sinterstore", "sunionstore", "sdiffstore"};
    const size_t which = op == SetOp::kInter ? 0 : (op == SetOp::kUnion ? 1 : 2);
    ctx.notify(common::kNotifySet, kEvents[which], ctx.argv[1]);
  } else if (n && existed) {
    ctx.notify(common::kNotifyGeneric, "del", ctx.argv[1]);
  }
  reply_int_or_error(ctx, n);
}

// SINTERCARD's numkeys as Redis 7.0 reads it: a positive integer no larger than the arguments
// that follow it. Replies the error and returns false otherwise.
bool sintercard_numkeys(CommandContext& ctx, size_t& numkeys) {
  int64_t n = 0;
  if (!parse_int64(ctx.argv[1], n) || n <= 0) {
    ctx.reply.error(kNumkeysNotPositive);
    return false;
  }
  if (static_cast<uint64_t>(n) > ctx.argv.size() - 2) {
    ctx.reply.error(kTooManyNumkeys);
    return false;
  }
  numkeys = static_cast<size_t>(n);
  return true;
}

}  // namespace

void sintercard_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  int64_t n = 0;
  if (argv.size() < 3 || !parse_int64(argv[1], n) || n <= 0 ||
      static_cast<uint64_t>(n) > argv.size() - 2) {
    return;
  }
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) positions.push_back(2 + i);
}

void cmd_sadd(CommandContext& ctx) {
  const Result<int64_t> added = set_add(ctx.store, ctx.argv[1], ctx.argv.subspan(2));
  if (added && *added > 0) ctx.notify(common::kNotifySet, "sadd", ctx.argv[1]);
  reply_count_and_report(ctx, ctx.argv[1], added);
}

void cmd_srem(CommandContext& ctx) {
  const Result<int64_t> removed = set_remove(ctx.store, ctx.argv[1], ctx.argv.subspan(2));
  if (removed && *removed > 0) notify_set_removed(ctx, ctx.argv[1], "srem");
  reply_count_and_report(ctx, ctx.argv[1], removed);
}

void cmd_smembers(CommandContext& ctx) {
  const SetObject* set = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], set)) return;
  ctx.reply.set(set == nullptr ? 0 : set->size());
  if (set != nullptr) set->for_each([&](std::string_view m) { ctx.reply.bulk(m); });
}

void cmd_sismember(CommandContext& ctx) {
  const SetObject* set = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], set)) return;
  ctx.reply.integer(set != nullptr && set->contains(ctx.argv[2]) ? 1 : 0);
}

void cmd_smismember(CommandContext& ctx) {
  const SetObject* set = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], set)) return;
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.integer(set != nullptr && set->contains(ctx.argv[i]) ? 1 : 0);
  }
}

void cmd_scard(CommandContext& ctx) {
  const SetObject* set = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], set)) return;
  ctx.reply.integer(set == nullptr ? 0 : static_cast<int64_t>(set->size()));
}

namespace {

// Members per SREM when SPOP with a count is logged (as Redis batches them).
constexpr size_t kSpopPropagateBatch = 1024;

// SPOP's members were chosen at random: it is logged as the SREMs of the members it took, or as
// a DEL when it took the whole set, as Redis does.
void propagate_spop(CommandContext& ctx, const std::vector<std::string>& popped) {
  if (ctx.propagation == nullptr) return;
  std::string_view key = ctx.argv[1];
  if (ctx.store.peek(key) == nullptr) {
    ctx.propagate_as({"DEL", key});
    return;
  }
  for (size_t i = 0; i < popped.size(); i += kSpopPropagateBatch) {
    const size_t end = std::min(popped.size(), i + kSpopPropagateBatch);
    std::vector<std::string> argv{"SREM", std::string(key)};
    argv.insert(argv.end(), popped.begin() + static_cast<ptrdiff_t>(i),
                popped.begin() + static_cast<ptrdiff_t>(end));
    ctx.propagate_as(std::move(argv));
  }
}

}  // namespace

void cmd_spop(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  if (ctx.argv.size() == 3) {
    int64_t count = 0;
    if (!parse_int64(ctx.argv[2], count) || count < 0) {
      ctx.reply.error(err::kMustBePositive);
      return;
    }
    std::vector<std::string> popped;
    auto n = set_pop(ctx.store, ctx.argv[1], static_cast<uint64_t>(count), common::next_random,
                     [&](std::string_view m) { popped.emplace_back(m); });
    if (!n) {
      ctx.reply.error(n.error());
      return;
    }
    if (!popped.empty()) {
      ctx.key_modified(ctx.argv[1]);
      notify_set_removed(ctx, ctx.argv[1], "spop");
      propagate_spop(ctx, popped);
    }
    ctx.reply.set(popped.size());
    for (const std::string& m : popped) ctx.reply.bulk(m);
    return;
  }
  std::string member;
  bool found = false;
  auto n = set_pop(ctx.store, ctx.argv[1], 1, common::next_random, [&](std::string_view m) {
    member = m;
    found = true;
  });
  if (!n) {
    ctx.reply.error(n.error());
  } else if (found) {
    ctx.key_modified(ctx.argv[1]);
    notify_set_removed(ctx, ctx.argv[1], "spop");
    ctx.propagate_as({"SREM", ctx.argv[1], member});
    ctx.reply.bulk(member);
  } else {
    ctx.reply.null();
  }
}

void cmd_srandmember(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  if (ctx.argv.size() == 2) {
    const SetObject* set = nullptr;
    if (!read_or_reply(ctx, ctx.argv[1], set)) return;
    if (set == nullptr) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(set->random_member(common::next_random));
    }
    return;
  }
  int64_t count = 0;
  if (!random_count_or_reply(ctx, count)) return;
  const SetObject* set = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], set)) return;
  if (set == nullptr || count == 0) {
    ctx.reply.array(0);
    return;
  }
  const uint64_t size = set->size();
  ctx.reply.array(count < 0 ? static_cast<uint64_t>(-count)
                            : std::min<uint64_t>(size, static_cast<uint64_t>(count)));
  set_random_members(*set, count, common::next_random,
                     [&](std::string_view m) { ctx.reply.bulk(m); });
}

void cmd_smove(CommandContext& ctx) {
  // The destination changes only when it did not hold the member yet. Both keys are looked up as
  // writes (no keymiss event), the source first, as Redis does.
  ctx.store.peek(ctx.argv[1]);
  auto dst = peek_object<SetObject>(ctx.store, ctx.argv[2]);
  const bool in_destination = dst && *dst != nullptr && (*dst)->contains(ctx.argv[3]);
  auto moved = set_move(ctx.store, ctx.argv[1], ctx.argv[2], ctx.argv[3],
                        [&] { notify_set_removed(ctx, ctx.argv[1], "srem"); });
  if (moved && *moved && ctx.argv[1] != ctx.argv[2]) {
    ctx.key_modified(ctx.argv[1]);
    if (!in_destination) ctx.key_modified(ctx.argv[2]);
    if (!in_destination) ctx.notify(common::kNotifySet, "sadd", ctx.argv[2]);
  }
  if (moved) {
    ctx.reply.integer(*moved ? 1 : 0);
  } else {
    ctx.reply.error(moved.error());
  }
}

void cmd_sinter(CommandContext& ctx) {
  auto members = set_inter(ctx.store, ctx.argv.subspan(1));
  if (!members) {
    ctx.reply.error(members.error());
    return;
  }
  ctx.reply.set(members.value().size());
  for (const std::string& m : *members) ctx.reply.bulk(m);
}

void cmd_sintercard(CommandContext& ctx) {
  size_t numkeys = 0;
  if (!sintercard_numkeys(ctx, numkeys)) return;
  int64_t limit = 0;
  for (size_t i = 2 + numkeys; i < ctx.argv.size(); i += 2) {
    if (equals_ignore_case(ctx.argv[i], "limit") && i + 1 < ctx.argv.size()) {
      if (!parse_int64(ctx.argv[i + 1], limit) || limit < 0) {
        ctx.reply.error(err::kLimitNegative);
        return;
      }
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  auto members = set_inter(ctx.store, ctx.argv.subspan(2, numkeys), static_cast<size_t>(limit));
  if (members) {
    ctx.reply.integer(static_cast<int64_t>(members.value().size()));
  } else {
    ctx.reply.error(members.error());
  }
}

void cmd_sunion(CommandContext& ctx) { reply_combination(ctx, SetOp::kUnion); }

void cmd_sdiff(CommandContext& ctx) { reply_combination(ctx, SetOp::kDiff); }

void cmd_sinterstore(CommandContext& ctx) { store_combination(ctx, SetOp::kInter); }

void cmd_sunionstore(CommandContext& ctx) { store_combination(ctx, SetOp::kUnion); }

void cmd_sdiffstore(CommandContext& ctx) { store_combination(ctx, SetOp::kDiff); }

void cmd_sscan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!scan_cursor_or_reply(ctx, ctx.argv[2], cursor)) return;
  const SetObject* set = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], set)) return;
  if (set == nullptr) {
    reply_empty_scan(ctx.reply);
    return;
  }
  ScanOptions options;
  if (!scan_options_or_reply(ctx, 3, false, options)) return;
  std::vector<std::string> items;
  const uint64_t next =
      set->scan(cursor, static_cast<size_t>(options.count), [&](std::string_view m) {
        if (options.matches(m)) items.emplace_back(m);
      });
  reply_scan(ctx.reply, next, items);
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kSetCommands[] = {
    {.name = "sadd",
     .arity = -3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_sadd,
     .group = "set",
     .since = "1.0.0",
     .summary = "Add one or more members to a set",
     .complexity = "O(1) for each element added, so O(N) to add N elements when the command is "
                   "called with multiple arguments.",
     .syntax = "key<key> member...",
     .acl_categories = "write set fast",
     .key_specs = "RW insert|1|0|1|0",
     .history = "2.4.0|Accepts multiple `member` arguments."},
    {.name = "srem",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_srem,
     .group = "set",
     .since = "1.0.0",
     .summary = "Remove one or more members from a set",
     .complexity = "O(N) where N is the number of members to be removed.",
     .syntax = "key<key> member...",
     .acl_categories = "write set fast",
     .key_specs = "RW delete|1|0|1|0",
     .history = "2.4.0|Accepts multiple `member` arguments."},
    {.name = "smembers",
     .arity = 2,
     .flags = kReadonly,
     .handler = cmd_smembers,
     .group = "set",
     .since = "1.0.0",
     .summary = "Get all the members in a set",
     .complexity = "O(N) where N is the set cardinality.",
     .syntax = "key<key>",
     .acl_categories = "read set slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "sismember",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_sismember,
     .group = "set",
     .since = "1.0.0",
     .summary = "Determine if a given value is a member of a set",
     .complexity = "O(1)",
     .syntax = "key<key> member",
     .acl_categories = "read set fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "smismember",
     .arity = -3,
     .flags = kReadonly | kFast,
     .handler = cmd_smismember,
     .group = "set",
     .since = "6.2.0",
     .summary = "Returns the membership associated with the given elements for a set",
     .complexity = "O(N) where N is the number of elements being checked for membership",
     .syntax = "key<key> member...",
     .acl_categories = "read set fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "scard",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_scard,
     .group = "set",
     .since = "1.0.0",
     .summary = "Get the number of members in a set",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read set fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "spop",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = cmd_spop,
     .group = "set",
     .since = "1.0.0",
     .summary = "Remove and return one or multiple random members from a set",
     .complexity = "Without the count argument O(1), otherwise O(N) where N is the value of the "
                   "passed count.",
     .syntax = "key<key> [count<integer>]@3.2.0",
     .acl_categories = "write set fast",
     .tips = "nondeterministic_output",
     .key_specs = "RW access delete|1|0|1|0",
     .history = "3.2.0|Added the `count` argument."},
    {.name = "srandmember",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_srandmember,
     .group = "set",
     .since = "1.0.0",
     .summary = "Get one or multiple random members from a set",
     .complexity = "Without the count argument O(1), otherwise O(N) where N is the absolute value "
                   "of the passed count.",
     .syntax = "key<key> [count<integer>]@2.6.0",
     .acl_categories = "read set slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0",
     .history = "2.6.0|Added the optional `count` argument."},
    {.name = "smove",
     .arity = 4,
     .flags = kWrite | kFast,
     .handler = cmd_smove,
     .group = "set",
     .since = "1.0.0",
     .summary = "Move a member from one set to another",
     .complexity = "O(1)",
     .syntax = "source<key> destination<key:1> member",
     .acl_categories = "write set fast",
     .key_specs = "RW access delete|1|0|1|0;RW insert|2|0|1|0"},
    {.name = "sinter",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_sinter,
     .group = "set",
     .since = "1.0.0",
     .summary = "Intersect multiple sets",
     .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the "
                   "number of sets.",
     .syntax = "key<key>...",
     .acl_categories = "read set slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|-1|1|0"},
    {.name = "sintercard",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_sintercard,
     .group = "set",
     .since = "7.0.0",
     .summary = "Intersect multiple sets and return the cardinality of the result",
     .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the "
                   "number of sets.",
     .syntax = "numkeys<integer> key<key>... [LIMIT=limit<integer>]",
     .acl_categories = "read set slow",
     .key_specs = "RO access|1|keynum|0,1,1",
     .find_keys = sintercard_keys},
    {.name = "sunion",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_sunion,
     .group = "set",
     .since = "1.0.0",
     .summary = "Add multiple sets",
     .complexity = "O(N) where N is the total number of elements in all given sets.",
     .syntax = "key<key>...",
     .acl_categories = "read set slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|-1|1|0"},
    {.name = "sdiff",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_sdiff,
     .group = "set",
     .since = "1.0.0",
     .summary = "Subtract multiple sets",
     .complexity = "O(N) where N is the total number of elements in all given sets.",
     .syntax = "key<key>...",
     .acl_categories = "read set slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|-1|1|0"},
    {.name = "sinterstore",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_sinterstore,
     .group = "set",
     .since = "1.0.0",
     .summary = "Intersect multiple sets and store the resulting set in a key",
     .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the "
                   "number of sets.",
     .syntax = "destination<key> key<key:1>...",
     .acl_categories = "write set slow",
     .key_specs = "RW update|1|0|1|0;RO access|2|-1|1|0"},
    {.name = "sunionstore",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_sunionstore,
     .group = "set",
     .since = "1.0.0",
     .summary = "Add multiple sets and store the resulting set in a key",
     .complexity = "O(N) where N is the total number of elements in all given sets.",
     .syntax = "destination<key> key<key:1>...",
     .acl_categories = "write set slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|-1|1|0"},
    {.name = "sdiffstore",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_sdiffstore,
     .group = "set",
     .since = "1.0.0",
     .summary = "Subtract multiple sets and store the resulting set in a key",
     .complexity = "O(N) where N is the total number of elements in all given sets.",
     .syntax = "destination<key> key<key:1>...",
     .acl_categories = "write set slow",
     .key_specs = "OW update|1|0|1|0;RO access|2|-1|1|0"},
    {.name = "sscan",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_sscan,
     .group = "set",
     .since = "2.8.0",
     .summary = "Incrementally iterate Set elements",
     .complexity =
         "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
         "the cursor to return back to 0. N is the number of elements inside the collection..",
     .syntax = "key<key> cursor<integer> [MATCH=pattern<pattern>] [COUNT=count<integer>]",
     .acl_categories = "read set slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> set_commands() { return kSetCommands; }

}  // namespace ringkv::engine
