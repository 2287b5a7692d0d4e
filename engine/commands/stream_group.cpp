// XGROUP CREATE/SETID/DESTROY/CREATECONSUMER/DELCONSUMER/HELP, checking arguments in Redis
// 7.0.15's order (xgroupCommand: options, then the key and group, then the argument count).
// Group changes that Redis signals on no key are reported with data_changed (logged, WATCH
// unaffected).
#include <string>
#include <vector>

#include "engine/commands/handler_args.h"
#include "engine/commands/stream.h"
#include "engine/commands/stream_args.h"
#include "engine/commands/string_ops.h"
#include "engine/types/stream_type.h"
#include "protocol/errors.h"

namespace ringkv::engine {

namespace err = protocol::err;

namespace {

// The part of xgroupCommand every subcommand but HELP shares: CREATE's and SETID's options
// (parsed first), the key (which must exist, unless CREATE MKSTREAM) and, for SETID,
// CREATECONSUMER and DELCONSUMER, the group.
struct GroupTarget {
  std::optional<ObjectWrite<StreamObject>> guard;
  StreamObject* stream = nullptr;
  StreamGroup* group = nullptr;
  bool mkstream = false;
  int64_t entries_read = kInvalidEntriesRead;
};

bool entries_read_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out) {
  if (!int64_or_reply(ctx, arg, out)) return false;
  if (out < 0 && out != kInvalidEntriesRead) {
    ctx.reply.error("ERR value for ENTRIESREAD must be positive or -1");
    return false;
  }
  return true;
}

bool group_target_or_reply(CommandContext& ctx, bool create, bool setid, bool needs_group,
                           GroupTarget& t) {
  const auto& argv = ctx.argv;
  if (create || setid) {
    for (size_t i = 5; i < argv.size();) {
      if (create && equals_ignore_case(argv[i], "mkstream")) {
        t.mkstream = true;
        ++i;
      } else if (equals_ignore_case(argv[i], "entriesread") && i + 1 < argv.size()) {
        if (!entries_read_or_reply(ctx, argv[i + 1], t.entries_read)) return false;
        i += 2;
      } else {
        reply_subcommand_syntax_error(ctx);
        return false;
      }
    }
  }
  auto found = write_or_reply<StreamObject>(ctx, argv[2], false);
  if (!found) return false;
  if (*found) t.stream = found->get();
  t.guard.emplace(std::move(*found));
  if (!t.mkstream) {
    if (t.stream == nullptr) {
      ctx.reply.error(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
          "want to use the MKSTREAM option to create an empty stream automatically.");
      return false;
    }
    t.group = t.stream->group(argv[3]);
    if (t.group == nullptr && needs_group) {
      ctx.reply.error("NOGROUP No such consumer group '" + std::string(argv[3]) +
                      "' for key name '" + std::string(argv[2]) + "'");
      return false;
    }
  }
  // Only now the argument count (Redis checks it when it picks the subcommand).
  if ((create && argv.size() > 8) || (setid && argv.size() != 5 && argv.size() != 7)) {
    reply_subcommand_syntax_error(ctx);
    return false;
  }
  return true;
}

}  // namespace

void cmd_xgroup_create(CommandContext& ctx) {
  GroupTarget t;
  if (!group_target_or_reply(ctx, true, false, false, t)) return;
  StreamID id;
  if (ctx.argv[4] == "$") {
    id = t.stream != nullptr ? t.stream->last_id() : kMinStreamID;
  } else if (!strict_id_or_reply(ctx, ctx.argv[4], id)) {
    return;
  }
  if (t.stream == nullptr) {
    t.guard.reset();
    auto created = write_object<StreamObject>(ctx.store, ctx.argv[2], true);
    t.stream = created.value().get();
    t.guard.emplace(std::move(created.value()));
    ctx.key_modified(ctx.argv[2]);
  } else if (t.mkstream) {
    t.group = t.stream->group(ctx.argv[3]);
  }
  if (t.stream->create_group(ctx.argv[3], id, t.entries_read) == nullptr) {
    ctx.reply.error("BUSYGROUP Consumer Group name already exists");
    return;
  }
  ctx.data_changed(ctx.argv[2]);
  ctx.notify(common::kNotifyStream, "xgroup-create", ctx.argv[2]);
  ctx.reply.ok();
}

void cmd_xgroup_setid(CommandContext& ctx) {
  GroupTarget t;
  if (!group_target_or_reply(ctx, false, true, true, t)) return;
  StreamID id;
  if (ctx.argv[4] == "$") {
    id = t.stream->last_id();
  } else if (!id_or_reply(ctx, ctx.argv[4], id)) {
    return;
  }
  t.group->last_id = id;
  t.group->entries_read = t.entries_read;
  ctx.data_changed(ctx.argv[2]);
  ctx.notify(common::kNotifyStream, "xgroup-setid", ctx.argv[2]);
  ctx.reply.ok();
}

void cmd_xgroup_destroy(CommandContext& ctx) {
  GroupTarget t;
  if (!group_target_or_reply(ctx, false, false, false, t)) return;
  if (!t.stream->destroy_group(ctx.argv[3])) {
    ctx.reply.integer(0);
    return;
  }
  ctx.data_changed(ctx.argv[2]);
  ctx.notify(common::kNotifyStream, "xgroup-destroy", ctx.argv[2]);
  // Clients blocked in XREADGROUP on this group learn it is gone.
  ctx.key_ready(ctx.argv[2]);
  ctx.reply.integer(1);
}

void cmd_xgroup_createconsumer(CommandContext& ctx) {
  GroupTarget t;
  if (!group_target_or_reply(ctx, false, false, true, t)) return;
  bool created = false;
  t.group->get_or_create_consumer(ctx.argv[4], ctx.store.now(), &created);
  if (created) {
    ctx.data_changed(ctx.argv[2]);
    ctx.notify(common::kNotifyStream, "xgroup-createconsumer", ctx.argv[2]);
  }
  ctx.reply.integer(created ? 1 : 0);
}

void cmd_xgroup_delconsumer(CommandContext& ctx) {
  GroupTarget t;
  if (!group_target_or_reply(ctx, false, false, true, t)) return;
  const int64_t pending = t.group->delete_consumer(ctx.argv[4]);
  if (pending >= 0) {
    ctx.data_changed(ctx.argv[2]);
    ctx.notify(common::kNotifyStream, "xgroup-delconsumer", ctx.argv[2]);
  }
  ctx.reply.integer(pending < 0 ? 0 : pending);
}

namespace {

constexpr std::string_view kXGroupHelp[] = {
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
};

void cmd_xgroup_help(CommandContext& ctx) { reply_help(ctx.reply, kXGroupHelp); }

constexpr CommandSpec kXGroupSubcommands[] = {
    {.name = "create",
     .arity = -5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_xgroup_create,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Create a consumer group.",
     .complexity = "O(1)",
     .syntax = "key<key> groupname (id: id | new_id:\"$\") [MKSTREAM] "
               "[ENTRIESREAD=entries_read<integer>]",
     .acl_categories = "write stream slow",
     .key_specs = "RW insert|2|0|1|0",
     .history = "7.0.0|Added the `entries_read` named argument."},
    {.name = "destroy",
     .arity = 4,
     .flags = kWrite,
     .handler = cmd_xgroup_destroy,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Destroy a consumer group.",
     .complexity = "O(N) where N is the number of entries in the group's pending entries list "
                   "(PEL).",
     .syntax = "key<key> groupname",
     .acl_categories = "write stream slow",
     .key_specs = "RW delete|2|0|1|0"},
    {.name = "setid",
     .arity = -5,
     .flags = kWrite,
     .handler = cmd_xgroup_setid,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Set a consumer group to an arbitrary last delivered ID value.",
     .complexity = "O(1)",
     .syntax = "key<key> groupname (id: id | new_id:\"$\") [ENTRIESREAD=entries_read<integer>]",
     .acl_categories = "write stream slow",
     .key_specs = "RW update|2|0|1|0",
     .history = "7.0.0|Added the optional `entries_read` argument."},
    help_row(cmd_xgroup_help, "stream", "5.0.0", "stream slow"),
    {.name = "delconsumer",
     .arity = 5,
     .flags = kWrite,
     .handler = cmd_xgroup_delconsumer,
     .group = "stream",
     .since = "5.0.0",
     .summary = "Delete a consumer from a consumer group.",
     .complexity = "O(1)",
     .syntax = "key<key> groupname consumername",
     .acl_categories = "write stream slow",
     .key_specs = "RW delete|2|0|1|0"},
    {.name = "createconsumer",
     .arity = 5,
     .flags = kWrite | kDenyOom,
     .handler = cmd_xgroup_createconsumer,
     .group = "stream",
     .since = "6.2.0",
     .summary = "Create a consumer in a consumer group.",
     .complexity = "O(1)",
     .syntax = "key<key> groupname consumername",
     .acl_categories = "write stream slow",
     .key_specs = "RW insert|2|0|1|0"},
};

constexpr CommandSpec kStreamGroupCommands[] = {
    container_row("xgroup", "stream", "5.0.0", "A container for consumer groups commands",
                  kXGroupSubcommands),
};

}  // namespace

std::span<const CommandSpec> stream_group_commands() { return kStreamGroupCommands; }

}  // namespace ringkv::engine
