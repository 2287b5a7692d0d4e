// Cluster: the peer handshake, both sides — the one this node runs on the links it opens
// (LinkHandshake) and its judgement of the handshakes peers send it (challenge_peer,
// accept_peer) — and the bookkeeping and logs of refused links.
#include <spdlog/spdlog.h>

#include <initializer_list>
#include <optional>

#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"
#include "cluster/peer_auth.h"
#include "cluster/peer_frame.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// Why a peer link is refused (in the handshake's error reply, logs and CLUSTER NODES). Kept free
// of ": " so that a failed ping's reason reads whole.
constexpr std::string_view kRefusedPrefix = "ERR peer link refused: ";
constexpr std::string_view kNoProof = "no proof of the cluster secret";
constexpr std::string_view kWrongSecret = "wrong cluster secret";
constexpr std::string_view kNoChallenge =
    "proof without a challenge (a replayed handshake, or a node of an older version)";
constexpr std::string_view kPeerUnproven = "the peer did not prove the cluster secret";
constexpr std::string_view kMalformed = "malformed handshake";
constexpr std::string_view kUnexpectedProof = "a cluster secret is set there but not here";
constexpr std::string_view kAuthRequired =
    "authentication required (requirepass is set, so every node needs the same [cluster] secret)";
// Distinct refusals logged at most; past it, refusals are still answered but not logged.
constexpr size_t kMaxRefusalsLogged = 1024;

// A request frame of plain arguments.
std::string request_frame(std::initializer_list<std::string_view> args) {
  std::string frame;
  protocol::append_request_header(frame, args.size());
  for (auto a : args) protocol::append_request_bulk(frame, a);
  return frame;
}

}  // namespace

// This node's side of the handshake on a link it opens (see kPeerHandshake).
class Cluster::LinkHandshake final : public PeerHandshake {
 public:
  // Made as the link starts to connect (see PeerLink::connect): the ring it names is the one the
  // requests queued until the handshake ends were routed by. A later change of this node's
  // ring reaches the peer as RINGKV.VIEW on the link (Cluster::announce_view).
  LinkHandshake(Cluster& cluster, PeerState& peer, bool control)
      : cluster_(cluster),
        peer_(peer),
        secret_(cluster.options_.secret),
        control_(control),
        fingerprint_(control ? std::string(kControlLink)
                             : fingerprint_hex(cluster.view_fingerprint())) {}

  std::string open() override {
    if (secret_.empty()) return request_frame({"RINGKV.PEER", cluster_.self_, fingerprint_});
    nonce_ = make_nonce();
    return request_frame({"RINGKV.CHALLENGE", cluster_.self_, nonce_});
  }

  HandshakeStep on_reply(std::string_view reply) override {
    std::string_view text = line_text(reply);
    if (reply.empty() || reply.front() != '+') {
      if (text.starts_with(kRefusedPrefix)) text.remove_prefix(kRefusedPrefix.size());
      return {cluster_.refused_by(peer_, printable(text, 200)), {}};
    }
    if (secret_.empty()) return {control_ ? std::string() : cluster_.linked(peer_, text), {}};
    if (peer_nonce_.empty()) {
      // The challenge: prove the secret for both nonces.
      if (!valid_nonce(text)) return {cluster_.refused_by(peer_, std::string(kPeerUnproven)), {}};
      peer_nonce_ = text;
      return {{},
              request_frame({"RINGKV.PEER", cluster_.self_, fingerprint_,
                             handshake_proof(secret_, ProofRole::kConnector, nonce_, peer_nonce_,
                                             cluster_.self_, fingerprint_)})};
    }
    // "+<its fingerprint> <its proof>": the peer holds the secret too (an impostor listening on
    // its address could not answer this connection's nonce).
    const size_t space = text.find(' ');
    const std::string_view theirs = text.substr(0, space);
    const std::string_view proof =
        space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (!proof_matches(proof, secret_, ProofRole::kAcceptor, nonce_, peer_nonce_, cluster_.self_,
                       theirs)) {
      return {cluster_.refused_by(peer_, std::string(kPeerUnproven)), {}};
    }
    return {control_ ? std::string() : cluster_.linked(peer_, theirs), {}};
  }

 private:
  Cluster& cluster_;
  PeerState& peer_;
  const std::string& secret_;
  bool control_;
  // The ring this node routes by, as the handshake names it; a control link (membership.cpp)
  // carries ring-change frames only and links whatever the two rings are, which is what a
  // change needs (they differ while it runs).
  std::string fingerprint_;
  std::string nonce_;       // this node's, for this connection
  std::string peer_nonce_;  // the peer's, from its challenge reply
};

std::unique_ptr<PeerLink> Cluster::make_link(PeerState& peer, LinkOptions options, bool control) {
  PeerState* ps = &peer;
  options.tls = tls_;
  return std::make_unique<PeerLink>(loop_, peer.address, options, [this, ps, control] {
    return std::make_unique<LinkHandshake>(*this, *ps, control);
  });
}

std::string Cluster::refused_by(PeerState& peer, std::string reason) {
  const bool changed = peer.refused_by_peer != reason;
  peer.refused_by_peer = reason;
  // An ejected peer that turns out to be misconfigured goes back on the ring, failing its keys.
  if (changed && !peer.up && options_.on_peer_down == conf::kPeerDownEject) rebuild_routing();
  log_refusal(peer.address, reason, false);
  return reason;
}

bool Cluster::fingerprint_acceptable(std::string_view hex) const {
  if (hex == fingerprint_hex(view_fingerprint())) return true;
  if (pending_ && hex == fingerprint_hex(view_fingerprint(*pending_, pending_failed_))) return true;
  if (previous_fingerprint_ != 0 && hex == fingerprint_hex(previous_fingerprint_)) return true;
  if (pending_ && hex == change_from_fingerprint_) return true;
  // A candidate: the cluster joining it links with its own ring.
  return candidate();
}

std::string Cluster::linked(PeerState& peer, std::string_view fingerprint) {
  // A node a prepared change adds has a ring of its own until the change commits.
  const bool joining =
      pending_ && pending_->contains(peer.address) && !ring_.contains(peer.address);
  if (!joining && !fingerprint_acceptable(fingerprint)) {
    return refused_by(peer, std::string(kRingMismatch));
  }
  if (!peer.refused_by_peer.empty() || peer.fingerprint != fingerprint) {
    spdlog::info("linked to peer {}", peer.address);
  }
  peer.refused_by_peer.clear();
  peer.fingerprint = fingerprint;
  return {};
}

void Cluster::log_refusal(std::string_view peer_address, std::string_view reason, bool here) {
  std::string key = std::string(here ? "here|" : "there|") + std::string(peer_address) + "|" +
                    std::string(reason);
  if (refusals_logged_.size() >= kMaxRefusalsLogged || !refusals_logged_.insert(key).second) {
    return;
  }
  if (here) {
    spdlog::error("refused a peer link from a node claiming to be {}: {}", printable(peer_address),
                  reason);
  } else {
    spdlog::error("peer {} refuses this node's links: {}; its keys fail until that is fixed",
                  peer_address, reason);
  }
}

PeerVerdict Cluster::refuse_peer(std::string_view claimed, std::string_view reason) {
  log_refusal(printable(claimed), reason, true);
  return {PeerVerdict::kRefused, "-" + std::string(kRefusedPrefix) + std::string(reason) + "\r\n"};
}

PeerVerdict Cluster::challenge_peer(uint64_t conn_id, std::span<const std::string_view> args) {
  std::string_view claimed = args.empty() ? std::string_view("?") : args[0];
  if (options_.secret.empty()) return refuse_peer(claimed, kUnexpectedProof);
  if (args.size() != 2 || !valid_nonce(args[1])) return refuse_peer(claimed, kMalformed);
  Challenge& c = challenges_[conn_id];
  c = Challenge{std::string(args[1]), make_nonce()};
  return {PeerVerdict::kChallenged, "+" + c.acceptor_nonce + "\r\n"};
}

PeerVerdict Cluster::accept_peer(uint64_t conn_id, std::span<const std::string_view> args,
                                 bool may_run_commands) {
  std::string_view claimed = args.empty() ? std::string_view("?") : args[0];
  // A challenge answers one handshake only: a proof never counts twice.
  std::optional<Challenge> challenge;
  if (auto it = challenges_.find(conn_id); it != challenges_.end()) {
    challenge = std::move(it->second);
    challenges_.erase(it);
  }
  std::string_view reason;
  if (args.size() < 2 || args.size() > 3) {
    reason = kMalformed;
  } else if (!options_.secret.empty()) {
    if (args.size() < 3) {
      reason = kNoProof;
    } else if (!challenge) {
      reason = kNoChallenge;
    } else if (!proof_matches(args[2], options_.secret, ProofRole::kConnector,
                              challenge->connector_nonce, challenge->acceptor_nonce, args[0],
                              args[1])) {
      reason = kWrongSecret;
    }
  } else if (args.size() == 3) {
    reason = kUnexpectedProof;
  } else if (!may_run_commands) {
    reason = kAuthRequired;
  }
  // Only a peer that got this far is who it claims to be (or nothing could tell): only then may
  // its refusal mark that member in CLUSTER NODES.
  const bool identified = reason.empty();
  const bool control = identified && args[1] == kControlLink;
  const bool acceptable = identified && !control && fingerprint_acceptable(args[1]);
  if (identified && !control && !acceptable) reason = kRingMismatch;
  // The ring this link runs by: the connector's when this node accepts it (its own, a ring
  // change in progress, or this node joining), so the reply names it; else this node's.
  const std::string mine = acceptable ? std::string(args[1]) : fingerprint_hex(view_fingerprint());
  const uint64_t link_fingerprint = parse_fingerprint_hex(mine);
  if (identified) {
    if (auto it = known_peers_.find(std::string(claimed)); it != known_peers_.end()) {
      it->second->refused_here = reason;
      if (!control) it->second->on_other_ring = link_fingerprint != view_fingerprint();
    }
  }
  if (!reason.empty()) return refuse_peer(claimed, reason);
  std::string reply = "+" + mine;
  if (challenge) {
    // Prove the secret back, so the connecting node knows it is not talking to an impostor.
    reply +=
        " " + handshake_proof(options_.secret, ProofRole::kAcceptor, challenge->connector_nonce,
                              challenge->acceptor_nonce, args[0], mine);
  }
  return {PeerVerdict::kAccepted, reply + "\r\n", control, std::string(claimed), link_fingerprint};
}

uint64_t Cluster::peer_view(std::string_view address, std::string_view hex) {
  const uint64_t fingerprint = parse_fingerprint_hex(hex);
  if (auto it = known_peers_.find(std::string(address)); it != known_peers_.end()) {
    it->second->on_other_ring = fingerprint != view_fingerprint();
  }
  return fingerprint;
}

void Cluster::announce_view() {
  std::string frame;
  const std::string hex = fingerprint_hex(view_fingerprint());
  const std::string_view argv[] = {kViewFrame, hex};
  append_peer_frame(frame, {}, argv);
  for (auto& [address, p] : known_peers_) p->pool.send_on_open_links(frame);
}

}  // namespace ringkv::cluster
