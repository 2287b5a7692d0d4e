// Command lookup and dispatch over the command table: case-insensitive lookup without
// allocation, Redis 7.0's exact unknown-command / unknown-subcommand / arity errors, and key
// positions from a row's first/last/step.
#include "engine/command.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/commands/string_ops.h"

namespace ringkv::engine {

namespace {

// Longer names cannot be commands, so lookup lowercases into a fixed stack buffer.
constexpr size_t kMaxNameLen = 32;

// Redis's cap on the command / argument text quoted in an unknown-command error.
constexpr size_t kErrorQuoteLen = 128;

// The table's rows by name: open addressing over a power-of-two array, hashed (FNV-1a) over the
// name's ASCII-lowercased bytes (no locale, no std::hash), so that a lookup compares one or two
// rows (the table is at most a quarter full).
class CommandIndex {
 public:
  CommandIndex() {
    size_t size = 16;
    while (size < command_table().size() * 4) size *= 2;
    slots_.assign(size, nullptr);
    mask_ = size - 1;
    for (const CommandSpec& spec : command_table()) {
      assert(spec.name.size() <= kMaxNameLen && common::lowercase(spec.name) == spec.name);
      size_t i = hash(spec.name) & mask_;
      while (slots_[i] != nullptr) i = (i + 1) & mask_;
      slots_[i] = &spec;
    }
  }

  const CommandSpec* find(std::string_view name) const {
    if (name.size() > kMaxNameLen) return nullptr;
    char lower[kMaxNameLen];
    for (size_t i = 0; i < name.size(); ++i) {
      const char c = name[i];
      lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
    }
    const std::string_view key(lower, name.size());
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const CommandSpec* spec = slots_[i];
      if (spec == nullptr || spec->name == key) return spec;
    }
  }

 private:
  static uint64_t hash(std::string_view lowercase) {
    uint64_t h = 14695981039346656037ull;
    for (char c : lowercase) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
  }

  std::vector<const CommandSpec*> slots_;
  size_t mask_ = 0;
};

const CommandIndex& index() {
  static const CommandIndex kIndex;
  return kIndex;
}

// The names clients use once rename-command applied, as Redis's command dictionary after its
// renames: lowercase name → row. Inactive (everything under its own name) when nothing is renamed.
struct ClientNames {
  bool active = false;
  std::unordered_map<std::string, const CommandSpec*> by_name;
  std::unordered_set<const CommandSpec*> reachable;
};

ClientNames& client_names() {
  static ClientNames names;
  return names;
}

// At most n bytes of s, ending at a NUL byte as Redis's printf("%.*s") of the argument does.
std::string_view truncate(std::string_view s, size_t n) {
  s = s.substr(0, std::min(s.size(), n));
  return s.substr(0, std::min(s.size(), s.find('\0')));
}

std::string unknown_command_error(std::span<const std::string_view> argv) {
  std::string error = "ERR unknown command '";
  error.append(truncate(argv[0], kErrorQuoteLen));
  error.append("', with args beginning with: ");
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < kErrorQuoteLen; ++i) {
    args.push_back('\'');
    args.append(truncate(argv[i], kErrorQuoteLen - args.size() + 1));
    args.append("' ");
  }
  error.append(args);
  return error;
}

std::string unknown_subcommand_error(std::span<const std::string_view> argv) {
  std::string error = "ERR unknown subcommand '";
  error.append(truncate(argv[1], kErrorQuoteLen));
  error.append("'. Try ");
  for (char c : truncate(argv[0], argv[0].size()))
    error.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  error.append(" HELP.");
  return error;
}

bool arity_ok(const CommandSpec& spec, size_t argc) {
  int n = static_cast<int>(argc);
  return spec.arity >= 0 ? n == spec.arity : n >= -spec.arity;
}

// The parent of a subcommand row, found by address within the parents' subcommand spans.
const CommandSpec* parent_of(const CommandSpec& spec) {
  for (const CommandSpec& parent : command_table()) {
    const auto& subs = parent.subcommands;
    if (!subs.empty() && &spec >= subs.data() && &spec < subs.data() + subs.size()) {
      return &parent;
    }
  }
  return nullptr;
}

}  // namespace

const CommandSpec* find_command(std::string_view name) { return index().find(name); }

const CommandSpec* find_subcommand(const CommandSpec& parent, std::string_view name) {
  for (const CommandSpec& sub : parent.subcommands) {
    if (equals_ignore_case(sub.name, name)) return &sub;
  }
  return nullptr;
}

std::string set_command_renames(std::span<const std::pair<std::string, std::string>> renames) {
  ClientNames next;
  next.active = !renames.empty();
  for (const CommandSpec& spec : command_table()) next.by_name.emplace(spec.name, &spec);
  // Applied one after another, as Redis applies its rename-command lines.
  for (const auto& [from, to] : renames) {
    auto it = next.by_name.find(common::lowercase(from));
    if (it == next.by_name.end()) return "no such command '" + from + "'";
    const CommandSpec* spec = it->second;
    next.by_name.erase(it);
    if (to.empty()) continue;
    if (!next.by_name.emplace(common::lowercase(to), spec).second) {
      return "cannot rename '" + from + "' to '" + to + "': that command name already exists";
    }
  }
  for (const auto& [name, spec] : next.by_name) next.reachable.insert(spec);
  client_names() = std::move(next);
  return {};
}

const CommandSpec* find_client_command(std::string_view name) {
  const ClientNames& names = client_names();
  if (!names.active) return find_command(name);
  auto it = names.by_name.find(common::lowercase(name));
  return it == names.by_name.end() ? nullptr : it->second;
}

std::string_view original_command_name(std::string_view client_name) {
  const ClientNames& names = client_names();
  if (!names.active) return {};
  std::string name = common::lowercase(client_name);
  auto it = names.by_name.find(name);
  if (it == names.by_name.end() || it->second->name == name) return {};
  return it->second->name;
}

bool command_enabled(const CommandSpec& spec) {
  const ClientNames& names = client_names();
  if (!names.active || names.reachable.contains(&spec)) return true;
  const CommandSpec* parent = parent_of(spec);
  return parent != nullptr && names.reachable.contains(parent);
}

namespace {

// Resolves argv whose argv[0] named the top-level row `spec` (nullptr: no such command).
const CommandSpec* resolve_from(const CommandSpec* spec, std::span<const std::string_view> argv,
                                std::string& error) {
  if (spec == nullptr) {
    error = unknown_command_error(argv);
    return nullptr;
  }
  // As Redis: a container given a second argument runs that subcommand; alone it runs itself
  // (COMMAND) or fails its arity check (CONFIG, CLIENT, OBJECT).
  if (!spec->subcommands.empty() && argv.size() > 1) {
    const CommandSpec* sub = find_subcommand(*spec, argv[1]);
    if (sub == nullptr) {
      error = unknown_subcommand_error(argv);
      return nullptr;
    }
    spec = sub;
  }
  if (!arity_ok(*spec, argv.size())) {
    error = "ERR wrong number of arguments for '" + command_fullname(*spec) + "' command";
    return nullptr;
  }
  return spec;
}

}  // namespace

const CommandSpec* resolve_command(std::span<const std::string_view> argv, std::string& error) {
  assert(!argv.empty());
  return resolve_from(find_command(argv[0]), argv, error);
}

const CommandSpec* resolve_client_command(std::span<const std::string_view> argv,
                                          std::string& error) {
  assert(!argv.empty());
  return resolve_from(find_client_command(argv[0]), argv, error);
}

std::string command_fullname(const CommandSpec& spec) {
  const CommandSpec* parent = parent_of(spec);
  if (parent == nullptr) return std::string(spec.name);
  std::string name(parent->name);
  name.push_back('|');
  name.append(spec.name);
  return name;
}

std::vector<size_t> key_positions(const CommandSpec& spec, std::span<const std::string_view> argv) {
  std::vector<size_t> keys;
  key_positions(spec, argv, keys);
  return keys;
}

void key_positions(const CommandSpec& spec, std::span<const std::string_view> argv,
                   std::vector<size_t>& keys) {
  keys.clear();
  if (spec.find_keys != nullptr) {
    spec.find_keys(argv, keys);
    return;
  }
  const size_t argc = argv.size();
  if (spec.first_key() <= 0 || spec.key_step() <= 0) return;
  int64_t last =
      spec.last_key() < 0 ? static_cast<int64_t>(argc) + spec.last_key() : spec.last_key();
  for (int64_t i = spec.first_key(); i <= last && i < static_cast<int64_t>(argc);
       i += spec.key_step()) {
    keys.push_back(static_cast<size_t>(i));
  }
}

const CommandSpec* dispatch(CommandContext& ctx) {
  if (ctx.argv.empty()) return nullptr;
  std::string error;
  const CommandSpec* spec = resolve_command(ctx.argv, error);
  if (spec == nullptr) {
    ctx.reply.error(error);
    return nullptr;
  }
  assert(spec->handler != nullptr);
  ctx.spec = spec;
  spec->handler(ctx);
  return spec;
}

}  // namespace ringkv::engine
