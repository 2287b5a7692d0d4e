// ShardInterests: which other nodes have subscribers to the shard channels this node owns, and
// how many, as they reported them. In a cluster a shard channel lives on the node that owns its
// name (like a key): SPUBLISH runs there only, and that node forwards the message to the nodes
// with subscribers. Each node tells a channel's owner its number of local subscribers whenever
// it changes, and again every kRefreshMs for all its channels (so an owner that restarted, or a
// channel whose owner changed with the ring, is told again); a report older than kLifetimeMs is
// dropped (its node is gone). Pure bookkeeping, unit-tested alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ringkv::server {

class ShardInterests {
 public:
  static constexpr int64_t kRefreshMs = 1000;
  static constexpr int64_t kLifetimeMs = 3500;

  // Records a report of node `from`: pairs of a channel and its subscriber count there (0 drops
  // the channel for that node). Pairs whose count is not a number are skipped.
  void record(std::string_view from, std::span<const std::string_view> pairs, int64_t now_ms);
  // Calls `send(node)` for every node with subscribers to `channel` (in address order) and
  // returns how many subscribers they have in all. Stale reports count for nothing.
  int64_t forward(std::string_view channel, int64_t now_ms,
                  const std::function<void(const std::string& node)>& send) const;
  // Drops the reports not renewed within kLifetimeMs.
  void expire(int64_t now_ms);
  // Channels with subscribers on other nodes.
  size_t size() const { return channels_.size(); }

 private:
  struct Interest {
    int64_t subscribers = 0;
    int64_t seen_ms = 0;
  };
  std::unordered_map<std::string, std::map<std::string, Interest>> channels_;
};

}  // namespace ringkv::server
