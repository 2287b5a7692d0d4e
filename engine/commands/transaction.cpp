// Transaction commands. The server queues what a client sends between MULTI and EXEC; these
// handlers hand MULTI, EXEC, DISCARD, WATCH and UNWATCH to it.
#include "engine/commands/transaction.h"

namespace ringkv::engine {

static void cmd_multi(CommandContext& ctx) { ctx.server->multi(ctx); }
static void cmd_exec(CommandContext& ctx) { ctx.server->exec(ctx); }
static void cmd_discard(CommandContext& ctx) { ctx.server->discard(ctx); }
static void cmd_watch(CommandContext& ctx) { ctx.server->watch(ctx); }
static void cmd_unwatch(CommandContext& ctx) { ctx.server->unwatch(ctx); }

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).
namespace {

constexpr CommandSpec kTransactionCommands[] = {
    {.name = "multi",
     .arity = 1,
     .flags = kRunsInMulti | kNoscript | kLoading | kStale | kFast | kAllowBusy,
     .handler = cmd_multi,
     .group = "transactions",
     .since = "1.2.0",
     .summary = "Mark the start of a transaction block",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "fast transaction"},
    {.name = "exec",
     .arity = 1,
     .flags = kRunsInMulti | kNoscript | kLoading | kStale | kSkipSlowlog,
     .handler = cmd_exec,
     .group = "transactions",
     .since = "1.2.0",
     .summary = "Execute all commands issued after MULTI",
     .complexity = "Depends on commands in the transaction",
     .syntax = "",
     .acl_categories = "slow transaction"},
    {.name = "discard",
     .arity = 1,
     .flags = kRunsInMulti | kNoscript | kLoading | kStale | kFast | kAllowBusy,
     .handler = cmd_discard,
     .group = "transactions",
     .since = "2.0.0",
     .summary = "Discard all commands issued after MULTI",
     .complexity = "O(N), when N is the number of queued commands",
     .syntax = "",
     .acl_categories = "fast transaction"},
    {.name = "watch",
     .arity = -2,
     .flags = kRunsInMulti | kNoscript | kLoading | kStale | kFast | kAllowBusy,
     .handler = cmd_watch,
     .group = "transactions",
     .since = "2.2.0",
     .summary = "Watch the given keys to determine execution of the MULTI/EXEC block",
     .complexity = "O(1) for every key.",
     .syntax = "key<key>...",
     .acl_categories = "fast transaction",
     .key_specs = "RO|1|-1|1|0"},
    {.name = "unwatch",
     .arity = 1,
     .flags = kNoscript | kLoading | kStale | kFast | kAllowBusy,
     .handler = cmd_unwatch,
     .group = "transactions",
     .since = "2.2.0",
     .summary = "Forget about all watched keys",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "fast transaction"},
};

}  // namespace

std::span<const CommandSpec> transaction_commands() { return kTransactionCommands; }

}  // namespace ringkv::engine
