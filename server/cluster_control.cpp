// Server: the CLUSTER subcommands that describe or change the ring (INFO, NODES, OWNER, COPIES,
// JOIN / LEAVE / SETWEIGHT): the engine's ServerControl side of them, handed to the cluster.
#include "cluster/cluster.h"
#include "cluster/membership.h"
#include "server/connection.h"
#include "server/server.h"

namespace ringkv::server {

std::string Server::cluster_info() {
  if (!cluster_) return {};
  std::string out = cluster_->info_text();
  out += "cluster_imports:" + std::to_string(imports_.size()) + "\r\n";
  const uint64_t now = uv_now(loop_);
  for (size_t i = 0; i < imports_.size(); ++i) {
    out += "cluster_import" + std::to_string(i) + ":" + imports_[i]->info_fields(now) + "\r\n";
  }
  // Imports other members run, as last heard from them (a dead one's stays, where it stopped).
  out += "cluster_remote_imports:" + std::to_string(remote_imports_.size()) + "\r\n";
  size_t i = 0;
  for (const auto& [id, r] : remote_imports_) {
    out += "cluster_remote_import" + std::to_string(i++) + ":node=" + r.node +
           ",heard_ms_ago=" + std::to_string(now - r.heard_ms) +
           ",stop_requested=" + (r.stop_requested ? "1," : "0,") + r.fields + "\r\n";
  }
  return out;
}

std::string Server::cluster_nodes() {
  return cluster_ ? cluster_->nodes_text(store_.size()) : std::string();
}

bool Server::cluster_change(engine::CommandContext& ctx) {
  if (!cluster_) return false;
  cluster::RingChangeRequest request;
  std::string error;
  if (!cluster::parse_ring_change(ctx.argv.subspan(1), request, error)) {
    ctx.reply.error(error);
    return true;
  }
  // The reply comes when every member has accepted the change (or it failed).
  auto& conn = connection_of(ctx);
  Connection::ReplySlot slot = conn.reserve_reply();
  conn.block();
  cluster_->change_ring(request, [this, slot](std::string_view reply) {
    count_error_reply(reply);
    slot.fill(reply, true);
  });
  return true;
}

std::vector<std::string> Server::cluster_copies(std::string_view key) {
  std::vector<std::string> out;
  if (!cluster_) return out;
  const hashring::HashRing& ring = cluster_->routing_ring();
  std::vector<size_t> pref;
  ring.preference(key, cluster_->replication().factor(), pref);
  for (size_t i : pref) out.push_back(ring.nodes()[i].address);
  return out;
}

std::string Server::cluster_owner(std::string_view key) {
  return cluster_ ? std::string(cluster_->routing_ring().owner_of(key)) : std::string();
}

}  // namespace ringkv::server
