// ACL selectors: rules, checks and descriptions with Redis 7.0's semantics (acl.c's selector
// functions), over ringkv's command table.
#include "engine/acl/acl_selector.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <unordered_map>

#include "common/glob.h"
#include "common/numbers.h"
#include "engine/commands/string_ops.h"

namespace ringkv::engine::acl {
namespace {

constexpr std::string_view kCategories[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting",
};

// Every row of the command table (top-level rows, each followed by its subcommands) with a dense
// id and its categories, built once.
struct CommandIds {
  std::vector<const CommandSpec*> rows;
  std::vector<uint32_t> categories;
  std::vector<bool> subcommand;
  std::unordered_map<const CommandSpec*, size_t> ids;

  CommandIds() {
    for (const CommandSpec& spec : command_table()) {
      add(spec, false);
      for (const CommandSpec& sub : spec.subcommands) add(sub, true);
    }
  }

  void add(const CommandSpec& spec, bool sub) {
    ids.emplace(&spec, rows.size());
    rows.push_back(&spec);
    subcommand.push_back(sub);
    uint32_t bits = 0;
    std::string_view text = spec.acl_categories;
    while (!text.empty()) {
      const size_t space = text.find(' ');
      bits |= category_bit(text.substr(0, space));
      text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    }
    categories.push_back(bits);
  }
};

const CommandIds& ids() {
  static const CommandIds kIds;
  return kIds;
}

bool has_space_or_nul(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == '\0' || std::isspace(static_cast<unsigned char>(c));
  });
}

// Redis's lookup of a rule's command name in the original table: "name" or "container|sub".
const CommandSpec* lookup(std::string_view name) {
  const size_t bar = name.find('|');
  if (bar == std::string_view::npos) return find_command(name);
  if (name.find('|', bar + 1) != std::string_view::npos) return nullptr;
  const CommandSpec* base = find_command(name.substr(0, bar));
  if (base == nullptr || base->subcommands.empty()) return nullptr;
  return find_subcommand(*base, name.substr(bar + 1));
}

bool is_subcommand(const CommandSpec& spec) { return ids().subcommand[command_id(spec)]; }

// The ACL rights a key spec's flags ask for (Redis's ACLSelectorCheckKey).
uint8_t rights_of(uint16_t flags) {
  uint8_t rights = 0;
  if (flags & kKeyAccess) rights |= kReadRight;
  if (flags & (kKeyInsert | kKeyDelete | kKeyUpdate)) rights |= kWriteRight;
  return rights;
}

}  // namespace

std::string_view rule_error_text(RuleError error) {
  switch (error) {
    case RuleError::kUnknownCommand:
      return "Unknown command or category name in ACL";
    case RuleError::kSyntax:
      return "Syntax error";
    case RuleError::kKeyAfterAll:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
             "not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case RuleError::kChannelAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
             "does not have any effect. Try 'resetchannels' to start with an empty list of "
             "channels";
    case RuleError::kNoSuchPassword:
      return "The password you are trying to remove from the user does not exist";
    case RuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters";
    case RuleError::kDuplicateUser:
      return "Duplicate user found. A user can only be defined once in config files";
    case RuleError::kSubcommandFirstArg:
      return "Allowing first-arg of a subcommand is not supported";
    default:
      return "Wrong format";
  }
}

std::span<const std::string_view> category_names() { return kCategories; }

uint32_t category_bit(std::string_view name) {
  for (size_t i = 0; i < std::size(kCategories); ++i) {
    if (equals_ignore_case(kCategories[i], name)) return 1u << i;
  }
  return 0;
}

size_t command_id(const CommandSpec& spec) { return ids().ids.at(&spec); }
size_t command_count() { return ids().rows.size(); }
const CommandSpec& command_by_id(size_t id) { return *ids().rows[id]; }
uint32_t command_categories(size_t id) { return ids().categories[id]; }

ChannelArgs channel_arguments(const CommandSpec& spec, size_t argc) {
  if (is_subcommand(spec) || argc < 2) return {};
  if (spec.name == "publish") return {1, 1, false};
  if (spec.name == "subscribe") return {1, argc - 1, false};
  if (spec.name == "psubscribe") return {1, argc - 1, true};
  return {};
}

bool& pubsub_default_all() {
  static bool all = false;
  return all;
}

Selector::Selector(bool root)
    : root_(root), all_channels_(pubsub_default_all()), allowed_(command_count() + 1, false) {}

void Selector::set_bit(size_t id, bool value) {
  allowed_[id] = value;
  if (!value) all_commands_ = false;
}

void Selector::change(const CommandSpec& spec, bool allow) {
  const size_t id = command_id(spec);
  set_bit(id, allow);
  first_args_.erase(id);
  for (const CommandSpec& sub : spec.subcommands) set_bit(command_id(sub), allow);
}

void Selector::set_category_rows(std::span<const CommandSpec> rows, uint32_t category, bool allow) {
  for (const CommandSpec& spec : rows) {
    if (command_categories(command_id(spec)) & category) change(spec, allow);
    if (!spec.subcommands.empty()) set_category_rows(spec.subcommands, category, allow);
  }
}

void Selector::set_category(uint32_t category, bool allow) {
  set_category_rows(command_table(), category, allow);
}

RuleError Selector::allow_with_first_arg(std::string_view op) {
  const std::string_view name = op.substr(1);
  const size_t bar = name.rfind('|');
  const std::string_view base_name = name.substr(0, bar);
  const std::string_view sub = name.substr(bar + 1);
  const CommandSpec* spec = lookup(base_name);
  if (spec == nullptr) return RuleError::kUnknownCommand;
  if (is_subcommand(*spec)) return RuleError::kSubcommandFirstArg;
  if (sub.empty()) return RuleError::kSyntax;
  if (!spec->subcommands.empty()) {
    const CommandSpec* subspec = lookup(name);
    if (subspec == nullptr) return RuleError::kUnknownCommand;
    change(*subspec, true);
    return RuleError::kNone;
  }
  // "+select|0": the command stays refused except with this first argument.
  std::vector<std::string>& args = first_args_[command_id(*spec)];
  if (std::none_of(args.begin(), args.end(),
                   [&](const std::string& a) { return equals_ignore_case(a, sub); })) {
    args.emplace_back(sub);
  }
  return RuleError::kNone;
}

RuleError Selector::apply(std::string_view op) {
  if (equals_ignore_case(op, "allkeys") || op == "~*") {
    all_keys_ = true;
    keys_.clear();
  } else if (equals_ignore_case(op, "resetkeys")) {
    all_keys_ = false;
    keys_.clear();
  } else if (equals_ignore_case(op, "allchannels") || op == "&*") {
    all_channels_ = true;
    channels_.clear();
  } else if (equals_ignore_case(op, "resetchannels")) {
    all_channels_ = false;
    channels_.clear();
  } else if (equals_ignore_case(op, "allcommands") || equals_ignore_case(op, "+@all")) {
    std::fill(allowed_.begin(), allowed_.end(), true);
    all_commands_ = true;
    first_args_.clear();
  } else if (equals_ignore_case(op, "nocommands") || equals_ignore_case(op, "-@all")) {
    std::fill(allowed_.begin(), allowed_.end(), false);
    all_commands_ = false;
    first_args_.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    if (all_keys_) return RuleError::kKeyAfterAll;
    uint8_t rights = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      for (; offset < op.size(); ++offset) {
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
        if (c == 'R' && !(rights & kReadRight)) {
          rights |= kReadRight;
        } else if (c == 'W' && !(rights & kWriteRight)) {
          rights |= kWriteRight;
        } else if (op[offset] == '~') {
          offset++;
          break;
        } else {
          return RuleError::kSyntax;
        }
      }
      if (rights == 0) return RuleError::kSyntax;
    } else {
      rights = kReadRight | kWriteRight;
    }
    const std::string_view pattern = op.substr(std::min(offset, op.size()));
    if (has_space_or_nul(pattern)) return RuleError::kSyntax;
    auto it = std::find_if(keys_.begin(), keys_.end(),
                           [&](const KeyPattern& k) { return k.pattern == pattern; });
    if (it == keys_.end()) {
      keys_.push_back(KeyPattern{std::string(pattern), rights});
    } else {
      it->rights |= rights;
    }
    all_keys_ = false;
  } else if (op[0] == '&') {
    if (all_channels_) return RuleError::kChannelAfterAll;
    const std::string_view pattern = op.substr(1);
    if (has_space_or_nul(pattern)) return RuleError::kSyntax;
    if (std::find(channels_.begin(), channels_.end(), pattern) == channels_.end()) {
      channels_.emplace_back(pattern);
    }
    all_channels_ = false;
  } else if (op[0] == '+' && (op.size() < 2 || op[1] != '@')) {
    if (op.find('|') != std::string_view::npos) return allow_with_first_arg(op);
    const CommandSpec* spec = lookup(op.substr(1));
    if (spec == nullptr) return RuleError::kUnknownCommand;
    change(*spec, true);
  } else if (op[0] == '-' && (op.size() < 2 || op[1] != '@')) {
    const CommandSpec* spec = lookup(op.substr(1));
    if (spec == nullptr) return RuleError::kUnknownCommand;
    change(*spec, false);
  } else if (op[0] == '+' || op[0] == '-') {
    const uint32_t category = category_bit(op.substr(2));
    if (category == 0) return RuleError::kUnknownCommand;
    set_category(category, op[0] == '+');
  } else {
    return RuleError::kSyntax;
  }
  return RuleError::kNone;
}

std::string Selector::describe_commands() const {
  // Redis's reconstruction: start from +@all or -@all, apply the categories that best fit the
  // remaining differences, then name single commands (and first arguments) until a selector
  // built from the description has exactly these bits.
  const bool additive = !future_commands();
  std::string rules = additive ? "-@all " : "+@all ";
  Selector fake(false);
  fake.apply(additive ? "-@all" : "+@all");
  Selector temp(false);
  temp.allowed_ = allowed_;
  std::vector<bool> applied(std::size(kCategories), false);
  const CommandIds& all = ids();
  while (true) {
    int best = -1;
    size_t min_diff = INT_MAX;
    size_t max_same = 0;
    for (size_t j = 0; j < std::size(kCategories); ++j) {
      if (applied[j]) continue;
      size_t on = 0;
      size_t off = 0;
      for (size_t id = 0; id < all.rows.size(); ++id) {
        if (!(all.categories[id] & (1u << j))) continue;
        (temp.bit(id) ? on : off)++;
      }
      const size_t diff = additive ? off : on;
      const size_t same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    const std::string name(kCategories[best]);
    fake.set_category(1u << best, additive);
    temp.set_category(1u << best, !additive);
    rules += (additive ? "+@" : "-@") + name + " ";
    applied[static_cast<size_t>(best)] = true;
  }
  auto single = [&](auto& self, std::span<const CommandSpec> rows) -> void {
    for (const CommandSpec& spec : rows) {
      const size_t id = command_id(spec);
      const bool mine = bit(id);
      if (mine != fake.bit(id)) {
        rules += (mine ? "+" : "-") + command_fullname(spec) + " ";
        fake.change(spec, mine);
      }
      if (!spec.subcommands.empty()) self(self, spec.subcommands);
      auto args = first_args_.find(id);
      if (!mine && args != first_args_.end()) {
        for (const std::string& arg : args->second) {
          rules += "+" + command_fullname(spec) + "|" + arg + " ";
        }
      }
    }
  };
  single(single, command_table());
  rules.pop_back();
  return rules;
}

std::string Selector::describe_keys() const {
  if (all_keys_) return "~*";
  std::string out;
  for (const KeyPattern& k : keys_) {
    if (!out.empty()) out += ' ';
    if (k.rights == kReadRight) {
      out += "%R~";
    } else if (k.rights == kWriteRight) {
      out += "%W~";
    } else {
      out += "~";
    }
    out += k.pattern;
  }
  return out;
}

std::string Selector::describe_channels() const {
  if (all_channels_) return "&*";
  std::string out;
  for (const std::string& c : channels_) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

std::string Selector::describe() const {
  std::string out;
  if (all_keys_ || !keys_.empty()) out += describe_keys() + " ";
  if (all_channels_) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const std::string& c : channels_) out += "&" + c + " ";
  }
  return out + describe_commands();
}

bool Selector::key_allowed(std::string_view key, uint8_t rights) const {
  if (all_keys_) return true;
  for (const KeyPattern& k : keys_) {
    if ((k.rights & rights) != rights) continue;
    if (common::glob_match(k.pattern, key)) return true;
  }
  return false;
}

bool Selector::channel_allowed(std::string_view channel, bool literal) const {
  if (all_channels_) return true;
  for (const std::string& pattern : channels_) {
    if (literal ? pattern == channel : common::glob_match(pattern, channel)) return true;
  }
  return false;
}

Denial Selector::check(const CommandSpec& spec, std::span<const std::string_view> argv,
                       std::optional<std::vector<KeyReference>>& keys, size_t& index) const {
  if (!all_commands_ && !(spec.flags & kNoAuth) && !bit(command_id(spec))) {
    const size_t id = command_id(spec);
    auto args = first_args_.find(id);
    if (argv.size() < 2 || args == first_args_.end()) return Denial::kCommand;
    const std::string_view first = argv[is_subcommand(spec) ? 2 : 1];
    if (std::none_of(args->second.begin(), args->second.end(),
                     [&](const std::string& a) { return equals_ignore_case(a, first); })) {
      return Denial::kCommand;
    }
  }
  if (!all_keys_ && !spec.key_specs.empty()) {
    if (!keys) keys = key_references(spec, argv);
    for (const KeyReference& ref : *keys) {
      if (!key_allowed(argv[ref.position], rights_of(ref.flags))) {
        index = ref.position;
        return Denial::kKey;
      }
    }
  }
  if (!all_channels_ && (spec.flags & kPubsub)) {
    const ChannelArgs channels = channel_arguments(spec, argv.size());
    for (size_t j = channels.first; j < channels.first + channels.count; ++j) {
      if (!channel_allowed(argv[j], channels.literal)) {
        index = j;
        return Denial::kChannel;
      }
    }
  }
  return Denial::kNone;
}

}  // namespace ringkv::engine::acl
