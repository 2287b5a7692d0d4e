// Key command handlers: DEL/UNLINK, EXISTS, TOUCH, TYPE, the EXPIRE and TTL families, PERSIST,
// RENAME(NX) and COPY (commands over the whole keyspace are in keyspace.cpp). Argument checks,
// their order and every reply follow Redis 7.0.15 (db.c, expire.c).
#include "engine/commands/keys.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/glob.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/lazy_free.h"
#include "engine/keyspace/store.h"
#include "engine/types/object.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

namespace err = protocol::err;

constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
constexpr std::string_view kNxWithOthers =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
constexpr std::string_view kGtWithLt = "ERR GT and LT options at the same time are not compatible";
constexpr std::string_view kUnsupportedOption = "ERR Unsupported option ";

// EXPIRE's NX/XX/GT/LT options.
struct ExpireFlags {
  bool nx = false;
  bool xx = false;
  bool gt = false;
  bool lt = false;
};

// Parses the options after EXPIRE's key and time (parseExtendedExpireArgumentsOrReply). Every
// word is checked before the combinations, so an unknown option wins over a conflict. Returns
// false with Redis's error text in `error`.
bool parse_expire_flags(std::span<const std::string_view> args, ExpireFlags& flags,
                        std::string& error) {
  for (std::string_view opt : args) {
    if (equals_ignore_case(opt, "nx")) {
      flags.nx = true;
    } else if (equals_ignore_case(opt, "xx")) {
      flags.xx = true;
    } else if (equals_ignore_case(opt, "gt")) {
      flags.gt = true;
    } else if (equals_ignore_case(opt, "lt")) {
      flags.lt = true;
    } else {
      // Redis formats option names into errors with %s: a NUL byte ends the text there.
      error = std::string(kUnsupportedOption).append(common::c_string(opt));
      return false;
    }
  }
  if (flags.nx && (flags.xx || flags.gt || flags.lt)) {
    error = kNxWithOthers;
    return false;
  }
  if (flags.gt && flags.lt) {
    error = kGtWithLt;
    return false;
  }
  return true;
}

// Whether the options allow replacing `current` (unix ms, -1 = no TTL) with `when`. A key without
// a TTL counts as an infinite one: GT never passes, LT always does.
bool expire_allowed(const ExpireFlags& flags, int64_t current, int64_t when) {
  if (flags.nx && current != -1) return false;
  if (flags.xx && current == -1) return false;
  if (flags.gt && (current == -1 || when <= current)) return false;
  if (flags.lt && current != -1 && when >= current) return false;
  return true;
}

std::string invalid_expire_time(std::string_view command) {
  std::string text(err::kInvalidExpireTime);
  text.replace(text.find("%s"), 2, to_lower(command));
  return text;
}

// TTL, PTTL, EXPIRETIME and PEXPIRETIME differ only in relative/absolute and the unit.
void reply_ttl(CommandContext& ctx, bool in_ms, bool absolute) {
  const Entry* e = ctx.store.lookup_notouch(ctx.argv[1]);
  if (e == nullptr) {
    ctx.reply.integer(-2);
    return;
  }
  const int64_t expire = e->expire_at();
  if (expire == -1) {
    ctx.reply.integer(-1);
    return;
  }
  int64_t ttl = absolute ? expire : expire - ctx.store.now();
  if (ttl < 0) ttl = 0;
  ctx.reply.integer(in_ms ? ttl : (ttl + 500) / 1000);
}

}  // namespace

void cmd_del(CommandContext& ctx) {
  // UNLINK frees big values in the background; DEL too under lazyfree-lazy-user-del.
  const bool lazy =
      ctx.spec == nullptr || ctx.spec->name == "unlink" || lazy_free_settings().user_del;
  int64_t deleted = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    if (ctx.store.erase(ctx.argv[i], lazy)) {
      ++deleted;
      ctx.key_modified(ctx.argv[i]);
      ctx.notify(common::kNotifyGeneric, "del", ctx.argv[i]);
    }
  }
  ctx.reply.integer(deleted);
}

void cmd_exists(CommandContext& ctx) {
  int64_t count = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    if (ctx.store.lookup_notouch(ctx.argv[i]) != nullptr) ++count;
  }
  ctx.reply.integer(count);
}

void cmd_touch(CommandContext& ctx) {
  int64_t touched = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    if (ctx.store.lookup(ctx.argv[i]) != nullptr) ++touched;
  }
  ctx.reply.integer(touched);
}

void cmd_type(CommandContext& ctx) {
  const Entry* e = ctx.store.lookup_notouch(ctx.argv[1]);
  ctx.reply.simple(e == nullptr ? std::string_view("none") : type_name(e->type()));
}

void cmd_expire(CommandContext& ctx) {
  const std::string command = to_lower(ctx.argv[0]);
  const bool in_seconds = command == "expire" || command == "expireat";
  const bool relative = command == "expire" || command == "pexpire";
  const std::string_view key = ctx.argv[1];

  ExpireFlags flags;
  std::string option_error;
  if (!parse_expire_flags(ctx.argv.subspan(3), flags, option_error)) {
    ctx.reply.error(option_error);
    return;
  }
  int64_t when = 0;
  if (!parse_int64(ctx.argv[2], when)) {
    ctx.reply.error(err::kNotInteger);
    return;
  }
  // Negative times are allowed (they delete the key); only overflow is an error.
  if (in_seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) {
      ctx.reply.error(invalid_expire_time(command));
      return;
    }
    when *= 1000;
  }
  const int64_t base = relative ? ctx.store.now() : 0;
  if (when > INT64_MAX - base) {
    ctx.reply.error(invalid_expire_time(command));
    return;
  }
  when += base;

  const Entry* e = ctx.store.peek(key);
  if (e == nullptr || !expire_allowed(flags, e->expire_at(), when)) {
    ctx.reply.integer(0);
    return;
  }
  // Logged with the absolute time whichever form ran, or as the DEL it amounted to.
  const bool deleted = ctx.store.already_expired(when);
  if (deleted) {
    ctx.store.erase(key);
    ctx.propagate_as({"DEL", key});
  } else {
    ctx.store.set_expire(key, when);
    ctx.propagate_as({"PEXPIREAT", key, std::to_string(when)});
  }
  ctx.key_modified(key);
  ctx.notify(common::kNotifyGeneric, deleted ? "del" : "expire", key);
  ctx.reply.integer(1);
}

void cmd_ttl(CommandContext& ctx) {
  reply_ttl(ctx, equals_ignore_case(ctx.argv[0], "pttl"), false);
}

void cmd_expiretime(CommandContext& ctx) {
  reply_ttl(ctx, equals_ignore_case(ctx.argv[0], "pexpiretime"), true);
}

void cmd_persist(CommandContext& ctx) {
  const bool removed = ctx.store.persist(ctx.argv[1]);
  if (removed) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyGeneric, "persist", ctx.argv[1]);
  }
  ctx.reply.integer(removed ? 1 : 0);
}

namespace {

// A list, sorted set or stream that arrives at `key` (RENAME, COPY) may serve clients blocked on
// it, as Redis's dbAdd signals for those types.
void report_if_blockable(CommandContext& ctx, std::string_view key) {
  const Entry* e = ctx.store.peek(key);
  if (e != nullptr && (e->type() == ValueType::kList || e->type() == ValueType::kZSet ||
                       e->type() == ValueType::kStream)) {
    ctx.key_ready(key);
  }
}

// RENAME and RENAMENX (`nx`), as Redis's renameGenericCommand: the events of the destination's
// "new" first (the store), then rename_from and rename_to.
void rename_generic(CommandContext& ctx, bool nx) {
  const std::string_view from = ctx.argv[1];
  const std::string_view to = ctx.argv[2];
  if (ctx.store.peek(from) == nullptr) {
    ctx.reply.error(err::kNoSuchKey);
    return;
  }
  // Renaming a key onto itself keeps it, TTL included.
  if (from == to || (nx && ctx.store.peek(to) != nullptr)) {
    if (nx) {
      ctx.reply.integer(0);
    } else {
      ctx.reply.ok();
    }
    return;
  }
  ctx.store.rename(from, to);
  report_if_blockable(ctx, to);
  ctx.key_modified(from);
  ctx.key_modified(to);
  ctx.notify(common::kNotifyGeneric, "rename_from", from);
  ctx.notify(common::kNotifyGeneric, "rename_to", to);
  if (nx) {
    ctx.reply.integer(1);
  } else {
    ctx.reply.ok();
  }
}

}  // namespace

void cmd_rename(CommandContext& ctx) { rename_generic(ctx, false); }

void cmd_renamenx(CommandContext& ctx) { rename_generic(ctx, true); }

void cmd_copy(CommandContext& ctx) {
  const std::string_view from = ctx.argv[1];
  const std::string_view to = ctx.argv[2];
  bool replace = false;
  Store* dst = &ctx.store;
  int dst_db = ctx.db;
  // Options are checked in order, so a bad DB index is reported before a later syntax error.
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    const bool has_value = i + 1 < ctx.argv.size();
    if (equals_ignore_case(ctx.argv[i], "replace")) {
      replace = true;
    } else if (equals_ignore_case(ctx.argv[i], "db") && has_value) {
      if (!int_or_reply(ctx, ctx.argv[i + 1], dst_db)) return;
      dst = database_or_reply(ctx, dst_db);
      if (dst == nullptr) return;
      ++i;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  if (dst == &ctx.store && from == to) {
    ctx.reply.error(kSameObject);
    return;
  }
  if (ctx.store.lookup(from) == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  const bool copied = ctx.store.copy_to(*dst, from, to, replace);
  if (copied) ctx.notify_in(dst_db, common::kNotifyGeneric, "copy_to", to);
  if (copied && dst == &ctx.store) {
    report_if_blockable(ctx, to);
    ctx.key_modified(to);
  } else if (copied) {
    ctx.key_written_in(dst_db, to);
  }
  ctx.reply.integer(copied ? 1 : 0);
}

void cmd_move(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  int dst_db = 0;
  if (!int_or_reply(ctx, ctx.argv[2], dst_db)) return;
  Store* dst = database_or_reply(ctx, dst_db);
  if (dst == nullptr) return;
  if (dst == &ctx.store) {
    ctx.reply.error(kSameObject);
    return;
  }
  if (ctx.store.peek(key) == nullptr || !ctx.store.move_to(*dst, key)) {
    ctx.reply.integer(0);
    return;
  }
  ctx.key_modified(key);
  ctx.key_written_in(dst_db, key);
  ctx.notify(common::kNotifyGeneric, "move_from", key);
  ctx.notify_in(dst_db, common::kNotifyGeneric, "move_to", key);
  ctx.reply.integer(1);
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kKeysCommands[] = {
    {.name = "del",
     .arity = -2,
     .flags = kWrite | kSplittable,
     .handler = cmd_del,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Delete a key",
     .complexity = "O(N) where N is the number of keys that will be removed. When a key to remove "
                   "holds a value other than a string, the individual complexity for this key is "
                   "O(M) where M is the number of elements in the list, set, sorted set or hash. "
                   "Removing a single key that holds a string value is O(1).",
     .syntax = "key<key>...",
     .acl_categories = "keyspace write slow",
     .tips = "request_policy:multi_shard response_policy:agg_sum",
     .key_specs = "RM delete|1|-1|1|0"},
    {.name = "unlink",
     .arity = -2,
     .flags = kWrite | kFast | kSplittable,
     .handler = cmd_del,
     .group = "generic",
     .since = "4.0.0",
     .summary = "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but "
                "non blocking.",
     .complexity = "O(1) for each key removed regardless of its size. Then the command does O(N) "
                   "work in a different thread in order to reclaim memory, where N is the number "
                   "of allocations the deleted objects where composed of.",
     .syntax = "key<key>...",
     .acl_categories = "keyspace write fast",
     .tips = "request_policy:multi_shard response_policy:agg_sum",
     .key_specs = "RM delete|1|-1|1|0"},
    {.name = "exists",
     .arity = -2,
     .flags = kReadonly | kFast | kSplittable,
     .handler = cmd_exists,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Determine if a key exists",
     .complexity = "O(N) where N is the number of keys to check.",
     .syntax = "key<key>...",
     .acl_categories = "keyspace read fast",
     .tips = "request_policy:multi_shard response_policy:agg_sum",
     .key_specs = "RO|1|-1|1|0",
     .history = "3.0.3|Accepts multiple `key` arguments."},
    {.name = "touch",
     .arity = -2,
     .flags = kReadonly | kFast | kSplittable,
     .handler = cmd_touch,
     .group = "generic",
     .since = "3.2.1",
     .summary =
         "Alters the last access time of a key(s). Returns the number of existing keys specified.",
     .complexity = "O(N) where N is the number of keys that will be touched.",
     .syntax = "key<key>...",
     .acl_categories = "keyspace read fast",
     .tips = "request_policy:multi_shard response_policy:agg_sum",
     .key_specs = "RO|1|-1|1|0"},
    {.name = "type",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_type,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Determine the type stored at key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "expire",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_expire,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Set a key's time to live in seconds",
     .complexity = "O(1)",
     .syntax = "key<key> seconds<integer> [condition: NX | XX | GT | LT]@7.0.0",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "7.0.0|Added options: `NX`, `XX`, `GT` and `LT`."},
    {.name = "pexpire",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_expire,
     .group = "generic",
     .since = "2.6.0",
     .summary = "Set a key's time to live in milliseconds",
     .complexity = "O(1)",
     .syntax = "key<key> milliseconds<integer> [condition: NX | XX | GT | LT]@7.0.0",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "7.0.0|Added options: `NX`, `XX`, `GT` and `LT`."},
    {.name = "expireat",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_expire,
     .group = "generic",
     .since = "1.2.0",
     .summary = "Set the expiration for a key as a UNIX timestamp",
     .complexity = "O(1)",
     .syntax = "key<key> unix-time-seconds<unix-time> [condition: NX | XX | GT | LT]@7.0.0",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "7.0.0|Added options: `NX`, `XX`, `GT` and `LT`."},
    {.name = "pexpireat",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_expire,
     .group = "generic",
     .since = "2.6.0",
     .summary = "Set the expiration for a key as a UNIX timestamp specified in milliseconds",
     .complexity = "O(1)",
     .syntax = "key<key> unix-time-milliseconds<unix-time> [condition: NX | XX | GT | LT]@7.0.0",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "7.0.0|Added options: `NX`, `XX`, `GT` and `LT`."},
    {.name = "ttl",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_ttl,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Get the time to live for a key in seconds",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read fast",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0",
     .history = "2.8.0|Added the -2 reply."},
    {.name = "pttl",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_ttl,
     .group = "generic",
     .since = "2.6.0",
     .summary = "Get the time to live for a key in milliseconds",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read fast",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0",
     .history = "2.8.0|Added the -2 reply."},
    {.name = "expiretime",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_expiretime,
     .group = "generic",
     .since = "7.0.0",
     .summary = "Get the expiration Unix timestamp for a key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "pexpiretime",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_expiretime,
     .group = "generic",
     .since = "7.0.0",
     .summary = "Get the expiration Unix timestamp for a key in milliseconds",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "persist",
     .arity = 2,
     .flags = kWrite | kFast,
     .handler = cmd_persist,
     .group = "generic",
     .since = "2.2.0",
     .summary = "Remove the expiration from a key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW update|1|0|1|0"},
    {.name = "rename",
     .arity = 3,
     .flags = kWrite,
     .handler = cmd_rename,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Rename a key",
     .complexity = "O(1)",
     .syntax = "key<key> newkey<key:1>",
     .acl_categories = "keyspace write slow",
     .key_specs = "RW access delete|1|0|1|0;OW update|2|0|1|0"},
    {.name = "renamenx",
     .arity = 3,
     .flags = kWrite | kFast,
     .handler = cmd_renamenx,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Rename a key, only if the new key does not exist",
     .complexity = "O(1)",
     .syntax = "key<key> newkey<key:1>",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW access delete|1|0|1|0;OW insert|2|0|1|0",
     .history = "3.2.0|The command no longer returns an error when source and destination names "
                "are the same."},
    {.name = "copy",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_copy,
     .group = "generic",
     .since = "6.2.0",
     .summary = "Copy a key",
     .complexity = "O(N) worst case for collections, where N is the number of nested items. O(1) "
                   "for string values.",
     .syntax = "source<key> destination<key:1> [DB=destination-db<integer>] [REPLACE]",
     .acl_categories = "keyspace write slow",
     .key_specs = "RO access|1|0|1|0;OW update|2|0|1|0"},
    {.name = "move",
     .arity = 3,
     .flags = kWrite | kFast,
     .handler = cmd_move,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Move a key to another database",
     .complexity = "O(1)",
     .syntax = "key<key> db<integer>",
     .acl_categories = "keyspace write fast",
     .key_specs = "RW access update|1|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> keys_commands() { return kKeysCommands; }

}  // namespace ringkv::engine
