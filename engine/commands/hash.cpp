// Hash command handlers: parse arguments in Redis 7.0.15's order (so the first error reported is
// the one Redis reports), call the operations of hash_type.h and write the reply.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/handlers.h"
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
    ctx.reply.ok();
  } else {
    ctx.reply.error(added.error());
  }
}

void cmd_hsetnx(CommandContext& ctx) {
  auto set = hash_set_nx(ctx.store, ctx.argv[1], ctx.argv[2], ctx.argv[3]);
  if (set) {
    if (*set) ctx.key_modified(ctx.argv[1]);
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
    if (*deleted > 0) ctx.key_modified(ctx.argv[1]);
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

}  // namespace ringkv::engine
