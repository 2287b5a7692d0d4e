// One key's value in Redis's RDB encoding: what DUMP/RESTORE payloads carry, and what RDB files,
// migration and full resync will carry (the one serialization of a value). Pure: no I/O.
//
// It lives in engine/ rather than persistence/ because DUMP and RESTORE are engine commands and
// persistence depends on engine (persistence → engine): persistence's RDB files reuse it from here.
//
// Encoding, as Redis 7.0.15 saves each of ringkv's encodings:
//   string             type 0: integer encodings for int32 values, LZF above 20 bytes
//   list (quicklist)   type 18: nodes of listpacks (PACKED), filled as Redis fills its nodes
//   set intset / ht    type 11 (an intset blob) / type 2
//   zset listpack / sl type 17 (member, score pairs) / type 5 (binary doubles, highest first)
//   hash listpack / ht type 16 / type 4
//   stream             type 19: listpack nodes and consumer groups (rdb_stream.h)
// Decoding accepts those and the older types a 7.0 server still loads: 1 LIST, 3 ZSET (text
// doubles), 9 HASH_ZIPMAP, 10 LIST_ZIPLIST, 12 ZSET_ZIPLIST, 13 HASH_ZIPLIST, 14 LIST_QUICKLIST,
// 15 STREAM_LISTPACKS.
// Every length is validated, so a malformed value is refused, never read out of bounds. The
// decoded value takes the encoding ringkv (and Redis) gives it after loading.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/keyspace/entry.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/rdb_format.h"
#include "engine/types/object.h"

namespace ringkv::engine {

// Appends the RDB type byte and the value of `entry` (not its key or TTL).
void encode_value(const Entry& entry, std::string& out);
// Appends an RDB file's key record without its TTL: the type byte, the key, then the value.
void encode_key_value(const Entry& entry, std::string& out);

// DUMP's payload: the encoded value, RDB version 10 (2 bytes LE), CRC64 of all before (8 bytes
// LE).
std::string dump_payload(const Entry& entry);
// Appends that footer (RDB version and CRC64) to the payload built so far in `out` (FUNCTION DUMP
// uses the same one).
void append_dump_footer(std::string& out);

// verifyDumpPayload: at least 10 bytes, an RDB version not above 10, the CRC64 right.
bool verify_dump_payload(std::string_view payload);

// A value decoded from its RDB encoding, not in the store yet.
struct DecodedValue {
  ValueType type = ValueType::kString;
  std::string string;              // type kString
  std::unique_ptr<Object> object;  // the other types
};

// Decodes the type byte and value at the start of `data` (bytes after the value are ignored, as
// Redis does). False when the type is unknown, the data malformed or the collection empty.
bool decode_value(std::string_view data, DecodedValue& out);
// Decodes a value of RDB type `type` at the reader's position, leaving the reader after it. On
// failure r.short_read() tells data that ended too early from malformed data.
bool decode_value_of_type(uint8_t type, rdb::Reader& r, DecodedValue& out);
// Whether `type` is an RDB object type this decoder knows (RDB files also hold opcodes 245-255).
bool is_value_type(uint8_t type);

// Stores a decoded value at `key` (which must not exist), with `expire_at` (unix ms; < 0 for no
// TTL). Returns the new entry.
const Entry* store_decoded(Store& store, std::string_view key, DecodedValue value,
                           int64_t expire_at);

// objectSetLRUOrLFU, for RESTORE's IDLETIME/FREQ and an RDB file's IDLE/FREQ opcodes: under an LFU
// policy `freq` (0-255) sets the counter, otherwise `idle_seconds` the access time; the other one
// is ignored, and -1 means not given.
void set_loaded_access(Store& store, std::string_view key, int64_t idle_seconds, int64_t freq);

}  // namespace ringkv::engine
