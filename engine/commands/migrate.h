// MIGRATE: the family's command-table row and its key finder.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// The keys MIGRATE names, as Redis's migrateGetKeys finds them.
void migrate_keys(std::span<const std::string_view> argv, std::vector<size_t>& positions);
// Whether argv[i] is a password or username MIGRATE's AUTH/AUTH2 gives (the slow log and
// MONITOR show "(redacted)" instead, as Redis).
bool migrate_secret(std::span<const std::string_view> argv, size_t i);
void cmd_migrate(CommandContext& ctx);

// This family's rows of the command table, in table order.
std::span<const CommandSpec> migrate_commands();

}  // namespace ringkv::engine
