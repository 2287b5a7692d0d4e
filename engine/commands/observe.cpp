// Observability commands: SLOWLOG, LATENCY, MEMORY and MONITOR, answering as Redis 7.0.15.
// What they report is kept by the server's pipeline in engine::Observability (reached through
// ctx.server); MEMORY USAGE measures a key in the store itself.
#include "engine/commands/observe.h"

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/numbers.h"
#include "engine/command.h"
#include "engine/commands/handler_args.h"
#include "engine/commands/string_ops.h"
#include "engine/stats/observability.h"
#include "protocol/errors.h"

namespace ringkv::engine {
namespace {

constexpr std::string_view kSlowlogHelp[] = {
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
};

constexpr std::string_view kLatencyHelp[] = {
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the "
    "specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
};

constexpr std::string_view kMemoryHelp[] = {
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
};

// The server's observations; every server has them (unit tests without a server get an
// empty set, so the commands still answer).
Observability& observed(CommandContext& ctx) {
  static Observability empty;
  Observability* o = ctx.server != nullptr ? ctx.server->observability() : nullptr;
  return o != nullptr ? *o : empty;
}

int64_t unix_seconds(const CommandContext& ctx) { return ctx.store.now() / 1000; }

void cmd_slowlog_get(CommandContext& ctx) {
  int64_t count = 10;
  if (ctx.argv.size() > 3) {
    reply_subcommand_syntax_error(ctx);
    return;
  }
  if (ctx.argv.size() == 3) {
    const std::optional<int64_t> n = common::parse_integer(ctx.argv[2]);
    if (!n || *n < -1) {
      ctx.reply.error("ERR count should be greater than or equal to -1");
      return;
    }
    count = *n;
  }
  observed(ctx).slowlog.write(ctx.reply, count);
}

void cmd_slowlog_len(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(observed(ctx).slowlog.size()));
}

void cmd_slowlog_reset(CommandContext& ctx) {
  observed(ctx).slowlog.reset();
  ctx.reply.ok();
}

void cmd_slowlog_help(CommandContext& ctx) { reply_help(ctx.reply, kSlowlogHelp); }

void cmd_latency_latest(CommandContext& ctx) {
  const auto& events = observed(ctx).latency.events();
  ctx.reply.array(events.size());
  for (const auto& [event, series] : events) {
    ctx.reply.array(4);
    ctx.reply.bulk(event);
    ctx.reply.integer(series.latest().time);
    ctx.reply.integer(series.latest().latency);
    ctx.reply.integer(series.max);
  }
}

void cmd_latency_history(CommandContext& ctx) {
  const LatencySeries* series = observed(ctx).latency.find(ctx.argv[2]);
  if (series == nullptr) {
    ctx.reply.array(0);
    return;
  }
  const std::vector<LatencySample> samples = series->in_order();
  ctx.reply.array(samples.size());
  for (const LatencySample& s : samples) {
    ctx.reply.array(2);
    ctx.reply.integer(s.time);
    ctx.reply.integer(s.latency);
  }
}

void cmd_latency_graph(CommandContext& ctx) {
  const LatencyMonitor& latency = observed(ctx).latency;
  if (latency.find(ctx.argv[2]) == nullptr) {
    ctx.reply.error("ERR No samples available for event '" + std::string(ctx.argv[2]) + "'");
    return;
  }
  ctx.reply.verbatim(latency.graph(ctx.argv[2], unix_seconds(ctx)));
}

void cmd_latency_doctor(CommandContext& ctx) {
  LatencyDoctorSettings settings;
  if (ctx.server != nullptr) ctx.server->latency_settings(settings);
  settings.now = unix_seconds(ctx);
  ctx.reply.verbatim(observed(ctx).latency.doctor(settings));
}

void cmd_latency_reset(CommandContext& ctx) {
  LatencyMonitor& latency = observed(ctx).latency;
  size_t resets = 0;
  if (ctx.argv.size() == 2) {
    resets = latency.reset(std::nullopt);
  } else {
    for (size_t i = 2; i < ctx.argv.size(); ++i) resets += latency.reset(ctx.argv[i]);
  }
  ctx.reply.integer(static_cast<int64_t>(resets));
}

void cmd_latency_histogram(CommandContext& ctx) {
  observed(ctx).commands.write_histograms(ctx.reply, ctx.argv.subspan(2));
}

void cmd_latency_help(CommandContext& ctx) { reply_help(ctx.reply, kLatencyHelp); }

void cmd_memory_usage(CommandContext& ctx) {
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    int64_t samples = 0;
    if (!equals_ignore_case(ctx.argv[i], "samples") || i + 1 >= ctx.argv.size()) {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
    if (!int64_or_reply(ctx, ctx.argv[i + 1], samples)) return;
    if (samples < 0) {
      ctx.reply.error(protocol::err::kSyntax);
      return;
    }
    ++i;
  }
  // ringkv knows each collection's size exactly, so SAMPLES changes nothing.
  const Entry* entry = ctx.store.peek(ctx.argv[2]);
  if (entry == nullptr) {
    ctx.reply.null();
    return;
  }
  ctx.reply.integer(static_cast<int64_t>(ctx.store.key_memory(*entry)));
}

void cmd_memory_stats(CommandContext& ctx) {
  if (ctx.server == nullptr) {
    ctx.reply.map(0);
    return;
  }
  ctx.server->memory_stats(ctx.reply);
}

void cmd_memory_doctor(CommandContext& ctx) {
  ctx.reply.verbatim(ctx.server != nullptr ? ctx.server->memory_doctor() : std::string());
}

void cmd_memory_malloc_stats(CommandContext& ctx) {
  // ringkv uses glibc's allocator: its own report (malloc_info's XML).
  char* text = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  if (f != nullptr) {
    malloc_info(0, f);
    std::fclose(f);
  }
  ctx.reply.verbatim(text != nullptr ? std::string_view(text, size) : std::string_view());
  std::free(text);
}

void cmd_memory_purge(CommandContext& ctx) {
  // Gives the free pages at the top of the heap and inside it back to the system.
  malloc_trim(0);
  ctx.reply.ok();
}

void cmd_memory_help(CommandContext& ctx) { reply_help(ctx.reply, kMemoryHelp); }

void cmd_monitor(CommandContext& ctx) {
  if (ctx.server == nullptr || ctx.client == nullptr) {
    ctx.reply.error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  ctx.server->monitor(ctx);
}

// The table rows of this family, in the order COMMAND lists them (command_table.cpp
// assembles the families).

constexpr CommandSpec kSlowlogSubcommands[] = {
    {.name = "get",
     .arity = -2,
     .flags = kAdmin | kLoading | kStale,
     .handler = cmd_slowlog_get,
     .group = "server",
     .since = "2.2.12",
     .summary = "Get the slow log's entries",
     .complexity = "O(N) where N is the number of entries returned",
     .syntax = "[count<integer>]",
     .acl_categories = "admin slow dangerous",
     .tips = "request_policy:all_nodes nondeterministic_output",
     .history = "4.0.0|Added client IP address, port and name to the reply."},
    {.name = "len",
     .arity = 2,
     .flags = kAdmin | kLoading | kStale,
     .handler = cmd_slowlog_len,
     .group = "server",
     .since = "2.2.12",
     .summary = "Get the slow log's length",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .tips = "request_policy:all_nodes response_policy:agg_sum nondeterministic_output"},
    {.name = "reset",
     .arity = 2,
     .flags = kAdmin | kLoading | kStale,
     .handler = cmd_slowlog_reset,
     .group = "server",
     .since = "2.2.12",
     .summary = "Clear all entries from the slow log",
     .complexity = "O(N) where N is the number of entries in the slowlog",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    help_row(cmd_slowlog_help, "server", "6.2.0"),
};

constexpr uint32_t kLatencyFlags = kAdmin | kNoscript | kLoading | kStale;
constexpr std::string_view kLatencyTips =
    "nondeterministic_output request_policy:all_nodes response_policy:special";

constexpr CommandSpec kLatencySubcommands[] = {
    {.name = "doctor",
     .arity = 2,
     .flags = kLatencyFlags,
     .handler = cmd_latency_doctor,
     .group = "server",
     .since = "2.8.13",
     .summary = "Return a human readable latency analysis report.",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .tips = kLatencyTips},
    {.name = "graph",
     .arity = 3,
     .flags = kLatencyFlags,
     .handler = cmd_latency_graph,
     .group = "server",
     .since = "2.8.13",
     .summary = "Return a latency graph for the event.",
     .complexity = "O(1)",
     .syntax = "event",
     .acl_categories = "admin slow dangerous",
     .tips = kLatencyTips},
    {.name = "histogram",
     .arity = -2,
     .flags = kLatencyFlags,
     .handler = cmd_latency_histogram,
     .group = "server",
     .since = "7.0.0",
     .summary = "Return the cumulative distribution of latencies of a subset of commands or all.",
     .complexity =
         "O(N) where N is the number of commands with latency information being retrieved.",
     .syntax = "[command]...",
     .acl_categories = "admin slow dangerous",
     .tips = kLatencyTips},
    {.name = "history",
     .arity = 3,
     .flags = kLatencyFlags,
     .handler = cmd_latency_history,
     .group = "server",
     .since = "2.8.13",
     .summary = "Return timestamp-latency samples for the event.",
     .complexity = "O(1)",
     .syntax = "event",
     .acl_categories = "admin slow dangerous",
     .tips = kLatencyTips},
    {.name = "latest",
     .arity = 2,
     .flags = kLatencyFlags,
     .handler = cmd_latency_latest,
     .group = "server",
     .since = "2.8.13",
     .summary = "Return the latest latency samples for all events.",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "admin slow dangerous",
     .tips = kLatencyTips},
    {.name = "reset",
     .arity = -2,
     .flags = kLatencyFlags,
     .handler = cmd_latency_reset,
     .group = "server",
     .since = "2.8.13",
     .summary = "Reset latency data for one or more events.",
     .complexity = "O(1)",
     .syntax = "[event]...",
     .acl_categories = "admin slow dangerous",
     .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = cmd_latency_help,
     .group = "server",
     .since = "2.8.13",
     .summary = "Show helpful text about the different subcommands.",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow"},
};

constexpr CommandSpec kMemorySubcommands[] = {
    {.name = "doctor",
     .arity = 2,
     .flags = 0,
     .handler = cmd_memory_doctor,
     .group = "server",
     .since = "4.0.0",
     .summary = "Outputs memory problems report",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "malloc-stats",
     .arity = 2,
     .flags = 0,
     .handler = cmd_memory_malloc_stats,
     .group = "server",
     .since = "4.0.0",
     .summary = "Show allocator internal stats",
     .complexity = "Depends on how much memory is allocated, could be slow",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "purge",
     .arity = 2,
     .flags = 0,
     .handler = cmd_memory_purge,
     .group = "server",
     .since = "4.0.0",
     .summary = "Ask the allocator to release memory",
     .complexity = "Depends on how much memory is allocated, could be slow",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "stats",
     .arity = 2,
     .flags = 0,
     .handler = cmd_memory_stats,
     .group = "server",
     .since = "4.0.0",
     .summary = "Show memory usage details",
     .complexity = "O(1)",
     .syntax = "",
     .acl_categories = "slow",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "usage",
     .arity = -3,
     .flags = kReadonly,
     .handler = cmd_memory_usage,
     .group = "server",
     .since = "4.0.0",
     .summary = "Estimate the memory usage of a key",
     .complexity = "O(N) where N is the number of samples.",
     .syntax = "key<key> [SAMPLES=count<integer>]",
     .acl_categories = "read slow",
     .key_specs = "RO|2|0|1|0"},
    help_row(cmd_memory_help, "server", "4.0.0"),
};

constexpr CommandSpec kObserveCommands[] = {
    container_row("slowlog", "server", "2.2.12", "A container for slow log commands",
                  kSlowlogSubcommands),
    container_row("latency", "server", "2.8.13", "A container for latency diagnostics commands",
                  kLatencySubcommands),
    container_row("memory", "server", "4.0.0", "A container for memory diagnostics commands",
                  kMemorySubcommands),
    {.name = "monitor",
     .arity = 1,
     .flags = kAdmin | kNoscript | kLoading | kStale,
     .handler = cmd_monitor,
     .group = "server",
     .since = "1.0.0",
     .summary = "Listen for all requests received by the server in real time",
     .complexity = "",
     .syntax = "",
     .acl_categories = "admin slow dangerous"},
};

}  // namespace

void ServerControl::monitor(CommandContext& ctx) {
  ctx.reply.error("ERR MONITOR isn't allowed for DENY BLOCKING client");
}

std::span<const CommandSpec> observe_commands() { return kObserveCommands; }

}  // namespace ringkv::engine
