// List pops over several keys and the blocking list commands: LMPOP, BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH and BLMPOP. Arguments are parsed in Redis 7.0.15's order, so the first error
// reported is the one Redis reports.
#include "engine/commands/list_pop.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/blocking.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/list.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/list_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;
using End = ListObject::End;

namespace {

constexpr std::string_view kNumkeys = "ERR numkeys should be greater than 0";

// An integer of at least 1 (numkeys, LMPOP's COUNT), with one error text for every failure.
bool positive_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out,
                       std::string_view msg) {
  if (parse_int64(arg, out) && out >= 1) return true;
  ctx.reply.error(msg);
  return false;
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
    notify_popped(ctx, key, end);
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
      if (!positive_or_reply(ctx, ctx.argv[++j], count, err::kCountGreaterThanZero)) return false;
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  if (count == 0) count = 1;
  keys = ctx.argv.subspan(numkeys_at + 1, static_cast<size_t>(numkeys));
  return true;
}

// BLMOVE and BRPOPLPUSH once their arguments are parsed: move now, or wait for the source.
void blocking_move(CommandContext& ctx, End from, End to, std::string_view timeout_arg) {
  int64_t timeout_ms = 0;
  if (!block_timeout_or_reply(ctx, timeout_arg, timeout_ms)) return;
  // Redis looks the source up as a write (no keymiss event).
  auto source = peek_object<ListObject>(ctx.store, ctx.argv[1]);
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

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kListPopCommands[] = {
    {.name = "lmpop",
     .arity = -4,
     .flags = kWrite,
     .handler = cmd_lmpop,
     .group = "list",
     .since = "7.0.0",
     .summary = "Pop elements from a list",
     .complexity =
         "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
     .syntax = "numkeys<integer> key<key>... (where: LEFT | RIGHT) [COUNT=count<integer>]",
     .acl_categories = "write list slow",
     .key_specs = "RW access delete|1|keynum|0,1,1",
     .find_keys = lmpop_keys},
    {.name = "blpop",
     .arity = -3,
     .flags = kWrite | kNoscript | kBlocking,
     .handler = cmd_blpop,
     .group = "list",
     .since = "2.0.0",
     .summary = "Remove and get the first element in a list, or block until one is available",
     .complexity = "O(N) where N is the number of provided keys.",
     .syntax = "key<key>... timeout<double>",
     .acl_categories = "write list slow blocking",
     .key_specs = "RW access delete|1|-2|1|0",
     .history = "6.0.0|`timeout` is interpreted as a double instead of an integer."},
    {.name = "brpop",
     .arity = -3,
     .flags = kWrite | kNoscript | kBlocking,
     .handler = cmd_brpop,
     .group = "list",
     .since = "2.0.0",
     .summary = "Remove and get the last element in a list, or block until one is available",
     .complexity = "O(N) where N is the number of provided keys.",
     .syntax = "key<key>... timeout<double>",
     .acl_categories = "write list slow blocking",
     .key_specs = "RW access delete|1|-2|1|0",
     .history = "6.0.0|`timeout` is interpreted as a double instead of an integer."},
    {.name = "blmove",
     .arity = 6,
     .flags = kWrite | kDenyOom | kNoscript | kBlocking,
     .handler = cmd_blmove,
     .group = "list",
     .since = "6.2.0",
     .summary = "Pop an element from a list, push it to another list and return it; or block until "
                "one is available",
     .complexity = "O(1)",
     .syntax = "source<key> destination<key:1> (wherefrom: LEFT | RIGHT) (whereto: LEFT | RIGHT) "
               "timeout<double>",
     .acl_categories = "write list slow blocking",
     .key_specs = "RW access delete|1|0|1|0;RW insert|2|0|1|0"},
    {.name = "brpoplpush",
     .arity = 4,
     .flags = kWrite | kDenyOom | kNoscript | kBlocking,
     .handler = cmd_brpoplpush,
     .group = "list",
     .since = "2.2.0",
     .summary = "Pop an element from a list, push it to another list and return it; or block until "
                "one is available",
     .complexity = "O(1)",
     .syntax = "source<key> destination<key:1> timeout<double>",
     .acl_categories = "write list slow blocking",
     .key_specs = "RW access delete|1|0|1|0;RW insert|2|0|1|0",
     .history = "6.0.0|`timeout` is interpreted as a double instead of an integer.",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`BLMOVE` with the `RIGHT` and `LEFT` arguments"},
    {.name = "blmpop",
     .arity = -5,
     .flags = kWrite | kBlocking,
     .handler = cmd_blmpop,
     .group = "list",
     .since = "7.0.0",
     .summary = "Pop elements from a list, or block until one is available",
     .complexity =
         "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
     .syntax = "timeout<double> numkeys<integer> key<key>... (where: LEFT | RIGHT) "
               "[COUNT=count<integer>]",
     .acl_categories = "write list slow blocking",
     .key_specs = "RW access delete|2|keynum|0,1,1",
     .find_keys = blmpop_keys},
};

}  // namespace

std::span<const CommandSpec> list_pop_commands() { return kListPopCommands; }

}  // namespace ringkv::engine
