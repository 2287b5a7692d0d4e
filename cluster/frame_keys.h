// The keys a run of a replication stream's frames writes: what a replica that missed those
// frames lacks (see Replication::resume_before_missed).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cluster/frame_log.h"

namespace ringkv::cluster {

// Appends to `keys` the keys (database, name) the frames of `backlog` from offset `from` up to
// `to` (not included) write: a frame's RINGKV.DB names its database, a SELECT inside a MULTI
// block that of the block's commands. False when one of them is no longer kept, or writes what
// no key names (a flush, a keyless record, a write into another database).
bool keys_of_frames(const FrameLog& backlog, uint64_t from, uint64_t to,
                    std::vector<std::pair<int, std::string>>& keys);

}  // namespace ringkv::cluster
