// Keyspace command handlers: DEL/UNLINK, EXISTS, TOUCH, TYPE, the EXPIRE and TTL families,
// PERSIST, RENAME(NX), COPY, KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHALL/FLUSHDB and OBJECT.
// Argument checks, their order and every reply follow Redis 7.0.15 (db.c, expire.c, object.c).
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
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/handlers.h"
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
constexpr std::string_view kDbIndexNotInt =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
constexpr std::string_view kLfuNotSelected =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
    "when switching between policies at runtime LRU and LFU data will take some time to adjust.";
constexpr std::string_view kLfuSelected =
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.";

// Redis shares the string objects of the integers 0..9999; OBJECT REFCOUNT reports such a shared
// object's refcount as INT_MAX.
constexpr int64_t kSharedIntegers = 10000;
constexpr int64_t kSharedRefcount = INT_MAX;

// Redis formats option names into errors with %s, so a NUL byte ends the text there.
std::string_view c_string_prefix(std::string_view s) { return s.substr(0, s.find('\0')); }

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
      error = std::string(kUnsupportedOption).append(c_string_prefix(opt));
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

// The refcount Redis would report for this value (see kSharedIntegers).
int64_t refcount_of(const Entry& e) {
  int64_t value = 0;
  if (e.type() == ValueType::kString && e.encoding() == StringEncoding::kInt &&
      parse_int64(e.string_value(), value) && value >= 0 && value < kSharedIntegers) {
    return kSharedRefcount;
  }
  return 1;
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

// Looks up the key of an OBJECT subcommand; replies null and returns nullptr when absent.
const Entry* object_lookup(CommandContext& ctx) {
  const Entry* e = ctx.store.lookup_notouch(ctx.argv[2]);
  if (e == nullptr) ctx.reply.null();
  return e;
}

}  // namespace

void cmd_del(CommandContext& ctx) {
  int64_t deleted = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    if (ctx.store.erase(ctx.argv[i])) {
      ++deleted;
      ctx.key_modified(ctx.argv[i]);
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
  if (ctx.store.already_expired(when)) {
    ctx.store.erase(key);
    ctx.propagate_as({"DEL", key});
  } else {
    ctx.store.set_expire(key, when);
    ctx.propagate_as({"PEXPIREAT", key, std::to_string(when)});
  }
  ctx.key_modified(key);
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
  if (removed) ctx.key_modified(ctx.argv[1]);
  ctx.reply.integer(removed ? 1 : 0);
}

namespace {

// A list or sorted set that arrives at `key` (RENAME, COPY) may serve clients blocked on it, as
// Redis's dbAdd signals for those types.
void report_if_blockable(CommandContext& ctx, std::string_view key) {
  const Entry* e = ctx.store.peek(key);
  if (e != nullptr && (e->type() == ValueType::kList || e->type() == ValueType::kZSet)) {
    ctx.key_ready(key);
  }
}

}  // namespace

void cmd_rename(CommandContext& ctx) {
  const std::string_view from = ctx.argv[1];
  const std::string_view to = ctx.argv[2];
  if (ctx.store.peek(from) == nullptr) {
    ctx.reply.error(err::kNoSuchKey);
    return;
  }
  // Renaming a key onto itself keeps it, TTL included.
  if (from != to) {
    ctx.store.rename(from, to);
    report_if_blockable(ctx, to);
    ctx.key_modified(from);
    ctx.key_modified(to);
  }
  ctx.reply.ok();
}

void cmd_renamenx(CommandContext& ctx) {
  const std::string_view from = ctx.argv[1];
  const std::string_view to = ctx.argv[2];
  if (ctx.store.peek(from) == nullptr) {
    ctx.reply.error(err::kNoSuchKey);
    return;
  }
  if (from == to || ctx.store.peek(to) != nullptr) {
    ctx.reply.integer(0);
    return;
  }
  ctx.store.rename(from, to);
  report_if_blockable(ctx, to);
  ctx.key_modified(from);
  ctx.key_modified(to);
  ctx.reply.integer(1);
}

void cmd_copy(CommandContext& ctx) {
  const std::string_view from = ctx.argv[1];
  const std::string_view to = ctx.argv[2];
  bool replace = false;
  // Options are checked in order, so a bad DB index is reported before a later syntax error.
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    const bool has_value = i + 1 < ctx.argv.size();
    if (equals_ignore_case(ctx.argv[i], "replace")) {
      replace = true;
    } else if (equals_ignore_case(ctx.argv[i], "db") && has_value) {
      int64_t db = 0;
      if (!parse_int64(ctx.argv[i + 1], db)) {
        ctx.reply.error(err::kNotInteger);
        return;
      }
      if (db < INT_MIN || db > INT_MAX) {
        ctx.reply.error(kDbIndexNotInt);
        return;
      }
      // ringkv keeps a single database, so only index 0 exists.
      if (db != 0) {
        ctx.reply.error(err::kDbIndexOutOfRange);
        return;
      }
      ++i;
    } else {
      ctx.reply.error(err::kSyntax);
      return;
    }
  }
  if (from == to) {
    ctx.reply.error(kSameObject);
    return;
  }
  if (ctx.store.lookup(from) == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  const bool copied = ctx.store.copy(from, to, replace);
  if (copied) {
    report_if_blockable(ctx, to);
    ctx.key_modified(to);
  }
  ctx.reply.integer(copied ? 1 : 0);
}

void cmd_keys(CommandContext& ctx) {
  const std::string_view pattern = ctx.argv[1];
  const size_t token = ctx.reply.begin_deferred();
  size_t count = 0;
  ctx.store.for_each([&](const Entry& e) {
    if (common::glob_match(pattern, e.key())) {
      ctx.reply.bulk(e.key());
      ++count;
    }
  });
  ctx.reply.end_deferred_array(token, count);
}

void cmd_scan(CommandContext& ctx) {
  uint64_t cursor = 0;
  if (!scan_cursor_or_reply(ctx, ctx.argv[1], cursor)) return;
  ScanOptions options;
  if (!scan_options_or_reply(ctx, 2, true, options)) return;
  const int64_t count = options.count;

  // As Redis: keep walking buckets until `count` keys were seen (before filtering) or the scan
  // ends, bounded so that a sparse table does not make one call walk all of it.
  std::vector<std::string> keys;
  size_t seen = 0;
  int64_t steps_left = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  do {
    const size_t want = static_cast<size_t>(count) - seen;
    cursor = ctx.store.scan(cursor, want, [&](const Entry& e) {
      ++seen;
      if (!options.matches(e.key())) return;
      if (options.use_type && !equals_ignore_case(options.type, type_name(e.type()))) return;
      keys.emplace_back(e.key());
    });
  } while (cursor != 0 && steps_left-- > 0 && seen < static_cast<uint64_t>(count));

  reply_scan(ctx.reply, cursor, keys);
}

void cmd_randomkey(CommandContext& ctx) {
  const Entry* e = ctx.store.random_entry();
  if (e == nullptr) {
    ctx.reply.null();
  } else {
    ctx.reply.bulk(e->key());
  }
}

void cmd_dbsize(CommandContext& ctx) { ctx.reply.integer(static_cast<int64_t>(ctx.store.size())); }

void cmd_flushall(CommandContext& ctx) {
  // Without an option Redis flushes synchronously (lazyfree-lazy-user-flush defaults to no).
  bool async = false;
  if (ctx.argv.size() == 2 && equals_ignore_case(ctx.argv[1], "async")) {
    async = true;
  } else if (!(ctx.argv.size() == 1 ||
               (ctx.argv.size() == 2 && equals_ignore_case(ctx.argv[1], "sync")))) {
    ctx.reply.error(err::kSyntax);
    return;
  }
  // Watchers learn which of their keys existed before they are gone.
  ctx.keyspace_flushing();
  ctx.store.clear(async);
  ctx.reply.ok();
}

void cmd_object_encoding(CommandContext& ctx) {
  if (const Entry* e = object_lookup(ctx)) ctx.reply.bulk(value_encoding_name(*e));
}

void cmd_object_freq(CommandContext& ctx) {
  const Entry* e = object_lookup(ctx);
  if (e == nullptr) return;
  const AccessPolicy& access = ctx.store.access_policy();
  if (!access.lfu) {
    ctx.reply.error(kLfuNotSelected);
    return;
  }
  // The decay due since the last access, without counting this look as one.
  ctx.reply.integer(lfu_decayed_counter(e->lru(), ctx.store.now(), access.decay_time));
}

void cmd_object_idletime(CommandContext& ctx) {
  const Entry* e = object_lookup(ctx);
  if (e == nullptr) return;
  if (ctx.store.access_policy().lfu) {
    ctx.reply.error(kLfuSelected);
    return;
  }
  ctx.reply.integer(lru_idle_seconds(ctx.store.lru_clock(), e->lru()));
}

void cmd_object_refcount(CommandContext& ctx) {
  if (const Entry* e = object_lookup(ctx)) ctx.reply.integer(refcount_of(*e));
}

void cmd_object_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.array(std::size(kLines));
  for (std::string_view line : kLines) ctx.reply.simple(line);
}

}  // namespace ringkv::engine
