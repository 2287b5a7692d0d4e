// Transaction commands. The server queues what a client sends between MULTI and EXEC; these
// handlers hand MULTI, EXEC, DISCARD, WATCH and UNWATCH to it.
#include "engine/handlers.h"

namespace ringkv::engine {

void cmd_multi(CommandContext& ctx) { ctx.server->multi(ctx); }
void cmd_exec(CommandContext& ctx) { ctx.server->exec(ctx); }
void cmd_discard(CommandContext& ctx) { ctx.server->discard(ctx); }
void cmd_watch(CommandContext& ctx) { ctx.server->watch(ctx); }
void cmd_unwatch(CommandContext& ctx) { ctx.server->unwatch(ctx); }

}  // namespace ringkv::engine
