// ClientRegistry: the node's connections by id — who is connected, CLIENT LIST and CLIENT KILL
// over them, and the delivery of published messages into a subscriber's output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/command.h"
#include "server/pubsub.h"

namespace ringkv::server {

class Connection;

class ClientRegistry final : public PubSubSink {
 public:
  // The id for the next connection (ids are never reused).
  uint64_t next_id() { return next_id_++; }
  void add(Connection* conn);
  void remove(const Connection* conn);
  // The connection with that id; nullptr when it is gone.
  Connection* find(uint64_t id) const {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second;
  }
  size_t size() const { return clients_.size(); }
  bool empty() const { return clients_.empty(); }
  // Calls f(Connection&) for every connection (none may be added or removed meanwhile).
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [id, conn] : clients_) f(*conn);
  }

  // Connections that are peers' links (INFO's cluster_connections), not clients.
  size_t peer_links() const;

  // CLIENT LIST text: every open connection oldest first (only these ids when non-empty; only
  // connections of `kind` when set), one line each, ending in "\n".
  std::string list(std::span<const uint64_t> ids, std::optional<engine::ClientKind> kind) const;
  // CLIENT KILL: closes the connections matching every set field of `filter` (the calling client
  // after its reply); returns how many.
  size_t kill(const engine::ClientKillFilter& filter);

  // PubSubSink: writes the message into the subscriber's output (a RESP2 array or a RESP3 push),
  // flushed at the end of this loop iteration; disconnects a subscriber whose unsent output is
  // over the pub/sub output buffer limits.
  void deliver(uint64_t client, const std::string* pattern, std::string_view channel,
               std::string_view message) override;
  void deliver_shard(uint64_t client, std::string_view channel, std::string_view message) override;

 private:
  // Writes [kind, (pattern,) channel, message] into the client's output (an array or a push).
  void push_message(uint64_t client, std::string_view kind, const std::string* pattern,
                    std::string_view channel, std::string_view message);

  std::unordered_map<uint64_t, Connection*> clients_;
  uint64_t next_id_ = 1;
};

}  // namespace ringkv::server
