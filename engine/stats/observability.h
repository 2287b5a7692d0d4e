// What a node observes of its own commands, for the commands that report it: per-command and
// per-error counters (INFO commandstats/errorstats/latencystats, LATENCY HISTOGRAM), the slow
// log (SLOWLOG) and the latency monitor (LATENCY). The server's pipeline fills it.
#pragma once

#include "engine/stats/command_stats.h"
#include "engine/stats/latency_monitor.h"
#include "engine/stats/slowlog.h"

namespace ringkv::engine {

struct Observability {
  CommandStats commands;
  ErrorStats errors;
  SlowLog slowlog;
  LatencyMonitor latency;
};

}  // namespace ringkv::engine
