// SlowLog: the commands that ran longer than slowlog-log-slower-than, newest first, at most
// slowlog-max-len of them, each stored as Redis 7.0 stores it (at most 32 arguments, each cut
// at 128 bytes) and answered by SLOWLOG GET in Redis's shape.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"

namespace ringkv::engine {

struct SlowLogEntry {
  int64_t id;
  int64_t unix_time;  // seconds
  int64_t duration_us;
  std::vector<std::string> args;
  std::string peer;  // the client's ip:port
  std::string name;  // the client's name
};

class SlowLog {
 public:
  // Adds an entry, dropping the oldest ones beyond max_len.
  void push(std::span<const std::string_view> argv, int64_t duration_us, int64_t unix_time,
            std::string_view peer, std::string_view name, int64_t max_len);
  size_t size() const { return entries_.size(); }
  // Drops every entry (ids keep growing, as in Redis).
  void reset() { entries_.clear(); }
  // SLOWLOG GET: the newest `count` entries (all when count is -1).
  void write(protocol::ReplyWriter& reply, int64_t count) const;
  const std::deque<SlowLogEntry>& entries() const { return entries_; }

 private:
  std::deque<SlowLogEntry> entries_;  // newest first
  int64_t next_id_ = 0;
};

}  // namespace ringkv::engine
