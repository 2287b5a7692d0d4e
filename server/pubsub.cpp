// PubSubRegistry: channel and pattern subscriptions, and the receivers of a published message.
#include "server/pubsub.h"

#include <algorithm>

#include "common/glob.h"

namespace ringkv::server {
namespace {

// Removes `client` from a subscriber list, and the list's entry once nobody is left on it.
void remove_subscriber(std::unordered_map<std::string, std::vector<uint64_t>>& index,
                       const std::string& name, uint64_t client) {
  auto it = index.find(name);
  if (it == index.end()) return;
  std::erase(it->second, client);
  if (it->second.empty()) index.erase(it);
}

}  // namespace

bool PubSubRegistry::subscribe(uint64_t client, std::string_view name, bool pattern) {
  ClientSubscriptions& mine = clients_[client];
  std::string key(name);
  if (pattern) {
    if (std::find(mine.patterns.begin(), mine.patterns.end(), key) != mine.patterns.end()) {
      return false;
    }
    mine.patterns.push_back(key);
    patterns_[std::move(key)].push_back(client);
  } else {
    if (!mine.channels.insert(key).second) return false;
    channels_[std::move(key)].push_back(client);
  }
  return true;
}

bool PubSubRegistry::unsubscribe(uint64_t client, std::string_view name, bool pattern) {
  auto it = clients_.find(client);
  if (it == clients_.end()) return false;
  ClientSubscriptions& mine = it->second;
  std::string key(name);
  if (pattern) {
    auto p = std::find(mine.patterns.begin(), mine.patterns.end(), key);
    if (p == mine.patterns.end()) return false;
    mine.patterns.erase(p);
    remove_subscriber(patterns_, key, client);
  } else {
    if (mine.channels.erase(key) == 0) return false;
    remove_subscriber(channels_, key, client);
  }
  if (mine.empty()) clients_.erase(it);
  return true;
}

bool PubSubRegistry::shard_subscribe(uint64_t client, std::string_view channel) {
  std::string key(channel);
  if (!clients_[client].shard_channels.insert(key).second) return false;
  shard_channels_[key].push_back(client);
  shard_count_changed(key);
  return true;
}

void PubSubRegistry::shard_count_changed(const std::string& channel) {
  if (shard_listener_) shard_listener_(channel, shard_subscribers(channel));
}

bool PubSubRegistry::shard_unsubscribe(uint64_t client, std::string_view channel) {
  auto it = clients_.find(client);
  if (it == clients_.end()) return false;
  std::string key(channel);
  if (it->second.shard_channels.erase(key) == 0) return false;
  remove_subscriber(shard_channels_, key, client);
  if (it->second.empty()) clients_.erase(it);
  shard_count_changed(key);
  return true;
}

std::vector<std::string> PubSubRegistry::shard_subscriptions(uint64_t client) const {
  auto it = clients_.find(client);
  if (it == clients_.end()) return {};
  return {it->second.shard_channels.begin(), it->second.shard_channels.end()};
}

size_t PubSubRegistry::shard_subscription_count(uint64_t client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.shard_channels.size();
}

size_t PubSubRegistry::total_subscriptions(uint64_t client) const {
  // Asked for every request of every client (its output limit class): one lookup, none while
  // nobody subscribes.
  if (clients_.empty()) return 0;
  auto it = clients_.find(client);
  if (it == clients_.end()) return 0;
  const ClientSubscriptions& c = it->second;
  return c.channels.size() + c.patterns.size() + c.shard_channels.size();
}

int64_t PubSubRegistry::shard_publish(std::string_view channel, std::string_view message) {
  const int64_t local = shard_deliver_local(channel, message);
  return remote_publish_ ? local + remote_publish_(channel, message) : local;
}

int64_t PubSubRegistry::shard_deliver_local(std::string_view channel, std::string_view message) {
  auto it = shard_channels_.find(std::string(channel));
  if (it == shard_channels_.end()) return 0;
  for (uint64_t client : it->second) sink_->deliver_shard(client, channel, message);
  return static_cast<int64_t>(it->second.size());
}

std::vector<std::string> PubSubRegistry::active_shard_channels(
    std::optional<std::string_view> pattern) const {
  std::vector<std::string> out;
  for (const auto& [channel, clients] : shard_channels_) {
    if (!pattern || common::glob_match(*pattern, channel)) out.push_back(channel);
  }
  return out;
}

int64_t PubSubRegistry::shard_subscribers(std::string_view channel) const {
  auto it = shard_channels_.find(std::string(channel));
  return it == shard_channels_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<std::string> PubSubRegistry::subscriptions(uint64_t client, bool pattern) const {
  auto it = clients_.find(client);
  if (it == clients_.end()) return {};
  if (pattern) return it->second.patterns;
  return {it->second.channels.begin(), it->second.channels.end()};
}

size_t PubSubRegistry::subscription_count(uint64_t client) const {
  return channel_count(client) + pattern_subscription_count(client);
}

size_t PubSubRegistry::channel_count(uint64_t client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.channels.size();
}

size_t PubSubRegistry::pattern_subscription_count(uint64_t client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.patterns.size();
}

void PubSubRegistry::remove_client(uint64_t client) {
  auto it = clients_.find(client);
  if (it == clients_.end()) return;
  for (const std::string& c : it->second.channels) remove_subscriber(channels_, c, client);
  for (const std::string& p : it->second.patterns) remove_subscriber(patterns_, p, client);
  const std::unordered_set<std::string> shard = std::move(it->second.shard_channels);
  clients_.erase(it);
  for (const std::string& c : shard) {
    remove_subscriber(shard_channels_, c, client);
    shard_count_changed(c);
  }
}

int64_t PubSubRegistry::publish(std::string_view channel, std::string_view message) {
  int64_t receivers = 0;
  // Channel subscribers first, then pattern subscribers, as Redis delivers them. The sink only
  // queues output (a client it disconnects leaves later), so the lists stay valid meanwhile.
  if (auto it = channels_.find(std::string(channel)); it != channels_.end()) {
    for (uint64_t client : it->second) {
      sink_->deliver(client, nullptr, channel, message);
      receivers++;
    }
  }
  for (const auto& [pattern, clients] : patterns_) {
    if (!common::glob_match(pattern, channel)) continue;
    for (uint64_t client : clients) {
      sink_->deliver(client, &pattern, channel, message);
      receivers++;
    }
  }
  return receivers;
}

std::vector<std::string> PubSubRegistry::active_channels(
    std::optional<std::string_view> pattern) const {
  std::vector<std::string> out;
  for (const auto& [channel, clients] : channels_) {
    if (!pattern || common::glob_match(*pattern, channel)) out.push_back(channel);
  }
  return out;
}

int64_t PubSubRegistry::subscribers(std::string_view channel) const {
  auto it = channels_.find(std::string(channel));
  return it == channels_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

}  // namespace ringkv::server
