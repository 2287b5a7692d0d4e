// ACL selectors: what one set of rules lets a user run (commands, first arguments, key patterns
// with read/write rights, Pub/Sub channel patterns), with Redis 7.0's rule syntax, its checks and
// its descriptions. A user has a root selector and any number of extra ones `(...)`; a command
// runs when one of them allows it. Commands are known by a dense id over every row of the command
// table (top-level rows and subcommands), and categories come from the rows' acl_categories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "engine/key_specs.h"

namespace ringkv::engine::acl {

// Why a rule was refused (Redis's errno values in ACLSetUser), see rule_error_text.
enum class RuleError : uint8_t {
  kNone,
  kUnknownCommand,      // ENOENT: a command or category that does not exist
  kSyntax,              // EINVAL: an unknown rule, or a pattern with spaces
  kKeyAfterAll,         // EEXIST: ~pattern after allkeys
  kChannelAfterAll,     // EISDIR: &pattern after allchannels
  kNoSuchPassword,      // ENODEV: <password or !hash that the user does not have
  kBadHash,             // EBADMSG: #hash that is not 64 lowercase hex digits
  kDuplicateUser,       // EALREADY: a user defined twice in a file
  kSubcommandFirstArg,  // ECHILD: +cmd|sub|arg
  kUnbalancedSelector,  // "(..." without its ")" (reported by the callers with their own text)
};

// Redis's text for a refused rule ("Syntax error", "Unknown command or category name in ACL"...).
std::string_view rule_error_text(RuleError error);

// Why a command was refused, in Redis's order of relevance (ACL_DENIED_*).
enum class Denial : uint8_t { kNone = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };

// The ACL categories in Redis's order (ACL CAT, descriptions).
std::span<const std::string_view> category_names();
// The category's bit (1 << its index), or 0 when there is no such category (case-insensitive).
uint32_t category_bit(std::string_view name);

// The dense id of a row of the command table, and back.
size_t command_id(const CommandSpec& spec);
size_t command_count();
const CommandSpec& command_by_id(size_t id);
// The row's categories as bits of category_bit.
uint32_t command_categories(size_t id);

// The rights a key pattern grants (%R~, %W~, or both with ~).
inline constexpr uint8_t kReadRight = 1;
inline constexpr uint8_t kWriteRight = 2;

// The channel arguments a command names (PUBLISH's, SUBSCRIBE's, PSUBSCRIBE's patterns, which
// are matched literally); `literal` tells which.
struct ChannelArgs {
  size_t first = 0;
  size_t count = 0;
  bool literal = false;
};
ChannelArgs channel_arguments(const CommandSpec& spec, size_t argc);

// acl-pubsub-default: whether a selector made from now on (a new user's, a "(...)" selector, a
// user's "reset") starts with every channel (allchannels) or none (resetchannels, Redis 7's
// default). One setting per process, as Redis's.
bool& pubsub_default_all();

class Selector {
 public:
  explicit Selector(bool root);

  bool root() const { return root_; }
  // Applies one selector rule (+cmd, -@cat, ~pattern, %R~pattern, &channel, allkeys, ...).
  RuleError apply(std::string_view op);

  // The selector as ACL LIST and ACL SAVE write it: keys, channels, then commands.
  std::string describe() const;
  // GETUSER's "commands", "keys" and "channels" values.
  std::string describe_commands() const;
  std::string describe_keys() const;
  std::string describe_channels() const;

  // Whether this selector lets argv run; on a key or channel refusal sets `index` to the
  // argument refused. `keys` caches argv's key references between the selectors of a user.
  Denial check(const CommandSpec& spec, std::span<const std::string_view> argv,
               std::optional<std::vector<KeyReference>>& keys, size_t& index) const;
  // Whether `channel` (a pattern compared literally when `literal`) is allowed.
  bool channel_allowed(std::string_view channel, bool literal) const;
  bool all_channels() const { return all_channels_; }
  // Every command, key and channel: check() allows anything.
  bool unrestricted() const { return all_commands_ && all_keys_ && all_channels_; }
  const std::vector<std::string>& channels() const { return channels_; }

 private:
  struct KeyPattern {
    std::string pattern;
    uint8_t rights;
  };

  bool bit(size_t id) const { return allowed_[id]; }
  void set_bit(size_t id, bool value);
  void change(const CommandSpec& spec, bool allow);
  void set_category(uint32_t category, bool allow);
  void set_category_rows(std::span<const CommandSpec> rows, uint32_t category, bool allow);
  bool future_commands() const { return allowed_.back(); }
  RuleError allow_with_first_arg(std::string_view op);
  bool key_allowed(std::string_view key, uint8_t rights) const;

  bool root_;
  bool all_keys_ = false;
  bool all_channels_ = false;
  bool all_commands_ = false;
  // One bit per command id, and a last one set only by +@all: commands added later are allowed.
  std::vector<bool> allowed_;
  // Command id → first arguments allowed although the command is not ("+select|0").
  std::map<size_t, std::vector<std::string>> first_args_;
  std::vector<KeyPattern> keys_;
  std::vector<std::string> channels_;
};

}  // namespace ringkv::engine::acl
