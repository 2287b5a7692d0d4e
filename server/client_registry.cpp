// ClientRegistry: connections by id, CLIENT LIST/KILL and pub/sub delivery.
#include "server/client_registry.h"

#include <algorithm>
#include <vector>

#include "server/connection.h"

namespace ringkv::server {

void ClientRegistry::add(Connection* conn) { clients_.emplace(conn->id(), conn); }

void ClientRegistry::remove(const Connection* conn) { clients_.erase(conn->id()); }

size_t ClientRegistry::peer_links() const {
  size_t n = 0;
  for (const auto& [id, c] : clients_) n += c->is_peer() ? 1 : 0;
  return n;
}

std::string ClientRegistry::list(std::span<const uint64_t> ids,
                                 std::optional<engine::ClientKind> kind) const {
  std::string out;
  auto add = [&](const Connection* c) {
    if (kind && c->kind() != *kind) return;
    out += c->info_line();
    out += '\n';
  };
  if (ids.empty()) {
    // Oldest first, as Redis lists them.
    std::vector<const Connection*> all;
    all.reserve(clients_.size());
    for (auto& [id, c] : clients_) {
      if (!c->closing()) all.push_back(c);
    }
    std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
    for (auto* c : all) add(c);
  } else {
    for (uint64_t id : ids) {
      const Connection* c = find(id);
      if (c != nullptr && !c->closing()) add(c);
    }
  }
  return out;
}

size_t ClientRegistry::kill(const engine::ClientKillFilter& filter) {
  std::vector<Connection*> victims;
  for (auto& [id, c] : clients_) {
    if (c->closing()) continue;
    if (filter.skipme && id == filter.self_id) continue;
    if (filter.kind && c->kind() != *filter.kind) continue;
    if (filter.id && *filter.id != id) continue;
    if (!filter.addr.empty() && c->peer_address() != filter.addr) continue;
    if (!filter.laddr.empty() && c->local_address() != filter.laddr) continue;
    if (filter.user != nullptr && c->user() != filter.user) continue;
    victims.push_back(c);
  }
  for (Connection* c : victims) {
    // A client that kills itself still gets its reply.
    if (c->id() == filter.self_id) {
      c->close_after_reply();
    } else {
      c->close();
    }
  }
  return victims.size();
}

void ClientRegistry::deliver(uint64_t client, const std::string* pattern, std::string_view channel,
                             std::string_view message) {
  push_message(client, pattern == nullptr ? "message" : "pmessage", pattern, channel, message);
}

void ClientRegistry::deliver_shard(uint64_t client, std::string_view channel,
                                   std::string_view message) {
  push_message(client, "smessage", nullptr, channel, message);
}

void ClientRegistry::push_message(uint64_t client, std::string_view kind,
                                  const std::string* pattern, std::string_view channel,
                                  std::string_view message) {
  Connection* conn = find(client);
  if (conn == nullptr || conn->closing()) return;
  protocol::ReplyWriter w(conn->reply_writer().buffer(), conn->resp());
  w.push(pattern == nullptr ? 3 : 4);
  w.bulk(kind);
  if (pattern != nullptr) w.bulk(*pattern);
  w.bulk(channel);
  w.bulk(message);
  conn->output_added();
  conn->enforce_output_limits();
}

}  // namespace ringkv::server
