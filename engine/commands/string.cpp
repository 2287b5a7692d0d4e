// String command handlers: parse arguments in Redis's order (so the first error reported is the
// one Redis reports), call the pure operations of string_ops.h and write the reply.
#include "engine/commands/string.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/key_specs.h"
#include "engine/keyspace/store.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// The command's name as Redis prints it in errors: its table name, lowercase.
std::string command_name(const CommandContext& ctx) {
  std::string name(ctx.argv[0]);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return name;
}

// Writes an error; templates that name the command get it filled in.
void reply_error(CommandContext& ctx, std::string_view text) {
  if (text == err::kInvalidExpireTime || text == err::kWrongArity) {
    std::string filled(text);
    filled.replace(filled.find("%s"), 2, command_name(ctx));
    ctx.reply.error(filled);
    return;
  }
  ctx.reply.error(text);
}

// Bulk reply of an optional string, null when absent.
void reply_optional(CommandContext& ctx, const std::optional<std::string>& value) {
  if (value) {
    ctx.reply.bulk(*value);
  } else {
    ctx.reply.null();
  }
}

// The Expiry a write applies: KEEPTTL keeps it, an expiry option sets it, otherwise none.
// Validates the expiry argument as Redis does before touching the key.
std::optional<Expiry> expiry_or_reply(CommandContext& ctx, const StringSetOptions& options) {
  if (options.keep_ttl) return Expiry::keep();
  if (options.expire == ExpireOption::kNone) return Expiry::none();
  auto at = resolve_expire_ms(options.expire, options.expire_arg, ctx.store.now());
  if (!at) {
    reply_error(ctx, at.error());
    return std::nullopt;
  }
  return Expiry::at(*at);
}

// The effective form of a SET, SETEX or PSETEX that wrote, as Redis 7.0 logs it: a relative or
// absolute expiry becomes SET key value PXAT <unix ms>; otherwise GET (which only shapes the
// reply) is dropped and the other flags kept.
void propagate_set(CommandContext& ctx, std::string_view key, std::string_view value,
                   const StringSetOptions& options, Expiry expiry) {
  if (ctx.propagation == nullptr) return;
  if (expiry.kind == Expiry::kAt) {
    ctx.propagate_as({"SET", key, value, "PXAT", std::to_string(expiry.at_ms)});
  } else if (options.get) {
    std::vector<std::string> argv;
    for (std::string_view arg : ctx.argv) {
      if (argv.size() < 3 || !equals_ignore_case(arg, "get")) argv.emplace_back(arg);
    }
    ctx.propagate_as(std::move(argv));
  }
}

// SET, SETEX and PSETEX share this tail: write, then reply as SET does.
void set_and_reply(CommandContext& ctx, std::string_view key, std::string_view value,
                   const StringSetOptions& options, Expiry expiry) {
  auto outcome = set_value(ctx.store, key, value, options, expiry);
  if (outcome && outcome.value().written) {
    ctx.key_modified(key);
    ctx.notify(common::kNotifyString, "set", key);
    if (expiry.kind == Expiry::kAt) ctx.notify(common::kNotifyGeneric, "expire", key);
    propagate_set(ctx, key, value, options, expiry);
  }
  if (!outcome) {
    ctx.reply.error(outcome.error());
  } else if (options.get) {
    reply_optional(ctx, outcome.value().old_value);
  } else if (outcome.value().written) {
    ctx.reply.ok();
  } else {
    ctx.reply.null();
  }
}

// The effective form of a GETEX that changed its key: PEXPIREAT with the absolute time, DEL when
// that time had passed (the key is gone), PERSIST.
void propagate_getex(CommandContext& ctx, const StringSetOptions& options) {
  std::string_view key = ctx.argv[1];
  if (options.persist) {
    ctx.propagate_as({"PERSIST", key});
    return;
  }
  const Entry* e = ctx.store.peek(key);
  if (e == nullptr) {
    ctx.propagate_as({"DEL", key});
  } else {
    ctx.propagate_as({"PEXPIREAT", key, std::to_string(e->expire_at())});
  }
}

// SETEX / PSETEX: key, expiry, value.
void set_with_expire(CommandContext& ctx, ExpireOption option) {
  auto at = resolve_expire_ms(option, ctx.argv[2], ctx.store.now());
  if (!at) {
    reply_error(ctx, at.error());
    return;
  }
  set_and_reply(ctx, ctx.argv[1], ctx.argv[3], StringSetOptions{}, Expiry::at(*at));
}

void incr_and_reply(CommandContext& ctx, int64_t delta) {
  auto value = incr_by(ctx.store, ctx.argv[1], delta);
  if (value) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "incrby", ctx.argv[1]);
    ctx.reply.integer(*value);
  } else {
    ctx.reply.error(value.error());
  }
}

// MSET / MSETNX: an even number of key/value arguments is checked here, not by the dispatcher.
bool mset_pairs_or_reply(CommandContext& ctx) {
  if (ctx.argv.size() % 2 == 1) return true;
  reply_error(ctx, err::kWrongArity);
  return false;
}

// MSET / MSETNX wrote `key`.
void key_set(const CommandContext& ctx, std::string_view key) {
  ctx.key_modified(key);
  ctx.notify(common::kNotifyString, "set", key);
}

}  // namespace

void cmd_get(CommandContext& ctx) {
  auto e = lookup_string(ctx.store, ctx.argv[1]);
  if (!e) {
    ctx.reply.error(e.error());
  } else if (*e == nullptr) {
    ctx.reply.null();
  } else {
    ctx.reply.bulk((*e)->string_value());
  }
}

void cmd_set(CommandContext& ctx) {
  auto options = parse_string_set_options(ctx.argv.subspan(3), SetOptionsFor::kSet);
  if (!options) {
    ctx.reply.error(options.error());
    return;
  }
  auto expiry = expiry_or_reply(ctx, *options);
  if (!expiry) return;
  set_and_reply(ctx, ctx.argv[1], ctx.argv[2], *options, *expiry);
}

void cmd_setnx(CommandContext& ctx) {
  StringSetOptions options;
  options.nx = true;
  auto outcome = set_value(ctx.store, ctx.argv[1], ctx.argv[2], options, Expiry::none());
  if (outcome.value().written) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "set", ctx.argv[1]);
  }
  ctx.reply.integer(outcome.value().written ? 1 : 0);
}

void cmd_setex(CommandContext& ctx) { set_with_expire(ctx, ExpireOption::kEx); }

void cmd_psetex(CommandContext& ctx) { set_with_expire(ctx, ExpireOption::kPx); }

void cmd_getset(CommandContext& ctx) {
  auto old = get_set(ctx.store, ctx.argv[1], ctx.argv[2]);
  if (old) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "set", ctx.argv[1]);
    reply_optional(ctx, *old);
  } else {
    ctx.reply.error(old.error());
  }
}

void cmd_getdel(CommandContext& ctx) {
  auto old = get_del(ctx.store, ctx.argv[1]);
  if (old) {
    if (*old) {
      ctx.key_modified(ctx.argv[1]);
      ctx.notify(common::kNotifyGeneric, "del", ctx.argv[1]);
    }
    reply_optional(ctx, *old);
  } else {
    ctx.reply.error(old.error());
  }
}

void cmd_getex(CommandContext& ctx) {
  auto options = parse_string_set_options(ctx.argv.subspan(2), SetOptionsFor::kGetex);
  if (!options) {
    ctx.reply.error(options.error());
    return;
  }
  // PERSIST changes the key only when it had a TTL; any expiry option always does.
  const Entry* before = ctx.store.peek(ctx.argv[1]);
  const bool had_ttl = before != nullptr && before->expire_at() != -1;
  auto value = get_ex(ctx.store, ctx.argv[1], *options);
  if (value) {
    if (*value &&
        (options.value().expire != ExpireOption::kNone || (options.value().persist && had_ttl))) {
      ctx.key_modified(ctx.argv[1]);
      const bool gone = ctx.store.peek(ctx.argv[1]) == nullptr;
      ctx.notify(common::kNotifyGeneric,
                 options.value().persist ? "persist" : (gone ? "del" : "expire"), ctx.argv[1]);
      propagate_getex(ctx, options.value());
    }
    reply_optional(ctx, *value);
  } else {
    reply_error(ctx, value.error());
  }
}

void cmd_mget(CommandContext& ctx) {
  ctx.reply.array(ctx.argv.size() - 1);
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    // A key of another type reads as null here, not as an error.
    auto e = lookup_string(ctx.store, ctx.argv[i]);
    if (e && *e != nullptr) {
      ctx.reply.bulk((*e)->string_value());
    } else {
      ctx.reply.null();
    }
  }
}

void cmd_mset(CommandContext& ctx) {
  if (!mset_pairs_or_reply(ctx)) return;
  set_many(ctx.store, ctx.argv.subspan(1), false, [&](std::string_view key) { key_set(ctx, key); });
  ctx.reply.ok();
}

void cmd_msetnx(CommandContext& ctx) {
  if (!mset_pairs_or_reply(ctx)) return;
  const bool written = set_many(ctx.store, ctx.argv.subspan(1), true,
                                [&](std::string_view key) { key_set(ctx, key); });
  ctx.reply.integer(written ? 1 : 0);
}

void cmd_append(CommandContext& ctx) {
  auto length = append(ctx.store, ctx.argv[1], ctx.argv[2], bulk_limit(ctx));
  if (length) {
    // Even an empty suffix counts as a change, as in Redis.
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "append", ctx.argv[1]);
    ctx.reply.integer(static_cast<int64_t>(*length));
  } else {
    ctx.reply.error(length.error());
  }
}

void cmd_strlen(CommandContext& ctx) {
  auto length = str_len(ctx.store, ctx.argv[1]);
  if (length) {
    ctx.reply.integer(static_cast<int64_t>(*length));
  } else {
    ctx.reply.error(length.error());
  }
}

void cmd_incr(CommandContext& ctx) { incr_and_reply(ctx, 1); }

void cmd_decr(CommandContext& ctx) { incr_and_reply(ctx, -1); }

void cmd_incrby(CommandContext& ctx) {
  int64_t delta = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], delta)) return;
  incr_and_reply(ctx, delta);
}

void cmd_decrby(CommandContext& ctx) {
  int64_t delta = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], delta)) return;
  // Negating INT64_MIN is not representable; Redis rejects it before looking at the key.
  if (delta == std::numeric_limits<int64_t>::min()) {
    ctx.reply.error(err::kDecrementOverflow);
    return;
  }
  incr_and_reply(ctx, -delta);
}

void cmd_incrbyfloat(CommandContext& ctx) {
  auto value = incr_by_float(ctx.store, ctx.argv[1], ctx.argv[2]);
  if (value) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyString, "incrbyfloat", ctx.argv[1]);
    // The stored text, so that replay does not depend on long double arithmetic.
    ctx.propagate_as({"SET", ctx.argv[1], *value, "KEEPTTL"});
    ctx.reply.bulk(*value);
  } else {
    ctx.reply.error(value.error());
  }
}

void cmd_getrange(CommandContext& ctx) {
  int64_t start = 0;
  int64_t end = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], start)) return;
  if (!int64_or_reply(ctx, ctx.argv[3], end)) return;
  auto range = get_range(ctx.store, ctx.argv[1], start, end);
  if (range) {
    ctx.reply.bulk(*range);
  } else {
    ctx.reply.error(range.error());
  }
}

void cmd_setrange(CommandContext& ctx) {
  int64_t offset = 0;
  if (!int64_or_reply(ctx, ctx.argv[2], offset)) return;
  auto length = set_range(ctx.store, ctx.argv[1], offset, ctx.argv[3], bulk_limit(ctx));
  if (length) {
    // An empty value writes nothing (not even a missing key).
    if (!ctx.argv[3].empty()) {
      ctx.key_modified(ctx.argv[1]);
      ctx.notify(common::kNotifyString, "setrange", ctx.argv[1]);
    }
    ctx.reply.integer(static_cast<int64_t>(*length));
  } else {
    ctx.reply.error(length.error());
  }
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

// setGetKeys: the key is overwritten, and read as well only with GET.
void set_key_flags(std::span<const std::string_view> argv, std::vector<KeyReference>& keys) {
  if (argv.size() < 2) return;
  uint16_t flags = kKeyOW | kKeyUpdate;
  for (size_t i = 3; i < argv.size(); ++i) {
    if (equals_ignore_case(argv[i], "get")) flags = kKeyRW | kKeyAccess | kKeyUpdate;
  }
  keys.push_back(KeyReference{1, flags});
}

constexpr CommandSpec kStringCommands[] = {
    {.name = "get",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_get,
     .group = "string",
     .since = "1.0.0",
     .summary = "Get the value of a key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read string fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "set",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_set,
     .group = "string",
     .since = "1.0.0",
     .summary = "Set the string value of a key",
     .complexity = "O(1)",
     .syntax = "key<key> value [condition: NX | XX]@2.6.12 [GET]@6.2.0 [expiration: "
               "EX=seconds<integer>@2.6.12 | PX=milliseconds<integer>@2.6.12 | "
               "EXAT=unix-time-seconds<unix-time>@6.2.0 | "
               "PXAT=unix-time-milliseconds<unix-time>@6.2.0 | KEEPTTL@6.0.0]",
     .acl_categories = "write string slow",
     .key_specs =
         "RW access update variable_flags|1|0|1|0|RW and ACCESS due to the optional `GET` argument",
     .history = "2.6.12|Added the `EX`, `PX`, `NX` and `XX` options.\n6.0.0|Added the `KEEPTTL` "
                "option.\n6.2.0|Added the `GET`, `EXAT` and `PXAT` option.\n7.0.0|Allowed the `NX` "
                "and `GET` options to be used together.",
     .find_key_flags = set_key_flags},
    {.name = "setnx",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_setnx,
     .group = "string",
     .since = "1.0.0",
     .summary = "Set the value of a key, only if the key does not exist",
     .complexity = "O(1)",
     .syntax = "key<key> value",
     .acl_categories = "write string fast",
     .key_specs = "OW insert|1|0|1|0"},
    {.name = "setex",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_setex,
     .group = "string",
     .since = "2.0.0",
     .summary = "Set the value and expiration of a key",
     .complexity = "O(1)",
     .syntax = "key<key> seconds<integer> value",
     .acl_categories = "write string slow",
     .key_specs = "OW update|1|0|1|0"},
    {.name = "psetex",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_psetex,
     .group = "string",
     .since = "2.6.0",
     .summary = "Set the value and expiration in milliseconds of a key",
     .complexity = "O(1)",
     .syntax = "key<key> milliseconds<integer> value",
     .acl_categories = "write string slow",
     .key_specs = "OW update|1|0|1|0"},
    {.name = "getset",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_getset,
     .group = "string",
     .since = "1.0.0",
     .summary = "Set the string value of a key and return its old value",
     .complexity = "O(1)",
     .syntax = "key<key> value",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "6.2.0",
     .replaced_by = "`SET` with the `!GET` argument"},
    {.name = "getdel",
     .arity = 2,
     .flags = kWrite | kFast,
     .handler = cmd_getdel,
     .group = "string",
     .since = "6.2.0",
     .summary = "Get the value of a key and delete the key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "write string fast",
     .key_specs = "RW access delete|1|0|1|0"},
    {.name = "getex",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = cmd_getex,
     .group = "string",
     .since = "6.2.0",
     .summary = "Get the value of a key and optionally set its expiration",
     .complexity = "O(1)",
     .syntax =
         "key<key> [expiration: EX=seconds<integer> | PX=milliseconds<integer> | "
         "EXAT=unix-time-seconds<unix-time> | PXAT=unix-time-milliseconds<unix-time> | PERSIST]",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0|RW and UPDATE because it changes the TTL"},
    {.name = "mget",
     .arity = -2,
     .flags = kReadonly | kFast | kSplittable,
     .handler = cmd_mget,
     .group = "string",
     .since = "1.0.0",
     .summary = "Get the values of all the given keys",
     .complexity = "O(N) where N is the number of keys to retrieve.",
     .syntax = "key<key>...",
     .acl_categories = "read string fast",
     .tips = "request_policy:multi_shard",
     .key_specs = "RO access|1|-1|1|0",
     .merge = MergePolicy::kValues},
    {.name = "mset",
     .arity = -3,
     .flags = kWrite | kDenyOom | kSplittable,
     .handler = cmd_mset,
     .group = "string",
     .since = "1.0.1",
     .summary = "Set multiple keys to multiple values",
     .complexity = "O(N) where N is the number of keys to set.",
     .syntax = "(key_value: key<key> value)...",
     .acl_categories = "write string slow",
     .tips = "request_policy:multi_shard response_policy:all_succeeded",
     .key_specs = "OW update|1|-1|2|0",
     .merge = MergePolicy::kAllOk},
    {.name = "msetnx",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = cmd_msetnx,
     .group = "string",
     .since = "1.0.1",
     .summary = "Set multiple keys to multiple values, only if none of the keys exist",
     .complexity = "O(N) where N is the number of keys to set.",
     .syntax = "(key_value: key<key> value)...",
     .acl_categories = "write string slow",
     .tips = "request_policy:multi_shard response_policy:agg_min",
     .key_specs = "OW insert|1|-1|2|0"},
    {.name = "append",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_append,
     .group = "string",
     .since = "2.0.0",
     .summary = "Append a value to a key",
     .complexity =
         "O(1). The amortized time complexity is O(1) assuming the appended value is small and the "
         "already present value is of any size, since the dynamic string library used by Redis "
         "will double the free space available on every reallocation.",
     .syntax = "key<key> value",
     .acl_categories = "write string fast",
     .key_specs = "RW insert|1|0|1|0"},
    {.name = "strlen",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_strlen,
     .group = "string",
     .since = "2.2.0",
     .summary = "Get the length of the value stored in a key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read string fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "incr",
     .arity = 2,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_incr,
     .group = "string",
     .since = "1.0.0",
     .summary = "Increment the integer value of a key by one",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "decr",
     .arity = 2,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_decr,
     .group = "string",
     .since = "1.0.0",
     .summary = "Decrement the integer value of a key by one",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "incrby",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_incrby,
     .group = "string",
     .since = "1.0.0",
     .summary = "Increment the integer value of a key by the given amount",
     .complexity = "O(1)",
     .syntax = "key<key> increment<integer>",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "decrby",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_decrby,
     .group = "string",
     .since = "1.0.0",
     .summary = "Decrement the integer value of a key by the given number",
     .complexity = "O(1)",
     .syntax = "key<key> decrement<integer>",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "incrbyfloat",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_incrbyfloat,
     .group = "string",
     .since = "2.6.0",
     .summary = "Increment the float value of a key by the given amount",
     .complexity = "O(1)",
     .syntax = "key<key> increment<double>",
     .acl_categories = "write string fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "getrange",
     .arity = 4,
     .flags = kReadonly,
     .handler = cmd_getrange,
     .group = "string",
     .since = "2.4.0",
     .summary = "Get a substring of the string stored at a key",
     .complexity =
         "O(N) where N is the length of the returned string. The complexity is ultimately "
         "determined by the returned length, but because creating a substring from an existing "
         "string is very cheap, it can be considered O(1) for small strings.",
     .syntax = "key<key> start<integer> end<integer>",
     .acl_categories = "read string slow",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "substr",
     .arity = 4,
     .flags = kReadonly,
     .handler = cmd_getrange,
     .group = "string",
     .since = "1.0.0",
     .summary = "Get a substring of the string stored at a key",
     .complexity =
         "O(N) where N is the length of the returned string. The complexity is ultimately "
         "determined by the returned length, but because creating a substring from an existing "
         "string is very cheap, it can be considered O(1) for small strings.",
     .syntax = "key<key> start<integer> end<integer>",
     .acl_categories = "read string slow",
     .key_specs = "RO access|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "2.0.0",
     .replaced_by = "`GETRANGE`"},
    {.name = "setrange",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = cmd_setrange,
     .group = "string",
     .since = "2.2.0",
     .summary = "Overwrite part of a string at key starting at the specified offset",
     .complexity = "O(1), not counting the time taken to copy the new string in place. Usually, "
                   "this string is very small so the amortized complexity is O(1). Otherwise, "
                   "complexity is O(M) with M being the length of the value argument.",
     .syntax = "key<key> offset<integer> value",
     .acl_categories = "write string slow",
     .key_specs = "RW update|1|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> string_commands() { return kStringCommands; }

}  // namespace ringkv::engine
