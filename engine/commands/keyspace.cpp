// Commands over the whole keyspace and OBJECT: KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHALL/FLUSHDB and
// OBJECT ENCODING/FREQ/IDLETIME/REFCOUNT. Argument checks, their order and every reply follow
// Redis 7.0.15 (db.c, object.c).
#include "engine/commands/keyspace.h"

#include <climits>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "common/glob.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/scan_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/databases.h"
#include "engine/keyspace/lazy_free.h"
#include "engine/keyspace/store.h"
#include "engine/types/object.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

namespace err = protocol::err;

constexpr std::string_view kLfuNotSelected =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
    "when switching between policies at runtime LRU and LFU data will take some time to adjust.";
constexpr std::string_view kLfuSelected =
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.";

// Redis shares the string objects of the integers 0..9999 (see Entry::unshared for when it does
// not); OBJECT REFCOUNT reports such a shared object's refcount as INT_MAX.
constexpr int64_t kSharedIntegers = 10000;
constexpr int64_t kSharedRefcount = INT_MAX;

// Looks up the key of an OBJECT subcommand; replies null and returns nullptr when absent.
const Entry* object_lookup(CommandContext& ctx) {
  // Redis's objectCommandLookup: no access time, and no keymiss event.
  const Entry* e = ctx.store.lookup_notouch(ctx.argv[2], false);
  if (e == nullptr) ctx.reply.null();
  return e;
}

}  // namespace

int64_t refcount_of(const Entry& e) {
  int64_t value = 0;
  if (e.type() == ValueType::kString && e.encoding() == StringEncoding::kInt && !e.unshared() &&
      parse_int64(e.string_value(), value) && value >= 0 && value < kSharedIntegers) {
    return kSharedRefcount;
  }
  return 1;
}

void cmd_keys(CommandContext& ctx) {
  const std::string_view pattern = ctx.argv[1];
  const size_t token = ctx.reply.begin_deferred();
  size_t count = 0;
  ctx.store.for_each([&](const Entry& e) {
    if (ctx.acts_on(e.key()) && common::glob_match(pattern, e.key())) {
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
      if (!ctx.acts_on(e.key()) || !options.matches(e.key())) return;
      if (options.use_type && !equals_ignore_case(options.type, type_name(e.type()))) return;
      keys.emplace_back(e.key());
    });
  } while (cursor != 0 && steps_left-- > 0 && seen < static_cast<uint64_t>(count));

  reply_scan(ctx.reply, cursor, keys);
}

void cmd_randomkey(CommandContext& ctx) {
  const Entry* e = ctx.store.random_entry();
  if (e != nullptr && !ctx.acts_on(e->key())) {
    // Mostly copies here: a few more draws, then the first own key in table order.
    e = nullptr;
    for (int tries = 0; tries < 32 && e == nullptr; ++tries) {
      const Entry* candidate = ctx.store.random_entry();
      if (candidate != nullptr && ctx.acts_on(candidate->key())) e = candidate;
    }
    std::string found;
    if (e == nullptr) {
      uint64_t cursor = 0;
      do {
        cursor = ctx.store.scan(cursor, 64, [&](const Entry& x) {
          if (found.empty() && ctx.acts_on(x.key())) found = x.key();
        });
      } while (cursor != 0 && found.empty());
      if (!found.empty()) return ctx.reply.bulk(found);
    }
  }
  if (e == nullptr) {
    ctx.reply.null();
  } else {
    ctx.reply.bulk(e->key());
  }
}

void cmd_dbsize(CommandContext& ctx) {
  if (ctx.owned == nullptr) return ctx.reply.integer(static_cast<int64_t>(ctx.store.size()));
  int64_t n = 0;
  ctx.store.for_each([&](const Entry& e) { n += ctx.acts_on(e.key()) ? 1 : 0; });
  ctx.reply.integer(n);
}

namespace {

// FLUSHALL's and FLUSHDB's option; false (having replied) when it is not one.
bool flush_mode_or_reply(CommandContext& ctx, bool& async) {
  // Without an option, as lazyfree-lazy-user-flush says (no by default: synchronously).
  if (ctx.argv.size() == 1) {
    async = lazy_free_settings().user_flush;
  } else if (ctx.argv.size() == 2 && (equals_ignore_case(ctx.argv[1], "async") ||
                                      equals_ignore_case(ctx.argv[1], "sync"))) {
    async = equals_ignore_case(ctx.argv[1], "async");
  } else {
    ctx.reply.error(err::kSyntax);
    return false;
  }
  return true;
}

void flush_store(CommandContext& ctx, Store& store, bool async) {
  if (ctx.owned == nullptr) {
    store.clear(async);
    return;
  }
  // This node's own keys only: the copies it holds are flushed by their primaries.
  std::vector<std::string> own;
  store.for_each([&](const Entry& e) {
    if (ctx.acts_on(e.key())) own.emplace_back(e.key());
  });
  for (const std::string& key : own) store.erase(key, async);
}

}  // namespace

void cmd_flushdb(CommandContext& ctx) {
  bool async = false;
  if (!flush_mode_or_reply(ctx, async)) return;
  // Watchers learn which of their keys existed before they are gone.
  ctx.keyspace_flushing();
  flush_store(ctx, ctx.store, async);
  ctx.reply.ok();
}

void cmd_flushall(CommandContext& ctx) {
  bool async = false;
  if (!flush_mode_or_reply(ctx, async)) return;
  Databases* dbs = ctx.server != nullptr ? ctx.server->databases() : nullptr;
  if (dbs == nullptr) {
    ctx.keyspace_flushing();
    flush_store(ctx, ctx.store, async);
  } else {
    ctx.all_keyspaces_flushing();
    for (int i = 0; i < dbs->count(); ++i) flush_store(ctx, (*dbs)[i], async);
  }
  ctx.reply.ok();
}

void cmd_swapdb(CommandContext& ctx) {
  int a = 0, b = 0;
  if (!int_or_reply(ctx, ctx.argv[1], a, "ERR invalid first DB index")) return;
  if (!int_or_reply(ctx, ctx.argv[2], b, "ERR invalid second DB index")) return;
  Databases* dbs = ctx.server != nullptr ? ctx.server->databases() : nullptr;
  if (dbs == nullptr ? (a != 0 || b != 0) : (!dbs->valid(a) || !dbs->valid(b))) {
    ctx.reply.error(err::kDbIndexOutOfRange);
    return;
  }
  if (a != b && dbs != nullptr) ctx.server->swap_databases(a, b);
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

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kObjectSubcommands[] = {
    {.name = "encoding",
     .arity = 3,
     .flags = kReadonly,
     .handler = cmd_object_encoding,
     .group = "generic",
     .since = "2.2.3",
     .summary = "Inspect the internal encoding of a Redis object",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO|2|0|1|0"},
    {.name = "freq",
     .arity = 3,
     .flags = kReadonly,
     .handler = cmd_object_freq,
     .group = "generic",
     .since = "4.0.0",
     .summary = "Get the logarithmic access frequency counter of a Redis object",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO|2|0|1|0"},
    {.name = "idletime",
     .arity = 3,
     .flags = kReadonly,
     .handler = cmd_object_idletime,
     .group = "generic",
     .since = "2.2.3",
     .summary = "Get the time since a Redis object was last accessed",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO|2|0|1|0"},
    {.name = "refcount",
     .arity = 3,
     .flags = kReadonly,
     .handler = cmd_object_refcount,
     .group = "generic",
     .since = "2.2.3",
     .summary = "Get the number of references to the value of the key",
     .complexity = "O(1)",
     .syntax = "key<key>",
     .acl_categories = "keyspace read slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO|2|0|1|0"},
    help_row(cmd_object_help, "generic", "6.2.0", "keyspace slow"),
};

constexpr CommandSpec kKeyspaceCommands[] = {
    {.name = "keys",
     .arity = 2,
     .flags = kReadonly | kKeyspaceWide,
     .handler = cmd_keys,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Find all keys matching the given pattern",
     .complexity = "O(N) with N being the number of keys in the database, under the assumption "
                   "that the key names in the database and the given pattern have limited length.",
     .syntax = "pattern<pattern>",
     .acl_categories = "keyspace read slow dangerous",
     .tips = "request_policy:all_shards nondeterministic_output_order",
     .merge = MergePolicy::kConcat},
    {.name = "scan",
     .arity = -2,
     .flags = kReadonly | kKeyspaceWide,
     .handler = cmd_scan,
     .group = "generic",
     .since = "2.8.0",
     .summary = "Incrementally iterate the keys space",
     .complexity =
         "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
         "the cursor to return back to 0. N is the number of elements inside the collection.",
     .syntax = "cursor<integer> [MATCH=pattern<pattern>] [COUNT=count<integer>] [TYPE=type]@6.0.0",
     .acl_categories = "keyspace read slow",
     .tips = "nondeterministic_output request_policy:special",
     .history = "6.0.0|Added the `TYPE` subcommand."},
    {.name = "randomkey",
     .arity = 1,
     .flags = kReadonly | kKeyspaceWide,
     .handler = cmd_randomkey,
     .group = "generic",
     .since = "1.0.0",
     .summary = "Return a random key from the keyspace",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "keyspace read slow",
     .tips = "request_policy:all_shards nondeterministic_output",
     .merge = MergePolicy::kRandom},
    {.name = "dbsize",
     .arity = 1,
     .flags = kReadonly | kFast | kKeyspaceWide,
     .handler = cmd_dbsize,
     .group = "server",
     .since = "1.0.0",
     .summary = "Return the number of keys in the selected database",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "keyspace read fast",
     .tips = "request_policy:all_shards response_policy:agg_sum"},
    {.name = "flushdb",
     .arity = -1,
     .flags = kWrite | kKeyspaceWide,
     .handler = cmd_flushdb,
     .group = "server",
     .since = "1.0.0",
     .summary = "Remove all keys from the current database",
     .complexity = "O(N) where N is the number of keys in the selected database",
     .syntax = "[async: ASYNC@4.0.0 | SYNC@6.2.0]",
     .acl_categories = "keyspace write slow dangerous",
     .tips = "request_policy:all_shards response_policy:all_succeeded",
     .history = "4.0.0|Added the `ASYNC` flushing mode modifier.\n6.2.0|Added the `SYNC` flushing "
                "mode modifier.",
     .merge = MergePolicy::kAllOk},
    {.name = "flushall",
     .arity = -1,
     .flags = kWrite | kKeyspaceWide,
     .handler = cmd_flushall,
     .group = "server",
     .since = "1.0.0",
     .summary = "Remove all keys from all databases",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .syntax = "[async: ASYNC@4.0.0 | SYNC@6.2.0]",
     .acl_categories = "keyspace write slow dangerous",
     .tips = "request_policy:all_shards response_policy:all_succeeded",
     .history = "4.0.0|Added the `ASYNC` flushing mode modifier.\n6.2.0|Added the `SYNC` flushing "
                "mode modifier.",
     .merge = MergePolicy::kAllOk},
    {.name = "swapdb",
     .arity = 3,
     .flags = kWrite | kFast | kKeyspaceWide,
     .handler = cmd_swapdb,
     .group = "server",
     .since = "4.0.0",
     .summary = "Swaps two Redis databases",
     .complexity = "O(N) where N is the count of clients watching or blocking on keys from both "
                   "databases.",
     .syntax = "index1<integer> index2<integer>",
     .acl_categories = "keyspace write fast dangerous",
     // In a cluster every node swaps its part of the two databases.
     .merge = MergePolicy::kAllOk},
    container_row("object", "generic", "2.2.3", "A container for object introspection commands",
                  kObjectSubcommands),
};

}  // namespace

std::span<const CommandSpec> keyspace_commands() { return kKeyspaceCommands; }

}  // namespace ringkv::engine
