// LOLWUT: the family's command-table row.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> lolwut_commands();

}  // namespace ringkv::engine
