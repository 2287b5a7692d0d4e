// Hash command handlers: parse arguments in Redis 7.0.15's order (so the first error reported is
// the one Redis reports), call the operations of hash_type.h and write the reply.
#include "engine/commands/hash.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/store.h"
#include "engine/types/hash_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// HSET and HMSET take field/value pairs: an odd count is an arity error, checked before the key.
bool pairs_or_reply(CommandContext& ctx) {
  if (ctx.argv.size() % 2 == 0) return true;
  reply_wrong_arity(ctx);
  return false;
}

// HKEYS, HVALS and HGETALL: the fields and/or values of the hash (a map for HGETALL in RESP3).
void reply_all(CommandContext& ctx, bool fields, bool values) {
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  const size_t n = hash == nullptr ? 0 : hash->size();
  if (fields && values) {
    ctx.reply.map(n);
  } else {
    ctx.reply.array(n);
  }
  if (hash == nullptr) return;
  hash->for_each([&](std::string_view f, std::string_view v) {
    if (fields) ctx.reply.bulk(f);
    if (values) ctx.reply.bulk(v);
  });
}

// HRANDFIELD key count [WITHVALUES].
void hrandfield_with_count(CommandContext& ctx) {
  int64_t count = 0;
  if (!random_count_or_reply(ctx, count)) return;
  bool with_values = false;
  if (!random_with_or_reply(ctx, "withvalues", count, with_values)) return;
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  if (hash == nullptr || count == 0) {
    ctx.reply.array(0);
    return;
  }
  const uint64_t size = hash->size();
  const uint64_t n = count < 0 ? static_cast<uint64_t>(-count) : std::min<uint64_t>(size, count);
  // RESP3 nests each field with its value; RESP2 flattens them.
  const bool resp3 = ctx.reply.version() == protocol::RespVersion::kResp3;
  ctx.reply.array(with_values && !resp3 ? n * 2 : n);
  hash_random_fields(*hash, count, common::next_random,
                     [&](std::string_view f, std::string_view v) {
                       if (with_values && resp3) ctx.reply.array(2);
                       ctx.reply.bulk(f);
                       if (with_values) ctx.reply.bulk(v);
                     });
}

}  // namespace

void cmd_hset(CommandContext& ctx) {
  if (!pairs_or_reply(ctx)) return;
  auto added = hash_set(ctx.store, ctx.argv[1], ctx.argv.subspan(2));
  if (added) {
    // Even rewriting fields with their current values counts as a change, as in Redis.
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyHash, "hset", ctx.argv[1]);
    ctx.reply.integer(*added);
  } else {
    ctx.reply.error(added.error());
  }
}

void cmd_hmset(CommandContext& ctx) {
  if (!pairs_or_reply(ctx)) return;
  auto added = hash_set(ctx.store, ctx.argv[1], ctx.argv.subspan(2));
  if (added) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyHash, "hset", ctx.argv[1]);
    ctx.reply.ok();
  } else {
    ctx.reply.error(added.error());
  }
}

void cmd_hsetnx(CommandContext& ctx) {
  auto set = hash_set_nx(ctx.store, ctx.argv[1], ctx.argv[2], ctx.argv[3]);
  if (set) {
    if (*set) {
      ctx.key_modified(ctx.argv[1]);
      ctx.notify(common::kNotifyHash, "hset", ctx.argv[1]);
    }
    ctx.reply.integer(*set ? 1 : 0);
  } else {
    ctx.reply.error(set.error());
  }
}

void cmd_hget(CommandContext& ctx) {
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  auto value = hash == nullptr ? std::nullopt : hash->get(ctx.argv[2]);
  if (value) {
    ctx.reply.bulk(*value);
  } else {
    ctx.reply.null();
  }
}

void cmd_hmget(CommandContext& ctx) {
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    auto value = hash == nullptr ? std::nullopt : hash->get(ctx.argv[i]);
    if (value) {
      ctx.reply.bulk(*value);
    } else {
      ctx.reply.null();
    }
  }
}

void cmd_hdel(CommandContext& ctx) {
  auto deleted = hash_del(ctx.store, ctx.argv[1], ctx.argv.subspan(2));
  if (deleted) {
    if (*deleted > 0) {
      ctx.key_modified(ctx.argv[1]);
      ctx.notify(common::kNotifyHash, "hdel", ctx.argv[1]);
      if (ctx.store.peek(ctx.argv[1]) == nullptr) {
        ctx.notify(common::kNotifyGeneric, "del", ctx.argv[1]);
      }
    }
    ctx.reply.integer(*deleted);
  } else {
    ctx.reply.error(deleted.error());
  }
}

void cmd_hlen(CommandContext& ctx) {
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  ctx.reply.integer(hash == nullptr ? 0 : static_cast<int64_t>(hash->size()));
}

void cmd_hstrlen(CommandContext& ctx) {
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  auto value = hash == nullptr ? std::nullopt : hash->get(ctx.argv[2]);
  ctx.reply.integer(value ? static_cast<int64_t>(value->size()) : 0);
}

void cmd_hexists(CommandContext& ctx) {
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  ctx.reply.integer(hash != nullptr && hash->get(ctx.argv[2]) ? 1 : 0);
}

void cmd_hgetall(CommandContext& ctx) { reply_all(ctx, true, true); }

void cmd_hkeys(CommandContext& ctx) { reply_all(ctx, true, false); }

void cmd_hvals(CommandContext& ctx) { reply_all(ctx, false, true); }

void cmd_hincrby(CommandContext& ctx) {
  int64_t delta = 0;
  if (!parse_int64(ctx.argv[3], delta)) {
    ctx.reply.error(err::kNotInteger);
    return;
  }
  auto value = hash_incr_by(ctx.store, ctx.argv[1], ctx.argv[2], delta);
  if (value) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyHash, "hincrby", ctx.argv[1]);
    ctx.reply.integer(*value);
  } else {
    ctx.reply.error(value.error());
  }
}

void cmd_hincrbyfloat(CommandContext& ctx) {
  long double increment = 0;
  if (!parse_long_double(ctx.argv[3], increment)) {
    ctx.reply.error(err::kNotFloat);
    return;
  }
  if (std::isnan(increment) || std::isinf(increment)) {
    ctx.reply.error(kHashIncrementNotFinite);
    return;
  }
  auto value = hash_incr_by_float(ctx.store, ctx.argv[1], ctx.argv[2], increment);
  if (value) {
    ctx.key_modified(ctx.argv[1]);
    ctx.notify(common::kNotifyHash, "hincrbyfloat", ctx.argv[1]);
    // The stored text, so that replay does not depend on long double arithmetic.
    ctx.propagate_as({"HSET", ctx.argv[1], ctx.argv[2], *value});
    ctx.reply.bulk(*value);
  } else {
    ctx.reply.error(value.error());
  }
}

void cmd_hrandfield(CommandContext& ctx) {
  if (ctx.argv.size() >= 3) {
    hrandfield_with_count(ctx);
    return;
  }
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  if (hash == nullptr) {
    ctx.reply.null();
    return;
  }
  ctx.reply.bulk(hash->random_entry(common::next_random).first);
}

void cmd_hscan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!scan_cursor_or_reply(ctx, ctx.argv[2], cursor)) return;
  const HashObject* hash = nullptr;
  if (!read_or_reply(ctx, ctx.argv[1], hash)) return;
  if (hash == nullptr) {
    reply_empty_scan(ctx.reply);
    return;
  }
  ScanOptions options;
  if (!scan_options_or_reply(ctx, 3, false, options)) return;
  std::vector<std::string_view> items;
  const uint64_t next = hash->scan(cursor, static_cast<size_t>(options.count),
                                   [&](std::string_view f, std::string_view v) {
                                     if (!options.matches(f)) return;
                                     items.push_back(f);
                                     items.push_back(v);
                                   });
  reply_scan(ctx.reply, next, items);
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kHashCommands[] = {
    {.name = "hset",
     .arity = -4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_hset,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Set the string value of a hash field",
     .complexity = "O(1) for each field/value pair added, so O(N) to add N field/value pairs when "
                   "the command is called with multiple field/value pairs.",
     .syntax = "key<key> (field_value: field value)...",
     .acl_categories = "write hash fast",
     .key_specs = "RW update|1|0|1|0",
     .history = "4.0.0|Accepts multiple `field` and `value` arguments."},
    {.name = "hsetnx",
     .arity = 4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_hsetnx,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Set the value of a hash field, only if the field does not exist",
     .complexity = "O(1)",
     .syntax = "key<key> field value",
     .acl_categories = "write hash fast",
     .key_specs = "RW insert|1|0|1|0"},
    {.name = "hget",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_hget,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Get the value of a hash field",
     .complexity = "O(1)",
     .syntax = "key<key> field",
     .acl_categories = "read hash fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "hmget",
     .arity = -3,
     .flags = kReadonly | kFast,
     .handler = cmd_hmget,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Get the values of all the given hash fields",
     .complexity = "O(N) where N is the number of fields being requested.",
     .syntax = "key<key> field...",
     .acl_categories = "read hash fast",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "hmset",
     .arity = -4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_hmset,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Set multiple hash fields to multiple values",
     .complexity = "O(N) where N is the number of fields being set.",
     .syntax = "key<key> (field_value: field value)...",
     .acl_categories = "write hash fast",
     .key_specs = "RW update|1|0|1|0",
     .doc_flags = "deprecated",
     .deprecated_since = "4.0.0",
     .replaced_by = "`HSET` with multiple field-value pairs"},
    {.name = "hdel",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = cmd_hdel,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Delete one or more hash fields",
     .complexity = "O(N) where N is the number of fields to be removed.",
     .syntax = "key<key> field...",
     .acl_categories = "write hash fast",
     .key_specs = "RW delete|1|0|1|0",
     .history = "2.4.0|Accepts multiple `field` arguments."},
    {.name = "hlen",
     .arity = 2,
     .flags = kReadonly | kFast,
     .handler = cmd_hlen,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Get the number of fields in a hash",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "read hash fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "hstrlen",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_hstrlen,
     .group = "hash",
     .since = "3.2.0",
     .summary = "Get the length of the value of a hash field",
     .complexity = "O(1)",
     .syntax = "key<key> field",
     .acl_categories = "read hash fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "hexists",
     .arity = 3,
     .flags = kReadonly | kFast,
     .handler = cmd_hexists,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Determine if a hash field exists",
     .complexity = "O(1)",
     .syntax = "key<key> field",
     .acl_categories = "read hash fast",
     .key_specs = "RO|1|0|1|0"},
    {.name = "hgetall",
     .arity = 2,
     .flags = kReadonly,
     .handler = cmd_hgetall,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Get all the fields and values in a hash",
     .complexity = "O(N) where N is the size of the hash.",
     .syntax = "key<key>",
     .acl_categories = "read hash slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "hkeys",
     .arity = 2,
     .flags = kReadonly,
     .handler = cmd_hkeys,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Get all the fields in a hash",
     .complexity = "O(N) where N is the size of the hash.",
     .syntax = "key<key>",
     .acl_categories = "read hash slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "hvals",
     .arity = 2,
     .flags = kReadonly,
     .handler = cmd_hvals,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Get all the values in a hash",
     .complexity = "O(N) where N is the size of the hash.",
     .syntax = "key<key>",
     .acl_categories = "read hash slow",
     .tips = "nondeterministic_output_order",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "hincrby",
     .arity = 4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_hincrby,
     .group = "hash",
     .since = "2.0.0",
     .summary = "Increment the integer value of a hash field by the given number",
     .complexity = "O(1)",
     .syntax = "key<key> field increment<integer>",
     .acl_categories = "write hash fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "hincrbyfloat",
     .arity = 4,
     .flags = kWrite | kDenyOom | kFast,
     .handler = cmd_hincrbyfloat,
     .group = "hash",
     .since = "2.6.0",
     .summary = "Increment the float value of a hash field by the given amount",
     .complexity = "O(1)",
     .syntax = "key<key> field increment<double>",
     .acl_categories = "write hash fast",
     .key_specs = "RW access update|1|0|1|0"},
    {.name = "hrandfield",
     .arity = -2,
     .flags = kReadonly,
     .handler = cmd_hrandfield,
     .group = "hash",
     .since = "6.2.0",
     .summary = "Get one or multiple random fields from a hash",
     .complexity = "O(N) where N is the number of fields returned",
     .syntax = "key<key> [options: count<integer> [WITHVALUES]]",
     .acl_categories = "read hash slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0"},
    {.name = "hscan",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_hscan,
     .group = "hash",
     .since = "2.8.0",
     .summary = "Incrementally iterate hash fields and associated values",
     .complexity =
         "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
         "the cursor to return back to 0. N is the number of elements inside the collection..",
     .syntax = "key<key> cursor<integer> [MATCH=pattern<pattern>] [COUNT=count<integer>]",
     .acl_categories = "read hash slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0"},
};

}  // namespace

std::span<const CommandSpec> hash_commands() { return kHashCommands; }

}  // namespace ringkv::engine
