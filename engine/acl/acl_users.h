// ACL users and the node's set of them: passwords (SHA-256 digests), the on/off and nopass
// flags, selectors, Redis 7.0's ACL SETUSER rule language and ACL LIST descriptions, the ACL
// file (ACL LOAD / ACL SAVE, all or nothing) and the ACL LOG of refused commands and logins.
// Clients hold their user by shared_ptr: ACL SETUSER changes the user in place, so connected
// clients get the new rights at once; a deleted user's clients are disconnected by the server.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/acl/acl_selector.h"

namespace ringkv::engine::acl {

// User flags, in the order descriptions list them.
inline constexpr uint32_t kUserOn = 1u << 0;
inline constexpr uint32_t kUserOff = 1u << 1;
inline constexpr uint32_t kUserNoPass = 1u << 2;
inline constexpr uint32_t kUserSkipSanitize = 1u << 3;
inline constexpr uint32_t kUserSanitize = 1u << 4;

class User {
 public:
  explicit User(std::string name);

  const std::string& name() const { return name_; }
  uint32_t flags() const { return flags_; }
  bool enabled() const { return (flags_ & kUserOff) == 0; }
  bool nopass() const { return (flags_ & kUserNoPass) != 0; }
  const std::vector<std::string>& passwords() const { return passwords_; }
  const std::vector<Selector>& selectors() const { return selectors_; }
  // The root selector allows everything (the default user's +@all ~* &*): no check needed.
  bool unrestricted() const { return selectors_[0].unrestricted(); }

  // Applies one rule (on, off, >pass, #hash, nopass, reset, (selector), or a root selector rule).
  RuleError apply(std::string_view op);
  // The rules that rebuild this user, as ACL LIST shows them (without "user <name> ").
  std::string describe() const;
  // Takes over another user's rules, keeping its own name.
  void copy_rules_from(const User& other);

  // Whether `password` is one of the user's (or the user takes any).
  bool password_matches(std::string_view password) const;
  // Whether one of the selectors lets argv run (the row `spec`); on refusal, `index` is the
  // argument refused (for key and channel refusals).
  Denial check(const CommandSpec& spec, std::span<const std::string_view> argv,
               size_t& index) const;
  // Whether the user may use `channel` (compared literally for pattern subscriptions).
  bool channel_allowed(std::string_view channel, bool literal) const;

 private:
  std::string name_;
  uint32_t flags_ = kUserOff;
  std::vector<std::string> passwords_;  // SHA-256 hex digests
  std::vector<Selector> selectors_;     // the root selector first
};

// One ACL LOG entry: similar refusals within a minute are counted in one entry.
struct LogEntry {
  uint64_t count = 1;
  Denial reason;
  std::string context;  // toplevel, multi, lua
  std::string object;   // the command, key, channel, or AUTH/HELLO as sent
  std::string username;
  int64_t time_ms;
  std::string client_info;
};

// Groups ACL SETUSER arguments of a selector spread over several ("(+get", "~k)") into one.
// Returns false, with `bad` the index of the argument that opened it, when a "(" is not closed.
bool merge_selector_arguments(std::span<const std::string_view> ops, std::vector<std::string>& out,
                              size_t& bad);

// Whether `name` may name a user (no spaces, no NUL bytes).
bool valid_user_name(std::string_view name);

class Users {
 public:
  Users();

  std::shared_ptr<User> find(std::string_view name) const;
  const std::shared_ptr<User>& default_user() const { return default_; }
  // Every user, sorted by name (as Redis lists them).
  const std::map<std::string, std::shared_ptr<User>, std::less<>>& all() const { return users_; }

  // ACL SETUSER: applies the rules (selectors merged, see merge_selector_arguments) to a copy of
  // the user (a new one when it does not exist) and installs it only if every rule applied.
  // Returns "" or Redis's error text.
  std::string set_user(std::string_view name, std::span<const std::string> ops);
  // Removes a user (never "default"); returns it, or null when there was none.
  std::shared_ptr<User> remove(std::string_view name);
  // requirepass: the default user's only password, or nopass when empty.
  void set_default_password(std::string_view password);

  // ACL LOAD: replaces every user with the file's, all or nothing. Returns "" or Redis's error
  // text; on success `replaced` holds the previous users other than default (their clients
  // must go). `shown_name` is the file name errors mention.
  std::string load_file(const std::string& path, std::vector<std::shared_ptr<User>>& replaced);
  // ACL SAVE: writes every user to the file atomically. Returns "" or why it failed.
  std::string save_file(const std::string& path) const;

  // ACL LOG.
  void log(LogEntry entry, size_t max_len);
  const std::deque<LogEntry>& log_entries() const { return log_; }
  void reset_log() { log_.clear(); }
  void trim_log(size_t max_len);

 private:
  std::map<std::string, std::shared_ptr<User>, std::less<>> users_;
  std::shared_ptr<User> default_;
  std::deque<LogEntry> log_;
};

// A user with Redis's default user's rules: on, nopass, ~*, &*, +@all.
std::shared_ptr<User> make_default_user();

}  // namespace ringkv::engine::acl
