// Consumer groups of a stream: the group's last delivered ID and read counter, its pending
// entries list (PEL: delivered, not yet acknowledged entries, each with its owner, delivery time
// and count) and its consumers, each with the IDs of the PEL entries it owns. Names and IDs are
// kept in order, as Redis's radix trees keep them (XINFO and XPENDING list them in that order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "engine/types/stream_id.h"

namespace ringkv::engine {

// SCG_INVALID_ENTRIES_READ: the group's read counter is not known.
inline constexpr int64_t kInvalidEntriesRead = -1;

struct StreamConsumer;

// A pending entry (streamNACK).
struct StreamNack {
  int64_t delivery_time = 0;  // unix ms
  uint64_t delivery_count = 0;
  StreamConsumer* consumer = nullptr;
};

struct StreamConsumer {
  std::string name;
  int64_t seen_time = 0;  // unix ms
  std::set<StreamID> pending;
};

class StreamGroup {
 public:
  StreamGroup(StreamID last_id, int64_t entries_read)
      : last_id(last_id), entries_read(entries_read) {}

  StreamID last_id;
  int64_t entries_read;

  const std::map<StreamID, StreamNack>& pel() const { return pel_; }
  const std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>>& consumers() const {
    return consumers_;
  }

  StreamConsumer* consumer(std::string_view name) const;
  // The consumer `name`, created (seen at `now`) when missing; `created` says which.
  StreamConsumer* get_or_create_consumer(std::string_view name, int64_t now, bool* created);
  // Deletes a consumer and its pending entries; returns how many it had, -1 when it did not exist.
  int64_t delete_consumer(std::string_view name);

  StreamNack* nack(StreamID id);
  // Makes `id` pending for `owner` (moving it from its previous owner), delivered at `time` with
  // `count` deliveries.
  void set_pending(StreamID id, StreamConsumer* owner, int64_t time, uint64_t count);
  // XACK of one ID: true when it was pending.
  bool acknowledge(StreamID id);

  // Bytes this group holds, estimated from its counts.
  size_t memory() const;
  std::unique_ptr<StreamGroup> clone() const;

 private:
  std::map<StreamID, StreamNack> pel_;
  std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers_;
  size_t name_bytes_ = 0;
};

}  // namespace ringkv::engine
