// MODULE: the family's command-table rows.
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> module_commands();

}  // namespace ringkv::engine
