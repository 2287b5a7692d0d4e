// ShardInterests: remote subscribers of the shard channels this node owns (see the header).
#include "server/shard_interests.h"

#include <string>

#include "common/numbers.h"

namespace ringkv::server {

void ShardInterests::record(std::string_view from, std::span<const std::string_view> pairs,
                            int64_t now_ms) {
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    const std::optional<int64_t> count = common::parse_integer(pairs[i + 1]);
    if (!count || *count < 0) continue;
    const std::string channel(pairs[i]);
    if (*count == 0) {
      auto it = channels_.find(channel);
      if (it == channels_.end()) continue;
      it->second.erase(std::string(from));
      if (it->second.empty()) channels_.erase(it);
      continue;
    }
    channels_[channel][std::string(from)] = Interest{*count, now_ms};
  }
}

int64_t ShardInterests::forward(std::string_view channel, int64_t now_ms,
                                const std::function<void(const std::string& node)>& send) const {
  auto it = channels_.find(std::string(channel));
  if (it == channels_.end()) return 0;
  int64_t total = 0;
  for (const auto& [node, interest] : it->second) {
    if (now_ms - interest.seen_ms > kLifetimeMs) continue;
    send(node);
    total += interest.subscribers;
  }
  return total;
}

void ShardInterests::expire(int64_t now_ms) {
  for (auto it = channels_.begin(); it != channels_.end();) {
    std::erase_if(it->second,
                  [&](const auto& entry) { return now_ms - entry.second.seen_ms > kLifetimeMs; });
    it = it->second.empty() ? channels_.erase(it) : std::next(it);
  }
}

}  // namespace ringkv::server
