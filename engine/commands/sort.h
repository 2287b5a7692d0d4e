// SORT and SORT_RO: the table rows and their handlers (sort.cpp).
#pragma once

#include <span>

#include "engine/command.h"

namespace ringkv::engine {

// This family's rows of the command table, in table order.
std::span<const CommandSpec> sort_commands();

}  // namespace ringkv::engine
