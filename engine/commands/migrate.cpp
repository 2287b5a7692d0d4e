// MIGRATE: keys sent to another server as RESTOREs of their DUMP payloads, then deleted here
// (unless COPY), as Redis 7.0.15's migrateCommand (cluster.c) does it: synchronously, each write
// and read waiting at most the timeout, on a connection kept for the next MIGRATE to the same
// target; one retry on a fresh connection when the cached one failed before the target answered
// anything; the reply, its errors and their order as Redis's. Deleted keys are logged (and
// replicated) as a DEL of those keys.
#include "engine/commands/migrate.h"

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/entry.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/rdb_value.h"
#include "protocol/errors.h"
#include "protocol/request_writer.h"

namespace ringkv::engine {
namespace {

namespace err = protocol::err;

// Redis writes the request in chunks of 64 KB, each with the whole timeout.
constexpr size_t kWriteChunk = 64 * 1024;

// MIGRATE's options after the timeout, as Redis parses them.
struct MigrateOptions {
  bool copy = false;
  bool replace = false;
  std::optional<std::string_view> username;
  std::optional<std::string_view> password;
  size_t first_key = 3;
  size_t num_keys = 1;
};

// Parses the options; false with the error replied.
bool parse_options(CommandContext& ctx, MigrateOptions& o) {
  const auto& argv = ctx.argv;
  for (size_t j = 6; j < argv.size(); ++j) {
    const size_t more = argv.size() - 1 - j;
    if (is(argv[j], "copy")) {
      o.copy = true;
    } else if (is(argv[j], "replace")) {
      o.replace = true;
    } else if (is(argv[j], "auth")) {
      if (more < 1) {
        ctx.reply.error(err::kSyntax);
        return false;
      }
      o.password = argv[++j];
    } else if (is(argv[j], "auth2")) {
      if (more < 2) {
        ctx.reply.error(err::kSyntax);
        return false;
      }
      o.username = argv[++j];
      o.password = argv[++j];
    } else if (is(argv[j], "keys")) {
      if (!argv[3].empty()) {
        ctx.reply.error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return false;
      }
      o.first_key = j + 1;
      o.num_keys = argv.size() - j - 1;
      break;  // every remaining argument is a key
    } else {
      ctx.reply.error(err::kSyntax);
      return false;
    }
  }
  return true;
}

// A key to send and its value as it was looked up.
struct Outgoing {
  std::string_view key;
  const Entry* entry;
};

}  // namespace

namespace {

// Redis's walk over MIGRATE's options (migrateGetKeys): from argument 6 to KEYS, AUTH followed by
// a password, AUTH2 by a username and a password. Calls on_secret(position) for each of those
// values; returns the position of KEYS, 0 without it.
template <typename OnSecret>
size_t walk_options(std::span<const std::string_view> argv, OnSecret&& on_secret) {
  for (size_t i = 6; i < argv.size(); ++i) {
    if (is(argv[i], "keys")) return i;
    const size_t values = is(argv[i], "auth") ? 1 : is(argv[i], "auth2") ? 2 : 0;
    for (size_t v = 1; v <= values && i + v < argv.size(); ++v) on_secret(i + v);
    i += values;
  }
  return 0;
}

}  // namespace

void migrate_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions) {
  // The key argument, or what follows KEYS (nothing when the key argument is not empty then).
  size_t first = 3;
  size_t num = 1;
  if (const size_t keys = walk_options(argv, [](size_t) {}); keys != 0) {
    if (!argv[3].empty()) return;
    first = keys + 1;
    num = argv.size() - first;
  }
  for (size_t i = 0; i < num && first + i < argv.size(); ++i) positions.push_back(first + i);
}

bool migrate_secret(std::span<const std::string_view> argv, size_t i) {
  bool secret = false;
  walk_options(argv, [&](size_t position) { secret = secret || position == i; });
  return secret;
}

void cmd_migrate(CommandContext& ctx) {
  const auto& argv = ctx.argv;
  const std::string_view host = argv[1];
  const std::string_view port = argv[2];
  MigrateOptions o;
  if (!parse_options(ctx, o)) return;
  int64_t timeout = 0;
  int64_t db = 0;
  if (!int64_or_reply(ctx, argv[5], timeout) || !int64_or_reply(ctx, argv[4], db)) return;
  if (timeout <= 0) timeout = 1000;

  // The keys that are here. None: +NOKEY (they may just have expired), not an error.
  std::vector<Outgoing> keys;
  for (size_t j = 0; j < o.num_keys; ++j) {
    const std::string_view key = argv[o.first_key + j];
    if (const Entry* e = ctx.store.lookup(key); e != nullptr) keys.push_back({key, e});
  }
  if (keys.empty()) {
    ctx.reply.simple("NOKEY");
    return;
  }

  bool may_retry = true;
  for (;;) {
    MigrateLink* link =
        ctx.server == nullptr ? nullptr : ctx.server->migrate_link(host, port, timeout);
    if (link == nullptr) {
      ctx.reply.error("IOERR error or timeout connecting to the client");
      return;
    }
    std::string request;
    if (o.password) {
      protocol::append_request_header(request, o.username ? 3 : 2);
      protocol::append_request_bulk(request, "AUTH");
      if (o.username) protocol::append_request_bulk(request, *o.username);
      protocol::append_request_bulk(request, *o.password);
    }
    const bool select = link->last_db != db;
    if (select) {
      protocol::append_request_header(request, 2);
      protocol::append_request_bulk(request, "SELECT");
      protocol::append_request_bulk(request, std::to_string(db));
    }
    // A key that expired since it was looked up is left out; a TTL left is at least 1 ms.
    const int64_t now = ctx.store.now();
    size_t sent = 0;
    for (const Outgoing& k : keys) {
      int64_t ttl = 0;
      if (const int64_t at = k.entry->expire_at(); at != -1) {
        ttl = at - now;
        if (ttl < 0) continue;
        if (ttl < 1) ttl = 1;
      }
      keys[sent++] = k;
      protocol::append_request_header(request, o.replace ? 5 : 4);
      protocol::append_request_bulk(request, "RESTORE");
      protocol::append_request_bulk(request, k.key);
      protocol::append_request_bulk(request, std::to_string(ttl));
      protocol::append_request_bulk(request, dump_payload(*k.entry));
      if (o.replace) protocol::append_request_bulk(request, "REPLACE");
    }
    keys.resize(sent);

    bool write_error = false;
    bool socket_err = false;
    int io_errno = 0;
    for (size_t pos = 0; pos < request.size() && !socket_err; pos += kWriteChunk) {
      const std::string_view chunk = std::string_view(request).substr(pos, kWriteChunk);
      if (!link->write(chunk, timeout)) {
        io_errno = errno;
        write_error = socket_err = true;
      }
    }
    std::string auth_reply;
    std::string select_reply;
    if (!socket_err && o.password && !link->read_line(auth_reply, timeout)) {
      io_errno = errno;
      socket_err = true;
    }
    if (!socket_err && select && !link->read_line(select_reply, timeout)) {
      io_errno = errno;
      socket_err = true;
    }
    bool rewritten = false;
    if (!socket_err) {
      bool error_from_target = false;
      bool socket_error = false;
      std::vector<std::string> del{"DEL"};
      std::string reply;
      size_t j = 0;
      for (; j < keys.size(); ++j) {
        if (!link->read_line(reply, timeout)) {
          io_errno = errno;
          socket_error = true;
          break;
        }
        const bool auth_failed = o.password && auth_reply.starts_with('-');
        const bool select_failed = select && select_reply.starts_with('-');
        if (auth_failed || select_failed || reply.starts_with('-')) {
          if (!error_from_target) {
            // The target's database is not known any more: the next MIGRATE selects it.
            link->last_db = -1;
            const std::string& line = auth_failed     ? auth_reply
                                      : select_failed ? select_reply
                                                      : reply;
            ctx.reply.error("ERR Target instance replied with error: " + line.substr(1));
            error_from_target = true;
          }
        } else if (!o.copy) {
          ctx.store.erase(keys[j].key);
          ctx.key_modified(keys[j].key);
          ctx.notify(common::kNotifyGeneric, "del", keys[j].key);
          del.emplace_back(keys[j].key);
        }
      }
      // Nothing was answered on a connection kept from before: most likely the target closed
      // it, so it is tried once more on a new one (not after a timeout).
      const bool retry_now =
          !error_from_target && socket_error && j == 0 && may_retry && io_errno != ETIMEDOUT;
      if (!retry_now) {
        if (socket_error) ctx.server->migrate_close(host, port);
        if (del.size() > 1) {
          ctx.propagate_as(std::move(del));
          rewritten = true;
        }
        if (!error_from_target && socket_error) {
          may_retry = false;
        } else {
          if (!error_from_target) {
            link->last_db = db;
            ctx.reply.ok();
          }
          return;
        }
      }
    }
    // The connection failed: closed, and tried once more unless it timed out.
    if (!rewritten) ctx.server->migrate_close(host, port);
    if (io_errno != ETIMEDOUT && may_retry) {
      may_retry = false;
      continue;
    }
    ctx.reply.error(write_error ? "IOERR error or timeout writing to target instance"
                                : "IOERR error or timeout reading to target instance");
    return;
  }
}

namespace {

constexpr CommandSpec kMigrateCommands[] = {
    {.name = "migrate",
     .arity = -6,
     .flags = kWrite,
     .handler = cmd_migrate,
     .group = "generic",
     .since = "2.6.0",
     .summary = "Atomically transfer a key from a Redis instance to another one.",
     .complexity = "This command actually executes a DUMP+DEL in the source instance, and a "
                   "RESTORE in the target instance. See the pages of these commands for time "
                   "complexity. Also an O(N) data transfer between the two instances is "
                   "performed.",
     .syntax = "host port<integer> (key_or_empty_string: key<key> | empty_string:\"\") "
               "destination-db<integer> timeout<integer> [COPY]@3.0.0 [REPLACE]@3.0.0 "
               "[authentication: [AUTH=password]@4.0.7 | "
               "[AUTH2=username_password: username password]@6.0.0] [KEYS=key<key:1>...]@3.0.6",
     .acl_categories = "keyspace write slow dangerous",
     .tips = "nondeterministic_output",
     .key_specs = "RW access delete|3|0|1|0;RW access delete incomplete|keyword:KEYS:-2|-1|1|0",
     .history = "3.0.0|Added the `COPY` and `REPLACE` options.\n3.0.6|Added the `KEYS` option.\n"
                "4.0.7|Added the `AUTH` option.\n6.0.0|Added the `AUTH2` option.",
     .find_keys = migrate_keys},
};

}  // namespace

std::span<const CommandSpec> migrate_commands() { return kMigrateCommands; }

}  // namespace ringkv::engine
