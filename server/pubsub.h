// PubSubRegistry: which clients listen to which channels and patterns on this node. Pure
// bookkeeping by client id (no sockets), so it is unit-tested alone; it hands each message to a
// PubSubSink (the Server), which encodes it for the client's protocol and queues it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/command.h"

namespace ringkv::server {

// Receives the messages a PUBLISH delivers, one call per receiving subscription.
class PubSubSink {
 public:
  virtual ~PubSubSink() = default;
  // `pattern` is null for a channel subscription ("message"), else the matching pattern
  // ("pmessage").
  virtual void deliver(uint64_t client, const std::string* pattern, std::string_view channel,
                       std::string_view message) = 0;
  // A shard channel's message ("smessage").
  virtual void deliver_shard(uint64_t client, std::string_view channel,
                             std::string_view message) = 0;
};

class PubSubRegistry final : public engine::PubSubHub {
 public:
  explicit PubSubRegistry(PubSubSink& sink) : sink_(&sink) {}

  // engine::PubSubHub
  bool subscribe(uint64_t client, std::string_view name, bool pattern) override;
  bool unsubscribe(uint64_t client, std::string_view name, bool pattern) override;
  std::vector<std::string> subscriptions(uint64_t client, bool pattern) const override;
  size_t subscription_count(uint64_t client) const override;
  int64_t publish(std::string_view channel, std::string_view message) override;
  std::vector<std::string> active_channels(std::optional<std::string_view> pattern) const override;
  int64_t subscribers(std::string_view channel) const override;
  int64_t pattern_count() const override { return static_cast<int64_t>(patterns_.size()); }
  bool shard_subscribe(uint64_t client, std::string_view channel) override;
  bool shard_unsubscribe(uint64_t client, std::string_view channel) override;
  std::vector<std::string> shard_subscriptions(uint64_t client) const override;
  size_t shard_subscription_count(uint64_t client) const override;
  int64_t shard_publish(std::string_view channel, std::string_view message) override;
  std::vector<std::string> active_shard_channels(
      std::optional<std::string_view> pattern) const override;
  int64_t shard_subscribers(std::string_view channel) const override;

  // Called with a shard channel and its new number of local subscribers whenever that changes
  // (a cluster tells the channel's owner, see ShardInterests).
  using ShardListener = std::function<void(std::string_view channel, int64_t subscribers)>;
  void set_shard_listener(ShardListener listener) { shard_listener_ = std::move(listener); }
  // Delivers a shard message to the subscribers of other nodes and returns how many they have
  // (set in a cluster: SPUBLISH counts them in).
  using RemotePublish = std::function<int64_t(std::string_view channel, std::string_view message)>;
  void set_remote_publish(RemotePublish remote) { remote_publish_ = std::move(remote); }
  // Delivers a shard message to this node's subscribers only (one forwarded by the channel's
  // owner); returns how many.
  int64_t shard_deliver_local(std::string_view channel, std::string_view message);

  // Every subscription of the client, shard channels included: a client with any is in the
  // subscribed context (RESP2), is spared by the idle timeout and has the pubsub output limit.
  size_t total_subscriptions(uint64_t client) const;

  // The client's channel and pattern subscriptions (CLIENT LIST's sub= and psub=).
  size_t channel_count(uint64_t client) const;
  size_t pattern_subscription_count(uint64_t client) const;
  // Drops every subscription of the client, without notifications (disconnect, RESET).
  void remove_client(uint64_t client);
  // Channels with at least one subscriber (INFO's pubsub_channels), and shard channels
  // (pubsubshard_channels).
  size_t channel_total() const { return channels_.size(); }
  size_t shard_channel_total() const { return shard_channels_.size(); }

 private:
  void shard_count_changed(const std::string& channel);

  struct ClientSubscriptions {
    std::unordered_set<std::string> channels;  // unordered, as Redis's per-client dict
    std::vector<std::string> patterns;         // in subscription order, as Redis 7.0's list
    std::unordered_set<std::string> shard_channels;
    bool empty() const { return channels.empty() && patterns.empty() && shard_channels.empty(); }
  };

  PubSubSink* sink_;
  // Subscribers in the order they subscribed, as Redis delivers to them.
  std::unordered_map<std::string, std::vector<uint64_t>> channels_;
  std::unordered_map<std::string, std::vector<uint64_t>> patterns_;
  std::unordered_map<std::string, std::vector<uint64_t>> shard_channels_;
  ShardListener shard_listener_;
  RemotePublish remote_publish_;
  std::unordered_map<uint64_t, ClientSubscriptions> clients_;
};

}  // namespace ringkv::server
