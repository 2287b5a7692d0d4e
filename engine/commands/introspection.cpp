// INFO and COMMAND (COUNT, INFO, DOCS, LIST, GETKEYS, GETKEYSANDFLAGS, HELP): the server describing
// itself. COMMAND is generated from the command table, INFO from ctx.server (ServerControl).
#include "engine/commands/introspection.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include "common/glob.h"
#include "engine/command.h"
#include "engine/command_docs.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/key_specs.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace {

using protocol::ReplyWriter;

// Flag names in the order COMMAND INFO lists them (the order of the CommandFlag bits).
constexpr std::string_view kFlagNames[] = {
    "write",   "readonly",     "denyoom",           "admin",
    "pubsub",  "noscript",     "blocking",          "loading",
    "stale",   "skip_monitor", "skip_slowlog",      "asking",
    "fast",    "no_auth",      "no_mandatory_keys", "no_async_loading",
    "no_multi"};
constexpr std::string_view kAllowBusyName = "allow_busy";

constexpr std::string_view kCommandHelp[] = {
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
};

// Splits `s` at `sep`, skipping nothing (empty fields are kept), calling f on each piece.
template <typename F>
void split(std::string_view s, char sep, F&& f) {
  if (s.empty()) return;
  for (;;) {
    size_t at = s.find(sep);
    f(s.substr(0, at));
    if (at == s.npos) return;
    s.remove_prefix(at + 1);
  }
}

size_t count_fields(std::string_view s, char sep) {
  size_t n = 0;
  split(s, sep, [&](std::string_view) { ++n; });
  return n;
}

int64_t to_int(std::string_view s) {
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// A row by Redis's full name ("get", "config|get"), as COMMAND INFO/DOCS look names up: the
// command part under the name clients use (renamed commands under their new name).
const CommandSpec* find_by_fullname(std::string_view name) {
  size_t bar = name.find('|');
  const CommandSpec* spec = find_client_command(name.substr(0, bar));
  if (spec == nullptr || bar == name.npos) return spec;
  return find_subcommand(*spec, name.substr(bar + 1));
}

// One key spec, "FLAGS|index|lastkey|keystep|limit[|notes]" (index may be
// "keyword:TOKEN:startfrom", or "unknown" for keys no argument names), in COMMAND INFO's shape.
void write_key_spec(ReplyWriter& reply, std::string_view spec) {
  std::string_view fields[6];
  size_t n = 0;
  split(spec, '|', [&](std::string_view f) {
    if (n < 6) fields[n++] = f;
  });
  bool notes = n == 6;
  reply.map(notes ? 4 : 3);
  if (notes) {
    reply.bulk("notes");
    reply.bulk(fields[5]);
  }
  reply.bulk("flags");
  reply.set(count_fields(fields[0], ' '));
  split(fields[0], ' ', [&](std::string_view f) { reply.simple(f); });
  reply.bulk("begin_search");
  reply.map(2);
  reply.bulk("type");
  if (fields[1] == "unknown") {
    // Keys Redis cannot locate from the arguments (SORT's BY/GET patterns and STORE).
    reply.bulk("unknown");
    reply.bulk("spec");
    reply.map(0);
    reply.bulk("find_keys");
    reply.map(2);
    reply.bulk("type");
    reply.bulk("unknown");
    reply.bulk("spec");
    reply.map(0);
    return;
  }
  if (fields[1].starts_with("keyword:")) {
    // "keyword:TOKEN:startfrom": the keys start after the TOKEN argument (XREAD's STREAMS).
    const std::string_view rest = fields[1].substr(8);
    const size_t colon = rest.find(':');
    reply.bulk("keyword");
    reply.bulk("spec");
    reply.map(2);
    reply.bulk("keyword");
    reply.bulk(rest.substr(0, colon));
    reply.bulk("startfrom");
    reply.integer(to_int(rest.substr(colon + 1)));
  } else {
    reply.bulk("index");
    reply.bulk("spec");
    reply.map(1);
    reply.bulk("index");
    reply.integer(to_int(fields[1]));
  }
  reply.bulk("find_keys");
  reply.map(2);
  reply.bulk("type");
  if (fields[2] == "keynum") {
    // "FLAGS|begin|keynum|keynumidx,firstkey,keystep": the keys follow a count argument.
    int64_t v[3] = {0, 0, 0};
    size_t k = 0;
    split(fields[3], ',', [&](std::string_view f) {
      if (k < 3) v[k++] = to_int(f);
    });
    reply.bulk("keynum");
    reply.bulk("spec");
    reply.map(3);
    reply.bulk("keynumidx");
    reply.integer(v[0]);
    reply.bulk("firstkey");
    reply.integer(v[1]);
    reply.bulk("keystep");
    reply.integer(v[2]);
    return;
  }
  reply.bulk("range");
  reply.bulk("spec");
  reply.map(3);
  reply.bulk("lastkey");
  reply.integer(to_int(fields[2]));
  reply.bulk("keystep");
  reply.integer(to_int(fields[3]));
  reply.bulk("limit");
  reply.integer(to_int(fields[4]));
}

void write_command_info(ReplyWriter& reply, const CommandSpec& spec) {
  reply.array(10);
  reply.bulk(command_fullname(spec));
  reply.integer(spec.arity);
  size_t nflags = 0;
  for (size_t i = 0; i < std::size(kFlagNames); ++i) nflags += (spec.flags >> i) & 1;
  // Redis lists "movablekeys" (commands whose keys move with their arguments) just before
  // "allow_busy".
  const bool movable = spec.find_keys != nullptr;
  const bool busy = (spec.flags & kAllowBusy) != 0;
  reply.set(nflags + (movable ? 1 : 0) + (busy ? 1 : 0));
  for (size_t i = 0; i < std::size(kFlagNames); ++i) {
    if ((spec.flags >> i) & 1) reply.simple(kFlagNames[i]);
  }
  if (movable) reply.simple("movablekeys");
  if (busy) reply.simple(kAllowBusyName);
  reply.integer(spec.first_key());
  reply.integer(spec.last_key());
  reply.integer(spec.key_step());
  reply.set(count_fields(spec.acl_categories, ' '));
  split(spec.acl_categories, ' ', [&](std::string_view c) { reply.simple("@" + std::string(c)); });
  reply.set(count_fields(spec.tips, ' '));
  split(spec.tips, ' ', [&](std::string_view t) { reply.bulk(t); });
  reply.set(count_fields(spec.key_specs.text, ';'));
  split(spec.key_specs.text, ';', [&](std::string_view s) { write_key_spec(reply, s); });
  if (spec.subcommands.empty()) {
    reply.set(0);
  } else {
    reply.array(spec.subcommands.size());
    for (const CommandSpec& sub : spec.subcommands) write_command_info(reply, sub);
  }
}

void write_command_docs(ReplyWriter& reply, const CommandSpec& spec) {
  std::vector<DocArg> args;
  parse_syntax(spec.syntax, args);
  // Redis leaves out a complexity it does not document (MONITOR) and gives some internal
  // commands (SYNC, PSYNC) none.
  reply.map(3 + !spec.complexity.empty() + !spec.doc_flags.empty() +
            !spec.deprecated_since.empty() + !spec.replaced_by.empty() + !spec.history.empty() +
            !args.empty() + !spec.subcommands.empty());
  reply.bulk("summary");
  reply.bulk(spec.summary);
  reply.bulk("since");
  reply.bulk(spec.since);
  reply.bulk("group");
  reply.bulk(spec.group);
  if (!spec.complexity.empty()) {
    reply.bulk("complexity");
    reply.bulk(spec.complexity);
  }
  if (!spec.doc_flags.empty()) {
    reply.bulk("doc_flags");
    reply.set(count_fields(spec.doc_flags, ' '));
    split(spec.doc_flags, ' ', [&](std::string_view f) { reply.simple(f); });
  }
  if (!spec.deprecated_since.empty()) {
    reply.bulk("deprecated_since");
    reply.bulk(spec.deprecated_since);
  }
  if (!spec.replaced_by.empty()) {
    reply.bulk("replaced_by");
    reply.bulk(spec.replaced_by);
  }
  if (!spec.history.empty()) {
    reply.bulk("history");
    reply.set(count_fields(spec.history, '\n'));
    split(spec.history, '\n', [&](std::string_view entry) {
      size_t bar = entry.find('|');
      reply.array(2);
      reply.bulk(entry.substr(0, bar));
      reply.bulk(entry.substr(bar + 1));
    });
  }
  if (!args.empty()) {
    reply.bulk("arguments");
    write_doc_args(reply, args);
  }
  if (!spec.subcommands.empty()) {
    reply.bulk("subcommands");
    reply.map(spec.subcommands.size());
    for (const CommandSpec& sub : spec.subcommands) {
      reply.bulk(command_fullname(sub));
      write_command_docs(reply, sub);
    }
  }
}

// The top-level rows clients can reach (rename-command may have disabled some); a renamed
// command is reported under its original name, as Redis does.
std::vector<const CommandSpec*> enabled_commands() {
  std::vector<const CommandSpec*> out;
  for (const CommandSpec& spec : command_table()) {
    if (command_enabled(spec)) out.push_back(&spec);
  }
  return out;
}

void write_all_command_info(ReplyWriter& reply) {
  std::vector<const CommandSpec*> enabled = enabled_commands();
  reply.array(enabled.size());
  for (const CommandSpec* spec : enabled) write_command_info(reply, *spec);
}

bool has_category(const CommandSpec& spec, std::string_view category) {
  bool found = false;
  split(spec.acl_categories, ' ',
        [&](std::string_view c) { found |= equals_ignore_case(c, category); });
  return found;
}

// COMMAND LIST: names of the rows passing `keep`, subcommands after their parent.
template <typename F>
void collect_names(std::span<const CommandSpec> rows, F&& keep, std::vector<std::string>& out) {
  for (const CommandSpec& spec : rows) {
    if (!command_enabled(spec)) continue;
    std::string name = command_fullname(spec);
    if (keep(spec, name)) out.push_back(std::move(name));
    collect_names(spec.subcommands, keep, out);
  }
}

}  // namespace

static void cmd_info(CommandContext& ctx) {
  std::vector<std::string> lowered;
  lowered.reserve(ctx.argv.size() - 1);
  for (size_t i = 1; i < ctx.argv.size(); ++i) lowered.push_back(to_lower(ctx.argv[i]));
  std::vector<std::string_view> sections(lowered.begin(), lowered.end());
  ctx.reply.verbatim(ctx.server->info(sections));
}

void cmd_command(CommandContext& ctx) { write_all_command_info(ctx.reply); }

static void cmd_command_count(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(enabled_commands().size()));
}

static void cmd_command_info(CommandContext& ctx) {
  if (ctx.argv.size() == 2) {
    write_all_command_info(ctx.reply);
    return;
  }
  ctx.reply.array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    const CommandSpec* spec = find_by_fullname(ctx.argv[i]);
    if (spec == nullptr) {
      ctx.reply.null();
    } else {
      write_command_info(ctx.reply, *spec);
    }
  }
}

static void cmd_command_docs(CommandContext& ctx) {
  std::vector<const CommandSpec*> found;
  if (ctx.argv.size() == 2) {
    found = enabled_commands();
  } else {
    for (size_t i = 2; i < ctx.argv.size(); ++i) {
      if (const CommandSpec* spec = find_by_fullname(ctx.argv[i])) found.push_back(spec);
    }
  }
  ctx.reply.map(found.size());
  for (const CommandSpec* spec : found) {
    ctx.reply.bulk(command_fullname(*spec));
    write_command_docs(ctx.reply, *spec);
  }
}

static void cmd_command_list(CommandContext& ctx) {
  std::vector<std::string> names;
  if (ctx.argv.size() == 2) {
    collect_names(
        command_table(), [](const CommandSpec&, const std::string&) { return true; }, names);
  } else if (ctx.argv.size() == 5 && equals_ignore_case(ctx.argv[2], "filterby")) {
    std::string_view type = ctx.argv[3];
    std::string_view arg = ctx.argv[4];
    if (equals_ignore_case(type, "module")) {
      // ringkv loads no modules, so no command belongs to one.
    } else if (equals_ignore_case(type, "aclcat")) {
      collect_names(
          command_table(),
          [&](const CommandSpec& spec, const std::string&) { return has_category(spec, arg); },
          names);
    } else if (equals_ignore_case(type, "pattern")) {
      collect_names(
          command_table(),
          [&](const CommandSpec&, const std::string& name) {
            return common::glob_match(arg, name, true);
          },
          names);
    } else {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
  } else {
    ctx.reply.error(protocol::err::kSyntax);
    return;
  }
  ctx.reply.array(names.size());
  for (const std::string& name : names) ctx.reply.bulk(name);
}

// COMMAND GETKEYS and GETKEYSANDFLAGS (Redis's getKeysSubcommandImpl).
static void command_getkeys(CommandContext& ctx, bool with_flags) {
  std::span<const std::string_view> target = ctx.argv.subspan(2);
  const CommandSpec* spec = find_client_command(target[0]);
  if (spec != nullptr && !spec->subcommands.empty() && target.size() > 1) {
    spec = find_subcommand(*spec, target[1]);
  }
  if (spec == nullptr) {
    ctx.reply.error("ERR Invalid command specified");
    return;
  }
  if (!has_key_arguments(*spec)) {
    ctx.reply.error("ERR The command has no key arguments");
    return;
  }
  int argc = static_cast<int>(target.size());
  if ((spec->arity > 0 && spec->arity != argc) || argc < -spec->arity) {
    ctx.reply.error("ERR Invalid number of arguments specified for command");
    return;
  }
  const std::vector<KeyReference> keys = key_references(*spec, target);
  if (keys.empty() && !(spec->flags & kNoMandatoryKeys)) {
    ctx.reply.error("ERR Invalid arguments specified for command");
    return;
  }
  ctx.reply.array(keys.size());
  for (const KeyReference& k : keys) {
    if (!with_flags) {
      ctx.reply.bulk(target[k.position]);
      continue;
    }
    ctx.reply.array(2);
    ctx.reply.bulk(target[k.position]);
    const std::vector<std::string_view> names = key_flag_names(k.flags);
    ctx.reply.set(names.size());
    for (std::string_view name : names) ctx.reply.simple(name);
  }
}

static void cmd_command_getkeys(CommandContext& ctx) { command_getkeys(ctx, false); }

static void cmd_command_getkeysandflags(CommandContext& ctx) { command_getkeys(ctx, true); }

static void cmd_command_help(CommandContext& ctx) { reply_help(ctx.reply, kCommandHelp); }

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kCommandSubcommands[] = {
    {.name = "count",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = cmd_command_count,
     .group = "server",
     .since = "2.8.13",
     .summary = "Get total number of Redis commands",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow connection"},
    {.name = "info",
     .arity = -2,
     .flags = kLoading | kStale,
     .handler = cmd_command_info,
     .group = "server",
     .since = "2.8.13",
     .summary = "Get array of specific Redis command details, or all when no argument is given.",
     .complexity = "O(N) where N is the number of commands to look up",
     .syntax = "[command-name]...",
     .acl_categories = "slow connection",
     .tips = "nondeterministic_output_order",
     .history = "7.0.0|Allowed to be called with no argument to get info on all commands."},
    {.name = "docs",
     .arity = -2,
     .flags = kLoading | kStale,
     .handler = cmd_command_docs,
     .group = "server",
     .since = "7.0.0",
     .summary = "Get array of specific Redis command documentation",
     .complexity = "O(N) where N is the number of commands to look up",
     .syntax = "[command-name]...",
     .acl_categories = "slow connection",
     .tips = "nondeterministic_output_order"},
    {.name = "list",
     .arity = -2,
     .flags = kLoading | kStale,
     .handler = cmd_command_list,
     .group = "server",
     .since = "7.0.0",
     .summary = "Get an array of Redis command names",
     .complexity = "O(N) where N is the total number of Redis commands",
     .syntax =
         "[FILTERBY=filterby: MODULE=module-name | ACLCAT=category | PATTERN=pattern<pattern>]",
     .acl_categories = "slow connection",
     .tips = "nondeterministic_output_order"},
    {.name = "getkeys",
     .arity = -4,
     .flags = kLoading | kStale,
     .handler = cmd_command_getkeys,
     .group = "server",
     .since = "2.8.13",
     .summary = "Extract keys given a full Redis command",
     .complexity = "O(N) where N is the number of arguments to the command",
     .syntax = "",
     .acl_categories = "slow connection"},
    {.name = "getkeysandflags",
     .arity = -4,
     .flags = kLoading | kStale,
     .handler = cmd_command_getkeysandflags,
     .group = "server",
     .since = "7.0.0",
     .summary = "Extract keys and access flags given a full Redis command",
     .complexity = "O(N) where N is the number of arguments to the command",
     .syntax = "",
     .acl_categories = "slow connection"},
    help_row(cmd_command_help, "server", "5.0.0", "slow connection"),
};

constexpr CommandSpec kIntrospectionCommands[] = {
    {.name = "info",
     .arity = -1,
     .flags = kLoading | kStale,
     .handler = cmd_info,
     .group = "server",
     .since = "1.0.0",
     .summary = "Get information and statistics about the server",
     .complexity = "O(1)",
     .syntax = "[section]...",
     .acl_categories = "slow dangerous",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special",
     .history = "7.0.0|Added support for taking multiple section arguments."},
    {.name = "command",
     .arity = -1,
     .flags = kLoading | kStale,
     .handler = cmd_command,
     .group = "server",
     .since = "2.8.13",
     .summary = "Get array of Redis command details",
     .complexity = "O(N) where N is the total number of Redis commands",
     .syntax = "",
     .subcommands = kCommandSubcommands,
     .acl_categories = "slow connection",
     .tips = "nondeterministic_output_order"},
};

}  // namespace

std::span<const CommandSpec> introspection_commands() { return kIntrospectionCommands; }

}  // namespace ringkv::engine
