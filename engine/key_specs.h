// What a command does to each of its key arguments, from its row's key specs, as Redis 7.0's
// getKeysFromCommandWithSpecs finds it: COMMAND GETKEYSANDFLAGS answers it, and ACL key
// permissions are checked against it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/command.h"

namespace ringkv::engine {

// Key spec flags (Redis's CMD_KEY_*), in the order Redis lists them.
enum KeyFlag : uint16_t {
  kKeyRO = 1 << 0,
  kKeyRW = 1 << 1,
  kKeyOW = 1 << 2,
  kKeyRM = 1 << 3,
  kKeyAccess = 1 << 4,
  kKeyUpdate = 1 << 5,
  kKeyInsert = 1 << 6,
  kKeyDelete = 1 << 7,
  kKeyNotKey = 1 << 8,
  kKeyIncomplete = 1 << 9,
  kKeyVariableFlags = 1 << 10,
};

// The names of the flags set in `flags`, in Redis's order ("RO", "access", ...).
std::vector<std::string_view> key_flag_names(uint16_t flags);

// Whether the command has key arguments (COMMAND GETKEYS's test): a key finder of its own, or a
// key spec not marked not_key.
bool has_key_arguments(const CommandSpec& spec);

// The key arguments of argv (the command's name first) for `spec`, each with the flags of the
// key spec that found it. Commands whose specs cannot say it (a begin search Redis marks unknown,
// or variable flags: SORT's STORE key, SET with or without GET, BITFIELD with or without writes)
// answer with their rows' find_key_flags, as Redis's own key finders for them do.
std::vector<KeyReference> key_references(const CommandSpec& spec,
                                         std::span<const std::string_view> argv);

}  // namespace ringkv::engine
