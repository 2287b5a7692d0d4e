// A stream's RDB encoding, as Redis 7.0.15 saves it (RDB_TYPE_STREAM_LISTPACKS_2): the nodes as
// (16-byte big-endian master ID, listpack) pairs, the length, last, first and largest deleted
// IDs, the entries-added counter, then each consumer group with its last ID, read counter, PEL
// (raw IDs, delivery times and counts) and consumers (name, seen time, the IDs they own).
// Decoding also reads Redis 5/6's RDB_TYPE_STREAM_LISTPACKS, whose missing counters are derived
// as Redis derives them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/rdb/rdb_format.h"
#include "engine/types/stream_type.h"

namespace ringkv::engine {

// Appends the type byte and the stream.
void encode_stream(const StreamObject& stream, std::string& out);

// Reads a stream of RDB type `type` (15 or 19); nullptr when it is malformed or inconsistent.
std::unique_ptr<StreamObject> decode_stream(uint8_t type, rdb::Reader& r);

}  // namespace ringkv::engine
