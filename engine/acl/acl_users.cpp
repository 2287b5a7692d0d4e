// ACL users, the ACL file and the ACL log, with Redis 7.0's rules and texts (acl.c).
#include "engine/acl/acl_users.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/secret.h"
#include "engine/commands/string_ops.h"

namespace ringkv::engine::acl {
namespace {

constexpr size_t kHashLen = 64;
// Similar refusals within this many milliseconds share a log entry.
constexpr int64_t kLogGroupingMs = 60000;
// How many recent entries are searched for one to share.
constexpr size_t kLogGroupingScan = 10;

bool valid_hash(std::string_view hash) {
  return hash.size() == kHashLen && std::all_of(hash.begin(), hash.end(), [](char c) {
           return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9');
         });
}

bool name_has_space_or_nul(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == '\0' || std::isspace(static_cast<unsigned char>(c));
  });
}

// The rules inside "( ... )", split on whitespace.
std::vector<std::string_view> selector_rules(std::string_view op) {
  std::vector<std::string_view> rules;
  std::string_view inner = op.substr(1, op.size() - 2);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && std::isspace(static_cast<unsigned char>(inner[i]))) ++i;
    size_t j = i;
    while (j < inner.size() && !std::isspace(static_cast<unsigned char>(inner[j]))) ++j;
    if (j > i) rules.push_back(inner.substr(i, j - i));
    i = j;
  }
  return rules;
}

std::string_view trim(std::string_view s, std::string_view chars) {
  const size_t start = s.find_first_not_of(chars);
  if (start == std::string_view::npos) return {};
  return s.substr(start, s.find_last_not_of(chars) - start + 1);
}

}  // namespace

User::User(std::string name) : name_(std::move(name)) { selectors_.emplace_back(true); }

RuleError User::apply(std::string_view op) {
  if (op.empty()) return RuleError::kNone;
  if (equals_ignore_case(op, "on")) {
    flags_ = (flags_ | kUserOn) & ~kUserOff;
  } else if (equals_ignore_case(op, "off")) {
    flags_ = (flags_ | kUserOff) & ~kUserOn;
  } else if (equals_ignore_case(op, "skip-sanitize-payload")) {
    flags_ = (flags_ | kUserSkipSanitize) & ~kUserSanitize;
  } else if (equals_ignore_case(op, "sanitize-payload")) {
    flags_ = (flags_ | kUserSanitize) & ~kUserSkipSanitize;
  } else if (equals_ignore_case(op, "nopass")) {
    flags_ |= kUserNoPass;
    passwords_.clear();
  } else if (equals_ignore_case(op, "resetpass")) {
    flags_ &= ~kUserNoPass;
    passwords_.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = common::sha256_hex(op.substr(1));
    } else {
      if (!valid_hash(op.substr(1))) return RuleError::kBadHash;
      hash = op.substr(1);
    }
    if (std::find(passwords_.begin(), passwords_.end(), hash) == passwords_.end()) {
      passwords_.push_back(std::move(hash));
    }
    flags_ &= ~kUserNoPass;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = common::sha256_hex(op.substr(1));
    } else {
      if (!valid_hash(op.substr(1))) return RuleError::kBadHash;
      hash = op.substr(1);
    }
    auto it = std::find(passwords_.begin(), passwords_.end(), hash);
    if (it == passwords_.end()) return RuleError::kNoSuchPassword;
    passwords_.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    Selector selector(false);
    for (std::string_view rule : selector_rules(op)) {
      if (RuleError e = selector.apply(rule); e != RuleError::kNone) return e;
    }
    selectors_.push_back(std::move(selector));
  } else if (equals_ignore_case(op, "clearselectors")) {
    selectors_.erase(selectors_.begin() + 1, selectors_.end());
  } else if (equals_ignore_case(op, "reset")) {
    for (std::string_view rule : {"resetpass", "resetkeys", "resetchannels", "off",
                                  "sanitize-payload", "clearselectors", "-@all"}) {
      apply(rule);
    }
    if (pubsub_default_all()) apply("allchannels");
  } else {
    return selectors_[0].apply(op);
  }
  return RuleError::kNone;
}

std::string User::describe() const {
  static constexpr std::pair<uint32_t, std::string_view> kFlags[] = {
      {kUserOn, "on"},
      {kUserOff, "off"},
      {kUserNoPass, "nopass"},
      {kUserSkipSanitize, "skip-sanitize-payload"},
      {kUserSanitize, "sanitize-payload"}};
  std::string out;
  for (const auto& [bit, name] : kFlags) {
    if (flags_ & bit) out.append(name).push_back(' ');
  }
  for (const std::string& hash : passwords_) out += "#" + hash + " ";
  for (const Selector& s : selectors_) {
    if (s.root()) {
      out += s.describe();
    } else {
      out += " (" + s.describe() + ")";
    }
  }
  return out;
}

void User::copy_rules_from(const User& other) {
  flags_ = other.flags_;
  passwords_ = other.passwords_;
  selectors_ = other.selectors_;
}

bool User::password_matches(std::string_view password) const {
  if (nopass()) return true;
  const std::string hash = common::sha256_hex(password);
  bool found = false;
  // Every stored digest is compared, each in constant time.
  for (const std::string& stored : passwords_) {
    found = common::constant_time_equals(hash, stored) || found;
  }
  return found;
}

Denial User::check(const CommandSpec& spec, std::span<const std::string_view> argv,
                   size_t& index) const {
  // The refusal reported when none allows it: the most relevant kind, then the last argument.
  Denial relevant = Denial::kCommand;
  size_t last = 0;
  std::optional<std::vector<KeyReference>> keys;
  for (const Selector& s : selectors_) {
    size_t at = 0;
    const Denial d = s.check(spec, argv, keys, at);
    if (d == Denial::kNone) return d;
    if (d > relevant || (d == relevant && at > last)) {
      relevant = d;
      last = at;
    }
  }
  index = last;
  return relevant;
}

bool User::channel_allowed(std::string_view channel, bool literal) const {
  return std::any_of(selectors_.begin(), selectors_.end(),
                     [&](const Selector& s) { return s.channel_allowed(channel, literal); });
}

std::shared_ptr<User> make_default_user() {
  auto user = std::make_shared<User>("default");
  for (std::string_view rule : {"+@all", "~*", "&*", "on", "nopass"}) user->apply(rule);
  return user;
}

bool merge_selector_arguments(std::span<const std::string_view> ops, std::vector<std::string>& out,
                              size_t& bad) {
  out.clear();
  std::string selector;
  bool open = false;
  for (size_t j = 0; j < ops.size(); ++j) {
    const std::string_view op = ops[j];
    if (!op.empty() && op[0] == '(' && op.back() != ')') {
      selector = op;
      open = true;
      bad = j;
      continue;
    }
    if (open) {
      selector += " ";
      selector += op;
      if (!op.empty() && op.back() == ')') {
        open = false;
        out.push_back(std::move(selector));
      }
      continue;
    }
    out.emplace_back(op);
  }
  return !open;
}

Users::Users() : default_(make_default_user()) { users_.emplace("default", default_); }

std::shared_ptr<User> Users::find(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

bool valid_user_name(std::string_view name) { return !name_has_space_or_nul(name); }

std::string Users::set_user(std::string_view name, std::span<const std::string> ops) {
  std::shared_ptr<User> existing = find(name);
  User temp{std::string(name)};
  if (existing) temp.copy_rules_from(*existing);
  for (const std::string& op : ops) {
    if (RuleError e = temp.apply(op); e != RuleError::kNone) {
      return "ERR Error in ACL SETUSER modifier '" + op + "': " + std::string(rule_error_text(e));
    }
  }
  if (!existing) {
    existing = std::make_shared<User>(std::string(name));
    users_.emplace(std::string(name), existing);
  }
  existing->copy_rules_from(temp);
  return {};
}

std::shared_ptr<User> Users::remove(std::string_view name) {
  if (name == "default") return nullptr;
  auto it = users_.find(name);
  if (it == users_.end()) return nullptr;
  std::shared_ptr<User> user = it->second;
  users_.erase(it);
  return user;
}

void Users::set_default_password(std::string_view password) {
  default_->apply("resetpass");
  if (password.empty()) {
    default_->apply("nopass");
  } else {
    default_->apply(">" + std::string(password));
  }
}

std::string Users::load_file(const std::string& path,
                             std::vector<std::shared_ptr<User>>& replaced) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return "ERR Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  std::map<std::string, std::shared_ptr<User>, std::less<>> loaded;
  std::string errors;
  size_t line_start = 0;
  for (size_t linenum = 1; line_start <= content.size(); ++linenum) {
    size_t end = content.find('\n', line_start);
    if (end == std::string::npos) end = content.size();
    const std::string_view line =
        trim(std::string_view(content).substr(line_start, end - line_start), " \t\r\n");
    line_start = end + 1;
    if (line.empty()) continue;
    std::vector<std::string_view> argv;
    for (size_t i = 0;;) {
      const size_t space = line.find(' ', i);
      argv.push_back(line.substr(i, space == std::string_view::npos ? space : space - i));
      if (space == std::string_view::npos) break;
      i = space + 1;
    }
    const std::string where = path + ":" + std::to_string(linenum);
    if (argv[0] != "user" || argv.size() < 2) {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    if (name_has_space_or_nul(argv[1])) {
      errors +=
          "'" + where + ": username '" + std::string(argv[1]) + "' contains invalid characters. ";
      continue;
    }
    if (loaded.contains(argv[1])) {
      errors += "WARNING: Duplicate user '" + std::string(argv[1]) + "' found on line " +
                std::to_string(linenum) + ". ";
      continue;
    }
    auto user = std::make_shared<User>(std::string(argv[1]));
    loaded.emplace(std::string(argv[1]), user);
    std::vector<std::string> merged;
    size_t bad = 0;
    if (!merge_selector_arguments(std::span(argv).subspan(2), merged, bad)) {
      errors += where + ": Unmatched parenthesis in selector definition.";
      continue;
    }
    for (const std::string& op : merged) {
      const std::string_view rule = trim(op, "\t\r\n");
      if (RuleError e = user->apply(rule); e != RuleError::kNone) {
        // Redis names the rule only for an unknown command or category.
        const std::string named = e == RuleError::kUnknownCommand
                                      ? "Error in applying operation '" + std::string(rule) + "': "
                                      : std::string();
        errors += where + ": " + named + std::string(rule_error_text(e)) + ". ";
      }
    }
  }
  if (!errors.empty()) {
    return "ERR " + errors +
           "WARNING: ACL errors detected, no change to the previously active ACL rules was "
           "performed";
  }
  // Clients of the default user keep it: the loaded rules are copied into it.
  auto new_default = loaded.find("default");
  default_->copy_rules_from(new_default == loaded.end() ? *make_default_user()
                                                        : *new_default->second);
  loaded["default"] = default_;
  replaced.clear();
  for (auto& [name, user] : users_) {
    if (user != default_) replaced.push_back(user);
  }
  users_ = std::move(loaded);
  return {};
}

std::string Users::save_file(const std::string& path) const {
  std::string text;
  for (const auto& [name, user] : users_) text += "user " + name + " " + user->describe() + "\n";
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string tmp =
      path + ".tmp-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr)
    return "Opening temp ACL file for ACL SAVE: " + std::string(std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return "Writing ACL file for ACL SAVE: " + why;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return "Renaming ACL file for ACL SAVE: " + why;
  }
  return {};
}

void Users::log(LogEntry entry, size_t max_len) {
  const size_t scan = std::min(kLogGroupingScan, log_.size());
  for (size_t i = 0; i < scan; ++i) {
    LogEntry& e = log_[i];
    if (e.reason == entry.reason && e.context == entry.context && e.object == entry.object &&
        e.username == entry.username && std::llabs(e.time_ms - entry.time_ms) <= kLogGroupingMs) {
      LogEntry match = std::move(e);
      log_.erase(log_.begin() + static_cast<std::ptrdiff_t>(i));
      match.client_info = std::move(entry.client_info);
      match.time_ms = entry.time_ms;
      match.count++;
      log_.push_front(std::move(match));
      return;
    }
  }
  log_.push_front(std::move(entry));
  trim_log(max_len);
}

void Users::trim_log(size_t max_len) {
  while (log_.size() > max_len) log_.pop_back();
}

}  // namespace ringkv::engine::acl
