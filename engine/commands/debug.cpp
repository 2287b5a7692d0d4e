// DEBUG: the subcommands tools and test suites use (SLEEP, SET-ACTIVE-EXPIRE, OBJECT, RELOAD,
// DIGEST, DIGEST-VALUE, HELP), answering as redis-server 7.0.15. DIGEST and DIGEST-VALUE are
// Redis's own digests (keyspace/digest.h), so one dataset digests the same in both.
#include "engine/commands/debug.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/command.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/keyspace.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/access.h"
#include "engine/keyspace/databases.h"
#include "engine/keyspace/digest.h"
#include "engine/rdb/rdb_value.h"
#include "engine/types/list_type.h"
#include "engine/types/object.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kDebugHelp[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "RELOAD [option ...]",
    "    Save the dataset and reload it back to memory (through Redis's RDB encoding of each",
    "    value). Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from the saved data.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from the last save (ringkv keeps no",
    "      save: the current data is reloaded).",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "HELP",
    "    Prints this help.",
};

void debug_object(CommandContext& ctx) {
  const Entry* e = ctx.store.peek(ctx.argv[2]);
  if (e == nullptr) {
    ctx.reply.error("ERR no such key");
    return;
  }
  std::string encoded;
  encode_value(*e, encoded);
  std::string extra;
  if (e->type() == ValueType::kList) {
    const auto& list = static_cast<const ListObject&>(*e->object());
    const size_t nodes = list.node_count();
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  " ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d "
                  "ql_uncompressed_size:%zu",
                  nodes,
                  nodes == 0 ? 0.0 : static_cast<double>(list.size()) / static_cast<double>(nodes),
                  list.fill(), list.compress_depth() != 0 ? 1 : 0, list.listpack_bytes());
    extra = buf;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "Value at:%p refcount:%lld encoding:%s serializedlength:%zu lru:%u "
                "lru_seconds_idle:%lld",
                static_cast<const void*>(e), static_cast<long long>(refcount_of(*e)),
                std::string(value_encoding_name(*e)).c_str(), encoded.size() - 1, e->lru(),
                static_cast<long long>(lru_idle_seconds(ctx.store.lru_clock(), e->lru())));
  ctx.reply.simple(std::string(line) + extra);
}

// Saves every key in Redis's RDB encoding of its value, drops the keyspace and loads them back:
// what DEBUG RELOAD checks in Redis (values survive their serialization, encodings come back as
// loading gives them).
void debug_reload(CommandContext& ctx) {
  bool merge = false, noflush = false;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    if (equals_ignore_case(ctx.argv[i], "merge")) {
      merge = true;
    } else if (equals_ignore_case(ctx.argv[i], "noflush")) {
      noflush = true;
    } else if (!equals_ignore_case(ctx.argv[i], "nosave")) {
      ctx.reply.error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
      return;
    }
  }
  struct Saved {
    std::string key;
    std::string value;
    int64_t expire_at;
  };
  std::vector<Saved> saved;
  saved.reserve(ctx.store.size());
  ctx.store.for_each([&](const Entry& e) {
    Saved s{std::string(e.key()), {}, e.expire_at()};
    encode_value(e, s.value);
    saved.push_back(std::move(s));
  });
  // Loading the same keys over themselves: with NOFLUSH alone Redis would stop on the first
  // duplicate, so (as MERGE) the saved copy replaces the live one.
  if (!noflush || merge) ctx.store.clear(false);
  for (Saved& s : saved) {
    DecodedValue value;
    if (!decode_value(s.value, value)) continue;
    ctx.store.erase(s.key);
    store_decoded(ctx.store, s.key, std::move(value), s.expire_at);
  }
  ctx.reply.ok();
}

void cmd_debug(CommandContext& ctx) {
  const std::string_view sub = ctx.argv[1];
  const size_t argc = ctx.argv.size();
  // A client runs DEBUG only when enable-debug-command allows it (kProtected: the server checks
  // it before anything else). Without a server (the dispatch fuzzer) DEBUG never runs: SLEEP
  // would stall it.
  if (ctx.server == nullptr) {
    ctx.reply.error(protocol::err::kDebugNotAllowed);
    return;
  }
  if (argc == 2 && equals_ignore_case(sub, "help")) {
    reply_help(ctx.reply, kDebugHelp);
  } else if (argc == 3 && equals_ignore_case(sub, "sleep")) {
    const double seconds = std::strtod(std::string(ctx.argv[2]).c_str(), nullptr);
    if (seconds > 0 && std::isfinite(seconds)) {
      ::usleep(static_cast<useconds_t>(seconds * 1e6));
    }
    ctx.reply.ok();
  } else if (argc == 3 && equals_ignore_case(sub, "set-active-expire")) {
    if (ctx.server != nullptr)
      ctx.server->set_active_expire(std::atoi(std::string(ctx.argv[2]).c_str()) != 0);
    ctx.reply.ok();
  } else if (argc == 3 && equals_ignore_case(sub, "object")) {
    debug_object(ctx);
  } else if (argc >= 2 && equals_ignore_case(sub, "reload")) {
    debug_reload(ctx);
  } else if (argc == 2 && equals_ignore_case(sub, "digest")) {
    Databases* dbs = ctx.server != nullptr ? ctx.server->databases() : nullptr;
    ctx.reply.simple(
        digest_hex(dbs != nullptr ? dataset_digest(dbs->all()) : dataset_digest(ctx.store)));
  } else if (argc >= 2 && equals_ignore_case(sub, "digest-value")) {
    ctx.reply.array(argc - 2);
    for (size_t i = 2; i < argc; ++i) {
      const Entry* e = ctx.store.peek(ctx.argv[i]);
      ctx.reply.simple(digest_hex(e != nullptr ? value_digest(*e) : Digest{}));
    }
  } else {
    reply_subcommand_syntax_error(ctx);
  }
}

constexpr CommandSpec kDebugCommands[] = {
    {.name = "debug",
     .arity = -2,
     .flags = kAdmin | kNoscript | kLoading | kStale | kProtected,
     .handler = cmd_debug,
     .group = "server",
     .since = "1.0.0",
     .summary = "A container for debugging commands",
     .complexity = "Depends on subcommand.",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .doc_flags = "syscmd"},
};

}  // namespace

std::span<const CommandSpec> debug_commands() { return kDebugCommands; }

}  // namespace ringkv::engine
