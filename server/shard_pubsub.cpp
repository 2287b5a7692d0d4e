// Sharded pub/sub across the cluster: a shard channel lives on the node that owns its name (as a
// key), so SPUBLISH is routed to that node alone, which delivers to its own subscribers and
// forwards the message to the nodes that reported subscribers (ShardInterests). SSUBSCRIBE runs
// on the subscriber's node, which reports its count to the owner on every change and refreshes
// all its reports every ShardInterests::kRefreshMs.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster.h"
#include "engine/commands/string_ops.h"
#include "server/server.h"

namespace ringkv::server {

void Server::setup_shard_pubsub() {
  pubsub_.set_shard_listener([this](std::string_view channel, int64_t subscribers) {
    const std::string_view owner = cluster_->routing_ring().owner_of(channel);
    if (owner.empty() || owner == cluster_->self_address()) return;
    const std::string count = std::to_string(subscribers);
    const std::string_view argv[] = {cluster::kShardSubscribers, cluster_->self_address(), channel,
                                     count};
    cluster_->send_frame(owner, argv);
  });
  pubsub_.set_remote_publish([this](std::string_view channel, std::string_view message) {
    return shard_interests_.forward(channel, unix_now_ms(), [&](const std::string& node) {
      const std::string_view argv[] = {cluster::kShardMessage, channel, message};
      cluster_->send_frame(node, argv);
    });
  });
}

void Server::refresh_shard_interests() {
  // One frame per owner with every channel this node has subscribers to there.
  std::map<std::string, std::vector<std::string>> by_owner;
  for (const std::string& channel : pubsub_.active_shard_channels(std::nullopt)) {
    const std::string_view owner = cluster_->routing_ring().owner_of(channel);
    if (owner.empty() || owner == cluster_->self_address()) continue;
    std::vector<std::string>& pairs = by_owner[std::string(owner)];
    pairs.push_back(channel);
    pairs.push_back(std::to_string(pubsub_.shard_subscribers(channel)));
  }
  for (const auto& [owner, pairs] : by_owner) {
    std::vector<std::string_view> argv = {cluster::kShardSubscribers, cluster_->self_address()};
    argv.insert(argv.end(), pairs.begin(), pairs.end());
    cluster_->send_frame(owner, argv);
  }
  shard_interests_.expire(unix_now_ms());
}

void Server::shard_frame(const cluster::PeerFrame& frame, protocol::ReplyWriter& writer) {
  const std::span<const std::string_view> args = frame.args;
  if (frame.kind == cluster::PeerFrameKind::kShardSubscribers) {
    shard_interests_.record(args[0], args.subspan(1), unix_now_ms());
    writer.ok();
    return;
  }
  writer.integer(pubsub_.shard_deliver_local(args[0], args[1]));
}

}  // namespace ringkv::server
