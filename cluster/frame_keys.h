// The keys a run of a replication stream's frames writes: what a replica that missed those
// frames lacks (see Replication::resume_before_missed).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/frame_log.h"

namespace ringkv::engine {
struct CommandSpec;
}

namespace ringkv::cluster {

// The database the key at `pos` of a write run in database `db` lives in: `db`, but for the
// destination (position 2) of COPY ... DB n.
int key_database(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                 size_t pos, int db);

// Appends to `keys` the keys (database, name) the frames of `backlog` from offset `from` up to
// `to` (not included) write: a frame's RINGKV.DB names its database, a SELECT inside a MULTI
// block that of the block's commands (MOVE writes its key in both databases, COPY ... DB n its
// destination in n). False when one of them is no longer kept, or writes what
// no key names (a flush, a keyless record, SWAPDB).
bool keys_of_frames(const FrameLog& backlog, uint64_t from, uint64_t to,
                    std::vector<std::pair<int, std::string>>& keys);

}  // namespace ringkv::cluster
