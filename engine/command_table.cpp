// The command table: one row per command and subcommand ringkv serves, assembled once from the
// families' rows (engine/commands/<family>.cpp ends with its own) in the order COMMAND lists
// them. Names, arities, flags, key positions, ACL categories, tips, key specs and docs are those
// of Redis 7.0.15, so COMMAND INFO/DOCS answer as Redis does; kKeyspaceWide and kSplittable are
// ringkv's routing flags.
#include <span>
#include <vector>

#include "engine/command.h"
#include "engine/commands/acl.h"
#include "engine/commands/bitmap.h"
#include "engine/commands/connection.h"
#include "engine/commands/debug.h"
#include "engine/commands/dump.h"
#include "engine/commands/geo.h"
#include "engine/commands/hash.h"
#include "engine/commands/hyperloglog.h"
#include "engine/commands/introspection.h"
#include "engine/commands/keys.h"
#include "engine/commands/keyspace.h"
#include "engine/commands/lcs.h"
#include "engine/commands/list.h"
#include "engine/commands/list_pop.h"
#include "engine/commands/lolwut.h"
#include "engine/commands/migrate.h"
#include "engine/commands/module.h"
#include "engine/commands/observe.h"
#include "engine/commands/pubsub.h"
#include "engine/commands/replication.h"
#include "engine/commands/server.h"
#include "engine/commands/set.h"
#include "engine/commands/sort.h"
#include "engine/commands/stream.h"
#include "engine/commands/string.h"
#include "engine/commands/transaction.h"
#include "engine/commands/zset.h"
#include "engine/commands/zset_combine.h"
#include "engine/commands/zset_pop.h"
#include "engine/scripting/function_commands.h"
#include "engine/scripting/scripting_commands.h"

namespace ringkv::engine {

namespace {

using Family = std::span<const CommandSpec> (*)();

// The families in table order.
constexpr Family kFamilies[] = {
    pubsub_commands,        string_commands,       hash_commands,           list_commands,
    list_pop_commands,      set_commands,          zset_commands,           zset_pop_commands,
    zset_combine_commands,  keys_commands,         keyspace_commands,       connection_commands,
    introspection_commands, transaction_commands,  server_commands,         dump_commands,
    scripting_commands,     bitmap_commands,       hyperloglog_commands,    stream_commands,
    stream_read_commands,   stream_group_commands, stream_pending_commands, stream_info_commands,
    observe_commands,       debug_commands,        replication_commands,    geo_commands,
    lcs_commands,           acl_commands,          function_commands,       sort_commands,
    module_commands,        migrate_commands,      lolwut_commands,
};

std::vector<CommandSpec> assemble() {
  std::vector<CommandSpec> rows;
  for (Family family : kFamilies) {
    const std::span<const CommandSpec> part = family();
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

}  // namespace

std::span<const CommandSpec> command_table() {
  // Built on first use and never changed, so row addresses stay valid for the process.
  static const std::vector<CommandSpec> kTable = assemble();
  return kTable;
}

}  // namespace ringkv::engine
