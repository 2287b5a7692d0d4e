// Connection commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH, RESET and the CLIENT family.
// Per-connection state lives behind ctx.client (ClientSession); other clients are reached through
// ctx.server (ServerControl). Replies and error texts are Redis 7.0.15's.
#include "engine/commands/connection.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include "common/version.h"
#include "engine/acl/acl_users.h"
#include "engine/command.h"
#include "engine/commands/acl.h"
#include "engine/commands/client_control.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace {

using protocol::RespVersion;

// HELLO reports the Redis protocol level ringkv implements; INFO carries ringkv's own version.

constexpr std::string_view kBadClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";
constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
constexpr std::string_view kHelloNoAuth =
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH "
    "<user> <pass> option can be used to authenticate the client and select the RESP protocol "
    "version at the same time";
constexpr std::string_view kDefaultUser = "default";

// Client names must be printable ASCII without spaces, so CLIENT LIST stays splittable.
bool valid_client_name(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '!' && c <= '~'; });
}

// A TYPE argument: Redis's types, and "peer" for ringkv's links from other nodes. ringkv has
// no master or replica links, so those types match no connection.
enum class ClientType { kUnknown, kNone, kKind };

ClientType client_type(std::string_view name, std::optional<ClientKind>& kind) {
  if (equals_ignore_case(name, "normal")) {
    kind = ClientKind::kNormal;
  } else if (equals_ignore_case(name, "pubsub")) {
    kind = ClientKind::kPubSub;
  } else if (equals_ignore_case(name, "peer")) {
    kind = ClientKind::kPeer;
  } else if (equals_ignore_case(name, "master") || equals_ignore_case(name, "replica") ||
             equals_ignore_case(name, "slave")) {
    return ClientType::kNone;
  } else {
    return ClientType::kUnknown;
  }
  return ClientType::kKind;
}

// Authenticates the client as `user` with `password`, as Redis's ACLAuthenticateUser: returns
// false (leaving the client as it was, and logging the attempt in the ACL LOG) when there is no
// such user, it is off, or the password is not one of its own.
bool authenticate(CommandContext& ctx, std::string_view user, std::string_view password) {
  acl::Users* users = ctx.server->acl_users();
  std::shared_ptr<acl::User> found = users->find(user);
  if (found && found->enabled() && found->password_matches(password)) {
    ctx.client->set_user(std::move(found));
    ctx.client->set_authenticated(true);
    return true;
  }
  log_acl_denial(ctx, acl::Denial::kAuth, ctx.argv[0], user);
  return false;
}

std::string quoted_error(std::string_view prefix, std::string_view arg) {
  std::string error(prefix);
  error.push_back('\'');
  error.append(arg);
  error.push_back('\'');
  return error;
}

}  // namespace

static void cmd_ping(CommandContext& ctx) {
  if (ctx.argv.size() > 2) {
    ctx.reply.error("ERR wrong number of arguments for 'ping' command");
  } else if (ctx.argv.size() == 2) {
    ctx.reply.bulk(ctx.argv[1]);
  } else {
    ctx.reply.pong();
  }
}

static void cmd_echo(CommandContext& ctx) { ctx.reply.bulk(ctx.argv[1]); }

static void cmd_quit(CommandContext& ctx) {
  ctx.reply.ok();
  ctx.client->close_after_reply();
}

static void cmd_select(CommandContext& ctx) {
  int index = 0;
  if (!int_or_reply(ctx, ctx.argv[1], index)) return;
  if (database_or_reply(ctx, index) == nullptr) return;
  if (ctx.client != nullptr) ctx.client->set_db(index);
  ctx.reply.ok();
}

static void cmd_hello(CommandContext& ctx) {
  int64_t version = 0;
  size_t next = 1;
  if (ctx.argv.size() >= 2) {
    if (!parse_int64(ctx.argv[next++], version)) {
      ctx.reply.error("ERR Protocol version is not an integer or out of range");
      return;
    }
    if (version < 2 || version > 3) {
      ctx.reply.error("NOPROTO unsupported protocol version");
      return;
    }
  }
  std::string_view username, password, clientname;
  bool auth = false, setname = false;
  for (size_t j = next; j < ctx.argv.size(); ++j) {
    size_t more = ctx.argv.size() - 1 - j;
    if (equals_ignore_case(ctx.argv[j], "auth") && more >= 2) {
      auth = true;
      username = ctx.argv[j + 1];
      password = ctx.argv[j + 2];
      j += 2;
    } else if (equals_ignore_case(ctx.argv[j], "setname") && more >= 1) {
      setname = true;
      clientname = ctx.argv[j + 1];
      j += 1;
    } else {
      ctx.reply.error(quoted_error("ERR Syntax error in HELLO option ", ctx.argv[j]));
      return;
    }
  }
  if (auth && !authenticate(ctx, username, password)) {
    ctx.reply.error(kWrongPass);
    return;
  }
  if (!ctx.client->authenticated()) {
    ctx.reply.error(kHelloNoAuth);
    return;
  }
  if (setname) {
    if (!valid_client_name(clientname)) {
      ctx.reply.error(kBadClientName);
      return;
    }
    ctx.client->set_name(clientname);
  }
  if (version != 0) {
    auto v = static_cast<RespVersion>(version);
    ctx.client->set_resp(v);
    ctx.reply.set_version(v);
  }
  ctx.reply.map(7);
  ctx.reply.bulk("server");
  ctx.reply.bulk("redis");
  ctx.reply.bulk("version");
  ctx.reply.bulk(common::kRedisVersion);
  ctx.reply.bulk("proto");
  ctx.reply.integer(static_cast<int64_t>(ctx.client->resp()));
  ctx.reply.bulk("id");
  ctx.reply.integer(static_cast<int64_t>(ctx.client->id()));
  ctx.reply.bulk("mode");
  ctx.reply.bulk("standalone");
  ctx.reply.bulk("role");
  ctx.reply.bulk("master");
  ctx.reply.bulk("modules");
  ctx.reply.array(0);
}

static void cmd_auth(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.error(protocol::err::kSyntax);
  } else if (ctx.argv.size() == 2 && ctx.server->acl_users()->default_user()->nopass()) {
    ctx.reply.error(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
  } else {
    const bool named = ctx.argv.size() == 3;
    if (authenticate(ctx, named ? ctx.argv[1] : kDefaultUser, ctx.argv[named ? 2 : 1])) {
      ctx.reply.ok();
    } else {
      ctx.reply.error(kWrongPass);
    }
  }
}

static void cmd_reset(CommandContext& ctx) {
  ctx.client->reset_state();
  ctx.reply.set_version(RespVersion::kResp2);
  ctx.reply.simple("RESET");
}

static void cmd_client_id(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(ctx.client->id()));
}

static void cmd_client_setname(CommandContext& ctx) {
  if (!valid_client_name(ctx.argv[2])) {
    ctx.reply.error(kBadClientName);
    return;
  }
  ctx.client->set_name(ctx.argv[2]);
  ctx.reply.ok();
}

static void cmd_client_getname(CommandContext& ctx) {
  std::string_view name = ctx.client->name();
  if (name.empty()) {
    ctx.reply.null();
  } else {
    ctx.reply.bulk(name);
  }
}

static void cmd_client_list(CommandContext& ctx) {
  std::vector<uint64_t> ids;
  std::optional<ClientKind> kind;
  if (ctx.argv.size() == 4 && equals_ignore_case(ctx.argv[2], "type")) {
    ClientType type = client_type(ctx.argv[3], kind);
    if (type == ClientType::kUnknown) {
      ctx.reply.error(quoted_error("ERR Unknown client type ", ctx.argv[3]));
      return;
    }
    if (type == ClientType::kNone) {
      ctx.reply.verbatim("");
      return;
    }
  } else if (ctx.argv.size() > 3 && equals_ignore_case(ctx.argv[2], "id")) {
    for (size_t i = 3; i < ctx.argv.size(); ++i) {
      int64_t id = 0;
      if (!parse_int64(ctx.argv[i], id)) {
        ctx.reply.error("ERR Invalid client ID");
        return;
      }
      // Ids below 1 name no client; keep the list non-empty so it still filters.
      ids.push_back(id < 1 ? 0 : static_cast<uint64_t>(id));
    }
  } else if (ctx.argv.size() != 2) {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  ctx.reply.verbatim(ctx.server->client_list(ids, kind));
}

static void cmd_client_info(CommandContext& ctx) {
  std::string line = ctx.client->info_line();
  line.push_back('\n');
  ctx.reply.verbatim(line);
}

static void cmd_client_kill(CommandContext& ctx) {
  ClientKillFilter filter;
  filter.self_id = ctx.client->id();
  bool matches_none = false;  // TYPE master or replica: no ringkv connection can match
  if (ctx.argv.size() == 3) {
    // The old form, CLIENT KILL ip:port, may kill the caller itself.
    filter.addr = ctx.argv[2];
    filter.skipme = false;
  } else {
    for (size_t i = 2; i < ctx.argv.size(); i += 2) {
      // Options are checked in order, so an error in an earlier one wins over a missing value.
      if (i + 1 == ctx.argv.size()) {
        ctx.reply.error(protocol::err::kSyntax);
        return;
      }
      std::string_view opt = ctx.argv[i];
      std::string_view value = ctx.argv[i + 1];
      if (equals_ignore_case(opt, "id")) {
        int64_t id = 0;
        if (!parse_int64(value, id) || id < 1) {
          ctx.reply.error("ERR client-id should be greater than 0");
          return;
        }
        filter.id = static_cast<uint64_t>(id);
      } else if (equals_ignore_case(opt, "type")) {
        ClientType type = client_type(value, filter.kind);
        if (type == ClientType::kUnknown) {
          ctx.reply.error(quoted_error("ERR Unknown client type ", value));
          return;
        }
        matches_none = type == ClientType::kNone;
      } else if (equals_ignore_case(opt, "addr")) {
        filter.addr = value;
      } else if (equals_ignore_case(opt, "laddr")) {
        filter.laddr = value;
      } else if (equals_ignore_case(opt, "user")) {
        acl::Users* users = ctx.server->acl_users();
        const std::shared_ptr<acl::User> user = users ? users->find(value) : nullptr;
        if (!user) {
          ctx.reply.error(quoted_error("ERR No such user ", value));
          return;
        }
        filter.user = user.get();
      } else if (equals_ignore_case(opt, "skipme")) {
        if (equals_ignore_case(value, "yes")) {
          filter.skipme = true;
        } else if (equals_ignore_case(value, "no")) {
          filter.skipme = false;
        } else {
          ctx.reply.error(protocol::err::kSyntax);
          return;
        }
      } else {
        ctx.reply.error(protocol::err::kSyntax);
        return;
      }
    }
  }
  size_t killed = matches_none ? 0 : ctx.server->kill_clients(filter);
  if (ctx.argv.size() == 3) {
    if (killed == 0) {
      ctx.reply.error("ERR No such client");
    } else {
      ctx.reply.ok();
    }
  } else {
    ctx.reply.integer(static_cast<int64_t>(killed));
  }
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kClientSubcommands[] = {
    {.name = "id",
     .arity = 2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_id,
     .group = "connection",
     .since = "5.0.0",
     .summary = "Returns the client ID for the current connection",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow connection"},
    {.name = "setname",
     .arity = 3,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_setname,
     .group = "connection",
     .since = "2.6.9",
     .summary = "Set the current connection name",
     .complexity = "O(1)",
     .syntax = "connection-name",
     .acl_categories = "slow connection"},
    {.name = "getname",
     .arity = 2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_getname,
     .group = "connection",
     .since = "2.6.9",
     .summary = "Get the current connection name",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow connection"},
    {.name = "list",
     .arity = -2,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_client_list,
     .group = "connection",
     .since = "2.4.0",
     .summary = "Get the list of client connections",
     .complexity = "O(N) where N is the number of client connections",
     .syntax = "[TYPE=normal_master_replica_pubsub: NORMAL | MASTER | REPLICA | PUBSUB]@5.0.0 "
               "[ID=id: client-id<integer>...]@6.2.0",
     .acl_categories = "admin slow dangerous connection",
     .tips = "nondeterministic_output",
     .history = "2.8.12|Added unique client `id` field.\n5.0.0|Added optional `TYPE` "
                "filter.\n6.0.0|Added `user` field.\n6.2.0|Added `argv-mem`, `tot-mem`, `laddr` "
                "and `redir` fields and the optional `ID` filter.\n7.0.0|Added `resp`, "
                "`multi-mem`, `rbs` and `rbp` fields.\n7.0.3|Added `ssub` field."},
    {.name = "info",
     .arity = 2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_info,
     .group = "connection",
     .since = "6.2.0",
     .summary = "Returns information about the current client connection.",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow connection",
     .tips = "nondeterministic_output"},
    {.name = "kill",
     .arity = -3,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_client_kill,
     .group = "connection",
     .since = "2.4.0",
     .summary = "Kill the connection of a client",
     .complexity = "O(N) where N is the number of client connections",
     .syntax = "(filter: ip:port~2.8.12 | (new-format: [ID=client-id<integer>]@2.8.12 | "
               "[TYPE=normal_master_slave_pubsub: NORMAL | MASTER@3.2.0 | SLAVE | REPLICA@5.0.0 | "
               "PUBSUB]@2.8.12 | [USER=username] | [ADDR=ip:port] | [LADDR=ip:port]@6.2.0 | "
               "[SKIPME=yes/no])...)",
     .acl_categories = "admin slow dangerous connection",
     .history = "2.8.12|Added new filter format.\n2.8.12|`ID` option.\n3.2.0|Added `master` type "
                "in for `TYPE` option.\n5.0.0|Replaced `slave` `TYPE` with `replica`. `slave` "
                "still supported for backward compatibility.\n6.2.0|`LADDR` option."},
    {.name = "reply",
     .arity = 3,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_reply,
     .group = "connection",
     .since = "3.2.0",
     .summary = "Instruct the server whether to reply to commands",
     .complexity = "O(1)",
     .syntax = "(on_off_skip: ON | OFF | SKIP)",
     .acl_categories = "slow connection"},
    {.name = "pause",
     .arity = -3,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_client_pause,
     .group = "connection",
     .since = "2.9.50",
     .summary = "Stop processing commands from clients for some time",
     .complexity = "O(1)",
     .syntax = "timeout<integer> [mode: WRITE | ALL]@6.2.0",
     .acl_categories = "admin slow dangerous connection",
     .history = "6.2.0|`CLIENT PAUSE WRITE` mode added along with the `mode` option."},
    {.name = "unpause",
     .arity = 2,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_client_unpause,
     .group = "connection",
     .since = "6.2.0",
     .summary = "Resume processing of clients that were paused",
     .complexity = "O(N) Where N is the number of paused clients",
     .syntax = "",
     .acl_categories = "admin slow dangerous connection"},
    {.name = "no-evict",
     .arity = 3,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_client_no_evict,
     .group = "connection",
     .since = "7.0.0",
     .summary = "Set client eviction mode for the current connection",
     .complexity = "O(1)",
     .syntax = "(enabled: ON | OFF)",
     .acl_categories = "admin slow dangerous connection"},
    {.name = "unblock",
     .arity = -3,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_client_unblock,
     .group = "connection",
     .since = "5.0.0",
     .summary = "Unblock a client blocked in a blocking command from a different connection",
     .complexity = "O(log N) where N is the number of client connections",
     .syntax = "client-id<integer> [timeout_error: TIMEOUT | ERROR]",
     .acl_categories = "admin slow dangerous connection"},
    {.name = "tracking",
     .arity = -3,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_tracking,
     .group = "connection",
     .since = "6.0.0",
     .summary = "Enable or disable server assisted client side caching support",
     .complexity = "O(1). Some options may introduce additional complexity.",
     .syntax = "(status: ON | OFF) [REDIRECT=client-id<integer>] [PREFIX=prefix]...+ [BCAST] "
               "[OPTIN] [OPTOUT] [NOLOOP]",
     .acl_categories = "slow connection"},
    {.name = "caching",
     .arity = 3,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_caching,
     .group = "connection",
     .since = "6.0.0",
     .summary = "Instruct the server about tracking or not keys in the next request",
     .complexity = "O(1)",
     .syntax = "(mode: YES | NO)",
     .acl_categories = "slow connection"},
    {.name = "getredir",
     .arity = 2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_getredir,
     .group = "connection",
     .since = "6.0.0",
     .summary = "Get tracking notifications redirection client ID if any",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow connection"},
    {.name = "trackinginfo",
     .arity = 2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_client_trackinginfo,
     .group = "connection",
     .since = "6.2.0",
     .summary =
         "Return information about server assisted client side caching for the current connection",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow connection"},
    help_row(cmd_client_help, "connection", "5.0.0", "slow connection"),
};

constexpr CommandSpec kConnectionCommands[] = {
    {.name = "ping",
     .arity = -1,
     .flags = kSubscribedOk | kFast,
     .handler = cmd_ping,
     .group = "connection",
     .since = "1.0.0",
     .summary = "Ping the server",
     .complexity = "O(1)",
     .syntax = "[message]",
     .acl_categories = "fast connection",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "echo",
     .arity = 2,
     .flags = kLoading | kStale | kFast,
     .handler = cmd_echo,
     .group = "connection",
     .since = "1.0.0",
     .summary = "Echo the given string",
     .complexity = "O(1)",
     .syntax = "message",
     .acl_categories = "fast connection"},
    {.name = "quit",
     .arity = -1,
     .flags = kSubscribedOk | kRunsInMulti | kNoscript | kLoading | kStale | kFast | kNoAuth |
              kAllowBusy,
     .handler = cmd_quit,
     .group = "connection",
     .since = "1.0.0",
     .summary = "Close the connection",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "fast connection"},
    {.name = "select",
     .arity = 2,
     .flags = kLoading | kStale | kFast,
     .handler = cmd_select,
     .group = "connection",
     .since = "1.0.0",
     .summary = "Change the selected database for the current connection",
     .complexity = "O(1)",
     .syntax = "index<integer>",
     .acl_categories = "fast connection"},
    {.name = "hello",
     .arity = -1,
     .flags = kNoscript | kLoading | kStale | kFast | kNoAuth | kAllowBusy,
     .handler = cmd_hello,
     .group = "connection",
     .since = "6.0.0",
     .summary = "Handshake with Redis",
     .complexity = "O(1)",
     .syntax = "[arguments: protover<integer> [AUTH=username_password: username password] "
               "[SETNAME=clientname]]",
     .acl_categories = "fast connection",
     .history = "6.2.0|`protover` made optional; when called without arguments the command reports "
                "the current connection's context."},
    {.name = "auth",
     .arity = -2,
     .flags = kNoscript | kLoading | kStale | kFast | kNoAuth | kAllowBusy,
     .handler = cmd_auth,
     .group = "connection",
     .since = "1.0.0",
     .summary = "Authenticate to the server",
     .complexity = "O(N) where N is the number of passwords defined for the user",
     .syntax = "[username]@6.0.0 password",
     .acl_categories = "fast connection",
     .history = "6.0.0|Added ACL style (username and password)."},
    {.name = "reset",
     .arity = 1,
     .flags = kSubscribedOk | kRunsInMulti | kNoscript | kLoading | kStale | kFast | kNoAuth |
              kAllowBusy,
     .handler = cmd_reset,
     .group = "connection",
     .since = "6.2.0",
     .summary = "Reset the connection",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "fast connection"},
    container_row("client", "connection", "2.4.0", "A container for client connection commands",
                  kClientSubcommands),
};

}  // namespace

std::span<const CommandSpec> connection_commands() { return kConnectionCommands; }

}  // namespace ringkv::engine
