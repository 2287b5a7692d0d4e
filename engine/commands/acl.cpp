// The ACL command family and the ACL LOG, with Redis 7.0.15's replies and error texts. The users
// themselves live in engine/acl/; the server owns them (ServerControl::acl_users). In a cluster
// SETUSER, DELUSER and LOAD are fanned out to every node (kClusterWide), each applying them to
// its own users, so a user exists on every member; the log stays per node.
#include "engine/commands/acl.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/secret.h"
#include "engine/acl/acl_users.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kAclHelp[] = {
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
};

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.";

constexpr int64_t kGenpassMaxBits = 4096;

std::string_view reason_name(acl::Denial reason) {
  switch (reason) {
    case acl::Denial::kCommand:
      return "command";
    case acl::Denial::kKey:
      return "key";
    case acl::Denial::kChannel:
      return "channel";
    case acl::Denial::kAuth:
      return "auth";
    default:
      return "unknown";
  }
}

std::string_view context_name(AclContext context) {
  switch (context) {
    case AclContext::kMulti:
      return "multi";
    case AclContext::kLua:
      return "lua";
    default:
      return "toplevel";
  }
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

acl::Users& users(CommandContext& ctx) { return *ctx.server->acl_users(); }

void cmd_acl_setuser(CommandContext& ctx) {
  const std::string_view name = ctx.argv[2];
  if (!acl::valid_user_name(name)) {
    ctx.reply.error("ERR Usernames can't contain spaces or null characters");
    return;
  }
  std::vector<std::string> ops;
  size_t bad = 0;
  const std::span<const std::string_view> rules = ctx.argv.subspan(3);
  if (!acl::merge_selector_arguments(rules, ops, bad)) {
    ctx.reply.error("ERR Unmatched parenthesis in acl selector starting at '" +
                    std::string(rules[bad]) + "'.");
    return;
  }
  const bool existed = users(ctx).find(name) != nullptr;
  const std::string error = users(ctx).set_user(name, ops);
  if (!error.empty()) {
    ctx.reply.error(error);
    return;
  }
  // Subscribers whose channels the new rules no longer allow are disconnected.
  if (existed) ctx.server->user_channels_changed(*users(ctx).find(name));
  ctx.reply.ok();
}

void cmd_acl_deluser(CommandContext& ctx) {
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    if (ctx.argv[j] == "default") {
      ctx.reply.error("ERR The 'default' user cannot be removed");
      return;
    }
  }
  std::vector<std::shared_ptr<acl::User>> removed;
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    if (auto user = users(ctx).remove(ctx.argv[j])) removed.push_back(std::move(user));
  }
  std::vector<const acl::User*> gone;
  for (const auto& user : removed) gone.push_back(user.get());
  ctx.server->disconnect_users(gone, ctx.client);
  ctx.reply.integer(static_cast<int64_t>(removed.size()));
}

void reply_selector(protocol::ReplyWriter& reply, const acl::Selector& s) {
  reply.bulk("commands");
  reply.bulk(s.describe_commands());
  reply.bulk("keys");
  reply.bulk(s.describe_keys());
  reply.bulk("channels");
  reply.bulk(s.describe_channels());
}

void cmd_acl_getuser(CommandContext& ctx) {
  const std::shared_ptr<acl::User> user = users(ctx).find(ctx.argv[2]);
  if (!user) {
    ctx.reply.null();
    return;
  }
  ctx.reply.map(6);
  ctx.reply.bulk("flags");
  std::vector<std::string_view> flags;
  static constexpr std::pair<uint32_t, std::string_view> kFlags[] = {
      {acl::kUserOn, "on"},
      {acl::kUserOff, "off"},
      {acl::kUserNoPass, "nopass"},
      {acl::kUserSkipSanitize, "skip-sanitize-payload"},
      {acl::kUserSanitize, "sanitize-payload"}};
  for (const auto& [bit, flag] : kFlags) {
    if (user->flags() & bit) flags.push_back(flag);
  }
  ctx.reply.set(flags.size());
  for (std::string_view f : flags) ctx.reply.bulk(f);
  ctx.reply.bulk("passwords");
  ctx.reply.array(user->passwords().size());
  for (const std::string& hash : user->passwords()) ctx.reply.bulk(hash);
  reply_selector(ctx.reply, user->selectors()[0]);
  ctx.reply.bulk("selectors");
  ctx.reply.array(user->selectors().size() - 1);
  for (size_t i = 1; i < user->selectors().size(); ++i) {
    ctx.reply.map(3);
    reply_selector(ctx.reply, user->selectors()[i]);
  }
}

void cmd_acl_list(CommandContext& ctx) {
  ctx.reply.array(users(ctx).all().size());
  for (const auto& [name, user] : users(ctx).all()) {
    ctx.reply.bulk("user " + name + " " + user->describe());
  }
}

void cmd_acl_users(CommandContext& ctx) {
  ctx.reply.array(users(ctx).all().size());
  for (const auto& [name, user] : users(ctx).all()) ctx.reply.bulk(name);
}

void cmd_acl_whoami(CommandContext& ctx) {
  const acl::User* user = ctx.client->user();
  ctx.reply.bulk(user != nullptr ? std::string_view(user->name()) : "default");
}

void cmd_acl_load(CommandContext& ctx) {
  const std::string_view file = ctx.server->acl_file();
  if (file.empty()) {
    ctx.reply.error(kNoAclFile);
    return;
  }
  std::vector<std::shared_ptr<acl::User>> replaced;
  const std::string error = users(ctx).load_file(std::string(file), replaced);
  if (!error.empty()) {
    ctx.reply.error(error);
    return;
  }
  // As Redis: every user but default is a new object now, so their clients are disconnected.
  std::vector<const acl::User*> gone;
  for (const auto& user : replaced) gone.push_back(user.get());
  ctx.server->disconnect_users(gone, ctx.client);
  ctx.reply.ok();
}

void cmd_acl_save(CommandContext& ctx) {
  const std::string_view file = ctx.server->acl_file();
  if (file.empty()) {
    ctx.reply.error(kNoAclFile);
    return;
  }
  if (!users(ctx).save_file(std::string(file)).empty()) {
    ctx.reply.error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
    return;
  }
  ctx.reply.ok();
}

void cmd_acl_cat(CommandContext& ctx) {
  if (ctx.argv.size() == 2) {
    ctx.reply.array(acl::category_names().size());
    for (std::string_view name : acl::category_names()) ctx.reply.bulk(name);
    return;
  }
  if (ctx.argv.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  const uint32_t category = acl::category_bit(ctx.argv[2]);
  if (category == 0) {
    ctx.reply.error("ERR Unknown category '" + std::string(ctx.argv[2].substr(0, 128)) + "'");
    return;
  }
  std::vector<std::string> names;
  for (size_t id = 0; id < acl::command_count(); ++id) {
    if (acl::command_categories(id) & category) {
      names.push_back(command_fullname(acl::command_by_id(id)));
    }
  }
  ctx.reply.array(names.size());
  for (const std::string& name : names) ctx.reply.bulk(name);
}

void cmd_acl_genpass(CommandContext& ctx) {
  int64_t bits = 256;
  if (ctx.argv.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  if (ctx.argv.size() == 3 && !int64_or_reply(ctx, ctx.argv[2], bits)) return;
  if (bits <= 0 || bits > kGenpassMaxBits) {
    ctx.reply.error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
    return;
  }
  const auto chars = static_cast<size_t>((bits + 3) / 4);
  ctx.reply.bulk(common::random_hex((chars + 1) / 2).substr(0, chars));
}

void cmd_acl_log(CommandContext& ctx) {
  int64_t count = 10;
  if (ctx.argv.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  if (ctx.argv.size() == 3) {
    if (equals_ignore_case(ctx.argv[2], "reset")) {
      users(ctx).reset_log();
      ctx.reply.ok();
      return;
    }
    if (!int64_or_reply(ctx, ctx.argv[2], count)) return;
    if (count < 0) count = 0;
  }
  const auto& log = users(ctx).log_entries();
  const size_t n = std::min(static_cast<size_t>(count), log.size());
  const int64_t now = now_ms();
  ctx.reply.array(n);
  for (size_t i = 0; i < n; ++i) {
    const acl::LogEntry& e = log[i];
    ctx.reply.map(7);
    ctx.reply.bulk("count");
    ctx.reply.integer(static_cast<int64_t>(e.count));
    ctx.reply.bulk("reason");
    ctx.reply.bulk(reason_name(e.reason));
    ctx.reply.bulk("context");
    ctx.reply.bulk(e.context);
    ctx.reply.bulk("object");
    ctx.reply.bulk(e.object);
    ctx.reply.bulk("username");
    ctx.reply.bulk(e.username);
    ctx.reply.bulk("age-seconds");
    ctx.reply.double_value(static_cast<double>(now - e.time_ms) / 1000);
    ctx.reply.bulk("client-info");
    ctx.reply.bulk(e.client_info);
  }
}

void cmd_acl_dryrun(CommandContext& ctx) {
  const std::shared_ptr<acl::User> user = users(ctx).find(ctx.argv[2]);
  if (!user) {
    ctx.reply.error("ERR User '" + std::string(ctx.argv[2]) + "' not found");
    return;
  }
  const std::span<const std::string_view> target = ctx.argv.subspan(3);
  std::string error;
  const CommandSpec* spec = resolve_client_command(target, error);
  if (spec == nullptr) {
    // Arity errors are Redis's own; a command or subcommand that does not exist is "not found".
    if (error.starts_with("ERR wrong number")) {
      ctx.reply.error(error);
    } else {
      ctx.reply.error("ERR Command '" + std::string(target[0]) + "' not found");
    }
    return;
  }
  size_t index = 0;
  switch (user->check(*spec, target, index)) {
    case acl::Denial::kNone:
      ctx.reply.ok();
      return;
    case acl::Denial::kCommand:
      ctx.reply.bulk("This user has no permissions to run the '" + command_fullname(*spec) +
                     "' command");
      return;
    case acl::Denial::kKey:
      ctx.reply.bulk("This user has no permissions to access the '" + std::string(target[index]) +
                     "' key");
      return;
    default:
      ctx.reply.bulk("This user has no permissions to access the '" + std::string(target[index]) +
                     "' channel");
      return;
  }
}

void cmd_acl_help(CommandContext& ctx) { reply_help(ctx.reply, kAclHelp); }

constexpr std::string_view kAdminCategories = "admin slow dangerous";
constexpr uint32_t kAdminFlags = kAdmin | kNoscript | kLoading | kStale;

constexpr CommandSpec kAclSubcommands[] = {
    {.name = "cat",
     .arity = -2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_acl_cat,
     .group = "server",
     .since = "6.0.0",
     .summary = "List the ACL categories or the commands inside a category",
     .complexity = "O(1) since the categories and commands are a fixed set.",
     .syntax = "[categoryname]",
     .acl_categories = "slow"},
    {.name = "deluser",
     .arity = -3,
     .flags = kAdminFlags | kClusterWide,
     .handler = cmd_acl_deluser,
     .group = "server",
     .since = "6.0.0",
     .summary = "Remove the specified ACL users and the associated rules",
     .complexity = "O(1) amortized time considering the typical user.",
     .syntax = "username...",
     .acl_categories = kAdminCategories,
     .merge = MergePolicy::kSame},
    {.name = "dryrun",
     .arity = -4,
     .flags = kAdminFlags,
     .handler = cmd_acl_dryrun,
     .group = "server",
     .since = "7.0.0",
     .summary =
         "Returns whether the user can execute the given command without executing the command.",
     .complexity = "O(1).",
     .syntax = "username command [arg]...",
     .acl_categories = kAdminCategories},
    {.name = "genpass",
     .arity = -2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_acl_genpass,
     .group = "server",
     .since = "6.0.0",
     .summary = "Generate a pseudorandom secure password to use for ACL users",
     .complexity = "O(1)",
     .syntax = "[bits<integer>]",
     .acl_categories = "slow"},
    {.name = "getuser",
     .arity = 3,
     .flags = kAdminFlags,
     .handler = cmd_acl_getuser,
     .group = "server",
     .since = "6.0.0",
     .summary = "Get the rules for a specific ACL user",
     .complexity =
         "O(N). Where N is the number of password, command and pattern rules that the user has.",
     .syntax = "username",
     .acl_categories = kAdminCategories,
     .history = "6.2.0|Added Pub/Sub channel patterns.\n7.0.0|Added selectors and changed the "
                "format of key and channel patterns from a list to their rule representation."},
    help_row(cmd_acl_help, "server", "6.0.0"),
    {.name = "list",
     .arity = 2,
     .flags = kAdminFlags,
     .handler = cmd_acl_list,
     .group = "server",
     .since = "6.0.0",
     .summary = "List the current ACL rules in ACL config file format",
     .complexity = "O(N). Where N is the number of configured users.",
     .syntax = "",
     .acl_categories = kAdminCategories},
    {.name = "load",
     .arity = 2,
     .flags = kAdminFlags | kClusterWide,
     .handler = cmd_acl_load,
     .group = "server",
     .since = "6.0.0",
     .summary = "Reload the ACLs from the configured ACL file",
     .complexity = "O(N). Where N is the number of configured users.",
     .syntax = "",
     .acl_categories = kAdminCategories,
     .merge = MergePolicy::kSame},
    {.name = "log",
     .arity = -2,
     .flags = kAdminFlags,
     .handler = cmd_acl_log,
     .group = "server",
     .since = "6.0.0",
     .summary = "List latest events denied because of ACLs in place",
     .complexity = "O(N) with N being the number of entries shown.",
     .syntax = "[operation: count<integer> | RESET]",
     .acl_categories = kAdminCategories},
    {.name = "save",
     .arity = 2,
     .flags = kAdminFlags,
     .handler = cmd_acl_save,
     .group = "server",
     .since = "6.0.0",
     .summary = "Save the current ACL rules in the configured ACL file",
     .complexity = "O(N). Where N is the number of configured users.",
     .syntax = "",
     .acl_categories = kAdminCategories},
    {.name = "setuser",
     .arity = -3,
     .flags = kAdminFlags | kClusterWide,
     .handler = cmd_acl_setuser,
     .group = "server",
     .since = "6.0.0",
     .summary = "Modify or create the rules for a specific ACL user",
     .complexity = "O(N). Where N is the number of rules provided.",
     .syntax = "username [rule]...",
     .acl_categories = kAdminCategories,
     .history =
         "6.2.0|Added Pub/Sub channel patterns.\n7.0.0|Added selectors and key based permissions.",
     .merge = MergePolicy::kSame},
    {.name = "users",
     .arity = 2,
     .flags = kAdminFlags,
     .handler = cmd_acl_users,
     .group = "server",
     .since = "6.0.0",
     .summary = "List the username of all the configured ACL rules",
     .complexity = "O(N). Where N is the number of configured users.",
     .syntax = "",
     .acl_categories = kAdminCategories},
    {.name = "whoami",
     .arity = 2,
     .flags = kNoscript | kLoading | kStale,
     .handler = cmd_acl_whoami,
     .group = "server",
     .since = "6.0.0",
     .summary = "Return the name of the user associated to the current connection",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow"},
};

constexpr CommandSpec kAclCommands[] = {
    container_row("acl", "server", "6.0.0", "A container for Access List Control commands ",
                  kAclSubcommands),
};

}  // namespace

std::span<const CommandSpec> acl_commands() { return kAclCommands; }

void log_acl_denial(acl::Users& users, const ClientSession& client, acl::Denial reason,
                    AclContext context, std::string_view object, std::string_view username,
                    size_t max_len) {
  users.log(acl::LogEntry{.reason = reason,
                          .context = std::string(context_name(context)),
                          .object = std::string(object),
                          .username = std::string(username),
                          .time_ms = now_ms(),
                          .client_info = client.info_line()},
            max_len);
}

void log_acl_denial(CommandContext& ctx, acl::Denial reason, std::string_view object,
                    std::string_view username) {
  log_acl_denial(*ctx.server->acl_users(), *ctx.client, reason,
                 ctx.client->in_transaction() ? AclContext::kMulti : AclContext::kToplevel, object,
                 username, ctx.server->acl_log_max_len());
}

AclRefusal check_acl(const acl::User& user, const CommandSpec& spec,
                     std::span<const std::string_view> argv) {
  size_t index = 0;
  AclRefusal refusal;
  refusal.reason = user.check(spec, argv, index);
  if (refusal.reason == acl::Denial::kCommand) {
    refusal.object = command_fullname(spec);
  } else if (refusal.reason != acl::Denial::kNone) {
    refusal.object = argv[index];
  }
  return refusal;
}

std::string noperm_error(acl::Denial reason, const CommandSpec& spec) {
  switch (reason) {
    case acl::Denial::kCommand:
      return "NOPERM this user has no permissions to run the '" + command_fullname(spec) +
             "' command";
    case acl::Denial::kKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    case acl::Denial::kChannel:
      return "NOPERM this user has no permissions to access one of the channels used as "
             "arguments";
    default:
      return "NOPERM no permission";
  }
}

std::string noperm_exec_error(acl::Denial reason) {
  std::string_view why;
  switch (reason) {
    case acl::Denial::kCommand:
      why = "no permission to execute the command or subcommand";
      break;
    case acl::Denial::kKey:
      why = "no permission to touch the specified keys";
      break;
    case acl::Denial::kChannel:
      why = "no permission to access one of the channels used as arguments";
      break;
    default:
      why = "no permission";
  }
  return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
         "EXEC call. This command is no longer allowed for the following reason: " +
         std::string(why);
}

std::string_view noperm_script_error(acl::Denial reason) {
  switch (reason) {
    case acl::Denial::kCommand:
      return "ERR The user executing the script can't run this command or subcommand";
    case acl::Denial::kKey:
      return "ERR The user executing the script can't access at least one of the keys mentioned "
             "in the command arguments";
    case acl::Denial::kChannel:
      return "ERR The user executing the script can't publish to the channel mentioned in the "
             "command";
    default:
      return "ERR The user executing the script is lacking the permissions for the command";
  }
}

}  // namespace ringkv::engine
