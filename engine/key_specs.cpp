// Key references from key specs: Redis 7.0's getKeysFromCommandWithSpecs (db.c) over ringkv's
// command rows.
#include "engine/key_specs.h"

#include <optional>
#include <string>
#include <unordered_map>

#include "common/numbers.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kKeyFlagNames[] = {
    "RO",     "RW",     "OW",      "RM",         "access",         "update",
    "insert", "delete", "not_key", "incomplete", "variable_flags",
};

// One parsed key spec of a row ("FLAGS|begin|lastkey|keystep|limit" or
// "FLAGS|begin|keynum|keynumidx,firstkey,keystep").
struct KeySpec {
  uint16_t flags = 0;
  std::string_view keyword;  // begin search by keyword, else by index
  int64_t begin = 0;         // index, or the keyword's startfrom
  bool keynum = false;
  bool unknown = false;         // no argument names its keys (SORT's STORE): the key finder says
  int64_t a = 0, b = 0, c = 0;  // lastkey, keystep, limit / keynumidx, firstkey, keystep
};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 1);
  }
}

int64_t to_int(std::string_view s) { return common::parse_integer(s).value_or(0); }

// The flags a key spec's space-separated flag list names ("RW access delete").
uint16_t parse_key_flags(std::string_view names) {
  uint16_t flags = 0;
  for (std::string_view name : split(names, ' ')) {
    for (size_t i = 0; i < std::size(kKeyFlagNames); ++i) {
      if (name == kKeyFlagNames[i]) flags |= static_cast<uint16_t>(1u << i);
    }
  }
  return flags;
}

KeySpec parse_key_spec(std::string_view text) {
  KeySpec spec;
  const std::vector<std::string_view> fields = split(text, '|');
  spec.flags = parse_key_flags(fields[0]);
  if (fields[1] == "unknown") {
    spec.unknown = true;
    return spec;
  }
  if (fields[1].starts_with("keyword:")) {
    const std::string_view rest = fields[1].substr(8);
    const size_t colon = rest.find(':');
    spec.keyword = rest.substr(0, colon);
    spec.begin = to_int(rest.substr(colon + 1));
  } else {
    spec.begin = to_int(fields[1]);
  }
  if (fields[2] == "keynum") {
    spec.keynum = true;
    const std::vector<std::string_view> v = split(fields[3], ',');
    spec.a = to_int(v[0]);
    spec.b = to_int(v[1]);
    spec.c = to_int(v[2]);
  } else {
    spec.a = to_int(fields[2]);
    spec.b = to_int(fields[3]);
    spec.c = to_int(fields[4]);
  }
  return spec;
}

// Adds the keys of one spec to `out`; false when the spec does not fit argv (Redis then
// discards every spec's keys and asks the command's own key finder).
bool add_spec_keys(const KeySpec& spec, std::span<const std::string_view> argv,
                   std::vector<KeyReference>& out) {
  if (spec.unknown) return false;
  const auto argc = static_cast<int64_t>(argv.size());
  int64_t first = 0;
  if (spec.keyword.empty()) {
    first = spec.begin;
  } else {
    const int64_t start = spec.begin > 0 ? spec.begin : argc + spec.begin;
    const int64_t end = spec.begin > 0 ? argc - 1 : 1;
    for (int64_t i = start; i != end; i = start <= end ? i + 1 : i - 1) {
      if (i >= argc || i < 1) break;
      if (common::equals_ignore_case(argv[static_cast<size_t>(i)], spec.keyword)) {
        first = i + 1;
        break;
      }
    }
    if (first == 0) return true;  // no keyword: no keys from this spec
  }
  int64_t last = 0;
  int64_t step = 1;
  if (spec.keynum) {
    step = spec.c;
    if (first + spec.a >= argc) return false;
    const std::optional<int64_t> n =
        common::parse_integer(argv[static_cast<size_t>(first + spec.a)]);
    if (!n || *n < 0) return false;
    first += spec.b;
    // Redis takes the count as an int (`(int)numkeys`): 2^32 + 1 counts one key, and a count
    // past INT_MAX no overflow.
    last = first + static_cast<int32_t>(static_cast<uint32_t>(*n)) - 1;
  } else {
    step = spec.b;
    if (spec.a >= 0) {
      last = first + spec.a;
    } else if (spec.c == 0) {
      last = argc + spec.a;
    } else {
      last = first + ((argc - first) / spec.c + spec.a);
    }
  }
  if (last >= argc || last < first || first >= argc || step <= 0) return false;
  for (int64_t i = first; i <= last; i += step) {
    out.push_back(KeyReference{static_cast<size_t>(i), spec.flags});
  }
  // An incomplete spec that found its keys does not name them all (MIGRATE's KEYS): Redis asks
  // the command's own finder then.
  return (spec.flags & kKeyIncomplete) == 0;
}

// A row's key specs, parsed once.
struct ParsedKeySpecs {
  std::vector<KeySpec> specs;
  bool has_key_spec = false;  // one not marked not_key
  bool variable = false;      // one marked variable_flags
};

ParsedKeySpecs parse_key_specs(const CommandSpec& spec) {
  ParsedKeySpecs out;
  if (spec.key_specs.empty()) return out;
  for (std::string_view text : split(spec.key_specs.text, ';')) {
    out.specs.push_back(parse_key_spec(text));
    out.has_key_spec = out.has_key_spec || !(out.specs.back().flags & kKeyNotKey);
    out.variable = out.variable || (out.specs.back().flags & kKeyVariableFlags);
  }
  return out;
}

// Every row of the command table (subcommands too), parsed when first asked: ACL checks ask for
// each command a user with key patterns sends.
const std::unordered_map<const CommandSpec*, ParsedKeySpecs>& parsed_table() {
  static const auto* const kTable = [] {
    auto* table = new std::unordered_map<const CommandSpec*, ParsedKeySpecs>();
    for (const CommandSpec& row : command_table()) {
      table->emplace(&row, parse_key_specs(row));
      for (const CommandSpec& sub : row.subcommands) table->emplace(&sub, parse_key_specs(sub));
    }
    return table;
  }();
  return *kTable;
}

// The row's parsed specs; a row outside the table (a test's own) is parsed into `scratch`.
const ParsedKeySpecs& parsed(const CommandSpec& spec, ParsedKeySpecs& scratch) {
  const auto& table = parsed_table();
  if (auto it = table.find(&spec); it != table.end()) return it->second;
  scratch = parse_key_specs(spec);
  return scratch;
}

}  // namespace

std::vector<std::string_view> key_flag_names(uint16_t flags) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < std::size(kKeyFlagNames); ++i) {
    if (flags & (1u << i)) out.push_back(kKeyFlagNames[i]);
  }
  return out;
}

bool has_key_arguments(const CommandSpec& spec) {
  ParsedKeySpecs scratch;
  return spec.find_keys != nullptr || parsed(spec, scratch).has_key_spec;
}

std::vector<KeyReference> key_references(const CommandSpec& spec,
                                         std::span<const std::string_view> argv) {
  std::vector<KeyReference> refs;
  ParsedKeySpecs scratch;
  const ParsedKeySpecs& p = parsed(spec, scratch);
  // Key specs first, when their flags hold for every call; else the command's own finder, with
  // the flags it gives (a movable-keys finder without them: the first spec's); a command with
  // no finder has no keys then.
  if (p.has_key_spec && !p.variable) {
    bool fits = true;
    for (const KeySpec& s : p.specs) {
      if (s.flags & kKeyNotKey) continue;
      if (!add_spec_keys(s, argv, refs)) {
        fits = false;
        break;
      }
    }
    if (fits) return refs;
    refs.clear();
  }
  if (spec.find_key_flags != nullptr) {
    spec.find_key_flags(argv, refs);
  } else if (spec.find_keys != nullptr) {
    const uint16_t flags = p.specs.empty() ? 0 : p.specs.front().flags;
    for (size_t pos : key_positions(spec, argv)) refs.push_back(KeyReference{pos, flags});
  }
  return refs;
}

}  // namespace ringkv::engine
