// DUMP and RESTORE: a key's value as Redis 7.0's serialized payload (rdb_value.h) and back.
// Argument checks, their order and every reply follow Redis 7.0.15 (cluster.c, restoreCommand).
#include "engine/commands/dump.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/commands/string_ops.h"
#include "engine/keyspace/access.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/rdb_value.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

namespace err = protocol::err;

constexpr std::string_view kBusyKey = "BUSYKEY Target key name already exists.";
constexpr std::string_view kBadPayload = "ERR DUMP payload version or checksum are wrong";
constexpr std::string_view kBadData = "ERR Bad data format";
constexpr std::string_view kBadTtl = "ERR Invalid TTL value, must be >= 0";
constexpr std::string_view kBadIdletime = "ERR Invalid IDLETIME value, must be >= 0";
constexpr std::string_view kBadFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255";

// RESTORE's options after the payload.
struct RestoreOptions {
  bool replace = false;
  bool absttl = false;
  int64_t idletime = -1;  // seconds; -1 when not given
  int64_t freq = -1;      // -1 when not given
};

// Parses the options as Redis does: IDLETIME and FREQ exclude each other (the second one given
// is a syntax error), a value error is reported as soon as it is met. Returns false with the
// reply already written.
bool parse_restore_options(CommandContext& ctx, RestoreOptions& opts) {
  const auto& argv = ctx.argv;
  for (size_t j = 4; j < argv.size(); ++j) {
    const bool has_value = j + 1 < argv.size();
    if (equals_ignore_case(argv[j], "replace")) {
      opts.replace = true;
    } else if (equals_ignore_case(argv[j], "absttl")) {
      opts.absttl = true;
    } else if (equals_ignore_case(argv[j], "idletime") && has_value && opts.freq == -1) {
      if (!parse_int64(argv[j + 1], opts.idletime)) {
        ctx.reply.error(err::kNotInteger);
        return false;
      }
      if (opts.idletime < 0) {
        ctx.reply.error(kBadIdletime);
        return false;
      }
      ++j;
    } else if (equals_ignore_case(argv[j], "freq") && has_value && opts.idletime == -1) {
      if (!parse_int64(argv[j + 1], opts.freq)) {
        ctx.reply.error(err::kNotInteger);
        return false;
      }
      if (opts.freq < 0 || opts.freq > 255) {
        ctx.reply.error(kBadFreq);
        return false;
      }
      ++j;
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  return true;
}

}  // namespace

void cmd_dump(CommandContext& ctx) {
  const Entry* e = ctx.store.lookup(ctx.argv[1]);
  if (e == nullptr) {
    ctx.reply.null();
    return;
  }
  ctx.reply.bulk(dump_payload(*e));
}

void cmd_restore(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  const std::string_view payload = ctx.argv[3];
  RestoreOptions opts;
  if (!parse_restore_options(ctx, opts)) return;
  if (!opts.replace && ctx.store.peek(key) != nullptr) {
    ctx.reply.error(kBusyKey);
    return;
  }
  int64_t ttl = 0;
  if (!parse_int64(ctx.argv[2], ttl)) {
    ctx.reply.error(err::kNotInteger);
    return;
  }
  if (ttl < 0) {
    ctx.reply.error(kBadTtl);
    return;
  }
  if (!verify_dump_payload(payload)) {
    ctx.reply.error(kBadPayload);
    return;
  }
  // Redis reads the value from the whole payload, footer included.
  DecodedValue value;
  if (!decode_value(payload, value)) {
    ctx.reply.error(kBadData);
    return;
  }
  const bool deleted = opts.replace && ctx.store.erase(key);
  int64_t expire_at = -1;
  if (ttl != 0) {
    // Wraps like Redis's ttl += mstime() for absurd TTLs (a wrapped time has passed).
    expire_at = opts.absttl ? ttl
                            : static_cast<int64_t>(static_cast<uint64_t>(ttl) +
                                                   static_cast<uint64_t>(ctx.store.now()));
    if (ctx.store.already_expired(expire_at)) {
      if (deleted) {
        ctx.propagate_as({"DEL", key});
        ctx.key_modified(key);
        ctx.notify(common::kNotifyGeneric, "del", key);
      }
      ctx.reply.ok();
      return;
    }
  }
  const ValueType type = value.type;
  store_decoded(ctx.store, key, std::move(value), expire_at);
  set_loaded_access(ctx.store, key, opts.idletime, opts.freq);
  if (expire_at >= 0 && !opts.absttl) {
    // Logged with the absolute time, so replaying it later restores the same expiry.
    std::vector<std::string> argv(ctx.argv.begin(), ctx.argv.end());
    argv[2] = std::to_string(expire_at);
    argv.emplace_back("ABSTTL");
    ctx.propagate_as(std::move(argv));
  }
  if (type == ValueType::kList || type == ValueType::kZSet || type == ValueType::kStream) {
    ctx.key_ready(key);
  }
  ctx.key_modified(key);
  ctx.notify(common::kNotifyGeneric, "restore", key);
  ctx.reply.ok();
}

namespace {

constexpr CommandSpec kRestoreRow = {
    .name = "restore",
    .arity = -4,
    .flags = kWrite | kDenyOom,
    .handler = cmd_restore,
    .group = "generic",
    .since = "2.6.0",
    .summary = "Create a key using the provided serialized value, previously obtained using DUMP.",
    .complexity =
        "O(1) to create the new key and additional O(N*M) to reconstruct the serialized "
        "value, where N is the number of Redis objects composing the value and M their "
        "average size. For small string values the time complexity is thus O(1)+O(1*M) "
        "where M is small, so simply O(1). However for sorted set values the complexity "
        "is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
    .syntax =
        "key<key> ttl<integer> serialized-value [REPLACE]@3.0.0 [ABSTTL]@5.0.0 "
        "[IDLETIME=seconds<integer>]@5.0.0 [FREQ=frequency<integer>]@5.0.0",
    .acl_categories = "keyspace write slow dangerous",
    .key_specs = "OW update|1|0|1|0",
    .history =
        "3.0.0|Added the `REPLACE` modifier.\n5.0.0|Added the `ABSTTL` modifier.\n5.0.0|"
        "Added the `IDLETIME` and `FREQ` options."};

// RESTORE-ASKING: what a Redis Cluster node sends a slot's importing node; outside a cluster,
// RESTORE under another name.
constexpr CommandSpec restore_asking_row() {
  CommandSpec row = kRestoreRow;
  row.name = "restore-asking";
  row.flags |= kAsking;
  row.group = "server";
  row.since = "3.0.0";
  row.summary = "An internal command for migrating keys in a cluster";
  row.doc_flags = "syscmd";
  return row;
}

constexpr CommandSpec kDumpCommands[] = {
    {.name = "dump",
     .arity = 2,
     .flags = kReadonly,
     .handler = cmd_dump,
     .group = "generic",
     .since = "2.6.0",
     .summary = "Return a serialized version of the value stored at the specified key.",
     .complexity = "O(1) to access the key and additional O(N*M) to serialize it, where N is the "
                   "number of Redis objects composing the value and M their average size. For "
                   "small string values the time complexity is thus O(1)+O(1*M) where M is small, "
                   "so simply O(1).",
     .syntax = "key<key>",
     .acl_categories = "keyspace read slow",
     .tips = "nondeterministic_output",
     .key_specs = "RO access|1|0|1|0"},
    kRestoreRow,
    restore_asking_row(),
};

}  // namespace

std::span<const CommandSpec> dump_commands() { return kDumpCommands; }

}  // namespace ringkv::engine
