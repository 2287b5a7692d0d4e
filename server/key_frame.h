// The request that makes another node's copy of a key equal to this node's: RESTORE with the
// key's Redis-format payload, its absolute expiry, REPLACE and ABSTTL — or DEL when the key is
// gone. Ring changes send it (behind RINGKV.MIGRATE <version>) and replication sends it (full
// copies, and writes whose keys have different replicas).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "engine/keyspace/entry.h"
#include "engine/rdb/rdb_value.h"
#include "protocol/request_writer.h"

namespace ringkv::server {

// A copy of keys (a ring change's, a replica's full copy) works a batch per loop turn: this many
// keys looked at, or this long, whichever ends first.
inline constexpr size_t kCopyBatchKeys = 256;
inline constexpr int64_t kCopyBatchBudgetUs = 2000;
// A collection of more elements than this is sent a slice of this many elements per request,
// a batch over several turns, rather than as one DUMP that would stall both ends.
inline constexpr size_t kSliceElements = 1024;

// Appends the request to `frame`, after the arguments in `prefix`; returns the payload's size
// (0 for a DEL).
inline size_t append_key_frame(std::string& frame, std::span<const std::string_view> prefix,
                               std::string_view key, const engine::Entry* entry) {
  if (entry == nullptr) {
    protocol::append_request_header(frame, prefix.size() + 2);
    for (std::string_view p : prefix) protocol::append_request_bulk(frame, p);
    protocol::append_request_bulk(frame, "DEL");
    protocol::append_request_bulk(frame, key);
    return 0;
  }
  const std::string payload = engine::dump_payload(*entry);
  protocol::append_request_header(frame, prefix.size() + 6);
  for (std::string_view p : prefix) protocol::append_request_bulk(frame, p);
  protocol::append_request_bulk(frame, "RESTORE");
  protocol::append_request_bulk(frame, key);
  protocol::append_request_bulk(frame,
                                std::to_string(entry->has_expire() ? entry->expire_at() : 0));
  protocol::append_request_bulk(frame, payload);
  protocol::append_request_bulk(frame, "REPLACE");
  protocol::append_request_bulk(frame, "ABSTTL");
  return payload.size();
}

inline size_t append_key_frame(std::string& frame, std::initializer_list<std::string_view> prefix,
                               std::string_view key, const engine::Entry* entry) {
  return append_key_frame(frame, std::span<const std::string_view>(prefix.begin(), prefix.size()),
                          key, entry);
}

}  // namespace ringkv::server
