// Replication: WAIT, ROLE, REPLICAOF, SLAVEOF and FAILOVER — the family's command-table rows. The
// work is the server's (ServerControl::wait_replicas, role): it knows the client's last write and
// the replicas.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> replication_commands();

}  // namespace ringkv::engine
