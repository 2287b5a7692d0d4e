// MODULE, as redis-server 7.0.15 answers it with its default enable-module-command "no": ringkv
// loads no modules, so MODULE LIST is empty, and LOAD, LOADEX and UNLOAD are protected commands
// the server refuses before running them (kProtected). Tools that ask MODULE LIST to learn what
// a server offers get Redis's answer.
#include "engine/commands/module.h"

#include <string_view>

#include "engine/command.h"
#include "engine/commands/handler_args.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kModuleHelp[] = {
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional "
    "arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
};

void cmd_module_help(CommandContext& ctx) { reply_help(ctx.reply, kModuleHelp); }

void cmd_module_list(CommandContext& ctx) { ctx.reply.array(0); }

// Reached only where no server checks protected commands first (the dispatch fuzzer).
void cmd_module_refused(CommandContext& ctx) { ctx.reply.error(protocol::err::kModuleNotAllowed); }

constexpr uint32_t kLoadFlags = kAdmin | kNoscript | kNoAsyncLoading | kProtected;

constexpr CommandSpec kModuleSubcommands[] = {
    help_row(cmd_module_help, "server", "5.0.0"),
    {.name = "list",
     .arity = 2,
     .flags = kAdmin | kNoscript,
     .handler = cmd_module_list,
     .group = "server",
     .since = "4.0.0",
     .summary = "List all modules loaded by the server",
     .complexity = "O(N) where N is the number of loaded modules.",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .tips = "nondeterministic_output_order"},
    {.name = "load",
     .arity = -3,
     .flags = kLoadFlags,
     .handler = cmd_module_refused,
     .group = "server",
     .since = "4.0.0",
     .summary = "Load a module",
     .complexity = "O(1)",
     .syntax = "path [arg]...",
     .acl_categories = "admin slow dangerous"},
    {.name = "loadex",
     .arity = -3,
     .flags = kLoadFlags,
     .handler = cmd_module_refused,
     .group = "server",
     .since = "7.0.0",
     .summary = "Load a module with extended parameters",
     .complexity = "O(1)",
     .syntax = "path [CONFIG=configs: name value]...+ [ARGS=args: arg]...",
     .acl_categories = "admin slow dangerous"},
    {.name = "unload",
     .arity = 3,
     .flags = kLoadFlags,
     .handler = cmd_module_refused,
     .group = "server",
     .since = "4.0.0",
     .summary = "Unload a module",
     .complexity = "O(1)",
     .syntax = "name",
     .acl_categories = "admin slow dangerous"},
};

constexpr CommandSpec kModuleCommands[] = {
    container_row("module", "server", "4.0.0", "A container for module commands",
                  kModuleSubcommands),
};

}  // namespace

std::span<const CommandSpec> module_commands() { return kModuleCommands; }

}  // namespace ringkv::engine
