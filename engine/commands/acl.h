// ACL: the ACL command family's rows (SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT,
// GENPASS, LOG, DRYRUN, LOAD, SAVE, HELP), the ACL LOG entries of refusals and Redis 7.0's NOPERM
// texts for the places that refuse (the pipeline, EXEC, scripts).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/acl/acl_selector.h"
#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> acl_commands();

// Where a refusal happened, as ACL LOG names it.
enum class AclContext { kToplevel, kMulti, kLua };

// Adds an ACL LOG entry for the client of `ctx`: `object` is the command, key or channel refused
// (or AUTH/HELLO as sent), `username` the user it ran as (or tried to log in as).
void log_acl_denial(acl::Users& users, const ClientSession& client, acl::Denial reason,
                    AclContext context, std::string_view object, std::string_view username,
                    size_t max_len);
void log_acl_denial(CommandContext& ctx, acl::Denial reason, std::string_view object,
                    std::string_view username);

// Checks whether `user` may run argv (the row `spec`); when it may not, logs the refusal in
// `context` and returns the refusal with the object logged (command name, key or channel).
struct AclRefusal {
  acl::Denial reason = acl::Denial::kNone;
  std::string object;
};
AclRefusal check_acl(const acl::User& user, const CommandSpec& spec,
                     std::span<const std::string_view> argv);

// The error a client gets: "NOPERM this user has no permissions to run the 'get' command".
std::string noperm_error(acl::Denial reason, const CommandSpec& spec);
// The error EXEC gives for a queued command the user may no longer run.
std::string noperm_exec_error(acl::Denial reason);
// The error redis.call raises in a script for a command its caller may not run.
std::string_view noperm_script_error(acl::Denial reason);

}  // namespace ringkv::engine
