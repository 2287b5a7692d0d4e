// Transactions: the family's command-table rows. Its handlers are internal to its .cpp file.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> transaction_commands();

}  // namespace ringkv::engine
