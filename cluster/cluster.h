// Cluster: this node's view of the cluster — the ring, the router, and a pool of pipelined links
// per peer — and the execution of commands that involve peers: relaying a command whole,
// splitting a multi-key command per owner and merging the parts in key order, and fanning a
// keyspace-wide command out to every node.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cluster/merge.h"
#include "cluster/peer_link.h"
#include "cluster/router.h"
#include "conf/options.h"
#include "engine/command.h"
#include "hashring/hash_ring.h"
#include "protocol/reply_writer.h"

namespace ringkv::cluster {

// Runs this node's part of a command (no routing) and writes its reply: the whole command (a
// fanned-out one) or a fragment of a split one, whose row is the whole command's.
using LocalExecutor =
    std::function<void(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                       protocol::ReplyWriter& out)>;

// The peer handshake a node runs on every relay link it opens (see README, Security):
//   with a [cluster] secret:  RINGKV.CHALLENGE <self address> <nonce>   → +<acceptor's nonce>
//                             RINGKV.PEER <self address> <ring fingerprint> <proof>
//                                                      → +<acceptor's fingerprint> <its proof>
//   without one:              RINGKV.PEER <self address> <ring fingerprint> → +<fingerprint>
// Relayed frames follow only after the acceptor's '+'.
inline constexpr std::string_view kPeerHandshake = "ringkv.peer";
inline constexpr std::string_view kPeerChallenge = "ringkv.challenge";
// Prefix of a relayed request whose reply must be RESP3: RINGKV.RESP3 <command...>.
inline constexpr std::string_view kResp3Prefix = "ringkv.resp3";

inline constexpr std::string_view kCrossSlotError =
    "CROSSSLOT Keys in request don't hash to the same node";

// A node's answer to one step of a peer's handshake.
struct PeerVerdict {
  enum Outcome {
    kRefused,     // the connection must be closed (after the reply)
    kChallenged,  // a nonce was issued; the connection stays an ordinary client's
    kAccepted,    // the connection may switch to relayed mode
  };
  Outcome outcome;
  std::string reply;  // the step's reply (RESP); an error when refused
};

class Cluster {
 public:
  // Builds the ring from config.cluster (self + peers). `local` runs commands here.
  Cluster(uv_loop_t* loop, const conf::ClusterOptions& options, LocalExecutor local);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts the timers. Call once the loop runs.
  void start();
  // Closes the timers and links (shutdown).
  void stop();

  const Router& router() const { return router_; }
  // Every configured member; routing uses this ring less the peers ejected for being down.
  const hashring::HashRing& ring() const { return ring_; }
  const hashring::HashRing& routing_ring() const { return routing_; }
  const std::string& self_address() const { return self_; }

  // Executes a command whose route is not kLocal for a client: relayed whole (kRemote), split
  // per owner (kSplit), sent to every node (kFanOut) or refused (kCrossSlot); `done` receives
  // the reply (possibly before this returns, e.g. when a peer is known down).
  // Every request of one client to one peer uses the same link, so they run in order.
  void execute(const Route& route, const engine::CommandSpec& spec,
               std::span<const std::string_view> argv, uint64_t client_id,
               protocol::RespVersion resp, ReplyDone done);

  // A client went away: its blocking requests on peers are abandoned (their links closed, which
  // unblocks it there too), and so is its transaction on a peer (and any handshake challenge).
  void client_closed(uint64_t client_id);

  // Transactions whose keys live on a peer: WATCH and the whole MULTI ... EXEC block travel on a
  // link of the client's own to that peer, which keeps the WATCHes and runs the block atomically.
  // Relays argv (WATCH ...) to `node` (routing index) on the client's transaction link.
  void transaction_send(size_t node, uint64_t client_id, std::span<const std::string_view> argv,
                        protocol::RespVersion resp, ReplyDone done);
  // Relays MULTI, the queued commands and EXEC as one unit; `done` gets EXEC's reply. When the
  // link had to reconnect since the first WATCH, the peer forgot the WATCHes: the transaction is
  // not sent and `done` gets a null array, as for a changed key.
  void transaction_exec(size_t node, uint64_t client_id,
                        const std::vector<std::vector<std::string>>& queued,
                        protocol::RespVersion resp, ReplyDone done);
  // Drops the client's transaction link, and with it the WATCHes on the peer.
  void transaction_end(uint64_t client_id);

  // Answers RINGKV.CHALLENGE (its arguments) on connection `conn_id`: remembers the peer's
  // nonce and issues a fresh one of this node's, for that connection's next RINGKV.PEER only.
  // Refused when this node has no cluster secret.
  PeerVerdict challenge_peer(uint64_t conn_id, std::span<const std::string_view> args);
  // Judges a peer's handshake (RINGKV.PEER's arguments) on connection `conn_id`. With a cluster
  // secret configured the peer must prove it for the nonces of this connection's challenge (which
  // it uses up), and the reply proves it back; without one, the link is accepted only if
  // `may_run_commands` (the connection could run commands anyway: authenticated, or no password
  // required). Either way its ring must be this node's. A refusal is logged once per peer and
  // reason.
  PeerVerdict accept_peer(uint64_t conn_id, std::span<const std::string_view> args,
                          bool may_run_commands);

  // Introspection: CLUSTER INFO, CLUSTER NODES, CLUSTER OWNER and the INFO cluster section.
  std::string info_text() const;
  // `self_keys`: this node's key count, shown on its own line (peers' counts are not known).
  std::string nodes_text(size_t self_keys) const;
  std::string info_section() const;

 private:
  struct PeerState;
  class LinkHandshake;
  // The nonces of a handshake challenge issued on a connection.
  struct Challenge {
    std::string connector_nonce;
    std::string acceptor_nonce;
  };

  std::unique_ptr<PeerLink> make_link(PeerState& peer, LinkOptions options);
  // Recomputes routing_ from ring_ without the peers ejected for being down.
  void rebuild_routing();
  void check_health();
  void ping_succeeded(PeerState& peer);
  void ping_failed(PeerState& peer, std::string_view reason);
  // Records that `peer` refuses this node's links (or did not prove itself) for `reason`;
  // returns it (the detail of the link's kRefused error).
  std::string refused_by(PeerState& peer, std::string reason);
  // Records that `peer`, with ring `fingerprint`, accepted a link; returns why the link must not
  // be used anyway (its ring differs), or "".
  std::string linked(PeerState& peer, std::string_view fingerprint);
  // Refuses a peer's handshake step (logged once per claimed address and reason).
  PeerVerdict refuse_peer(std::string_view claimed, std::string_view reason);
  // Logs, once per peer and reason, that a link with `peer_address` was refused, by this node
  // (`here`) or by the peer.
  void log_refusal(std::string_view peer_address, std::string_view reason, bool here);
  // The error requests for the peer fail with at once (kDown, or kRefused while it refuses this
  // node's links); nullopt while it is usable.
  std::optional<LinkError> unavailable_error(const PeerState& peer) const;
  // Whether a link with the peer was refused because the two rings differ.
  static bool ring_mismatch(const PeerState& peer);
  // state=up|down,last-seen-ms=N,failures=N,times-down=N[,ejected=yes|no]
  std::string health_fields(const PeerState& p) const;
  // Sends argv (or, with `groups`, argv[0] plus those key groups) to `node` (an index in
  // routing_), or runs it here.
  void send_to(size_t node, const engine::CommandSpec& spec, std::span<const std::string_view> argv,
               const std::vector<size_t>* groups, size_t step, uint64_t client_id,
               protocol::RespVersion resp, PeerLink::ReplyCallback cb);
  // Relays a blocking command on a dedicated link for its client.
  void execute_blocking(size_t node, std::span<const std::string_view> argv, uint64_t client_id,
                        protocol::RespVersion resp, ReplyDone done);
  void execute_scan(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                    uint64_t client_id, protocol::RespVersion resp, ReplyDone done);

  uv_loop_t* loop_;
  conf::ClusterOptions options_;
  LocalExecutor local_;
  std::string self_;
  hashring::HashRing ring_;              // every configured member (what peers compare)
  hashring::HashRing routing_;           // the members keys are routed to: ring_ less ejected peers
  std::vector<size_t> routing_to_full_;  // routing_ node index → ring_ node index
  Router router_;                        // over routing_
  size_t self_full_;
  std::vector<std::unique_ptr<PeerState>> peers_;  // by node index; null for self
  // Refusals already logged ("address|reason"), so a misconfigured or hostile peer that keeps
  // retrying is logged once; bounded so strangers cannot grow it without limit.
  std::unordered_set<std::string> refusals_logged_;
  // Handshake challenges issued, by connection id; each is used up by that connection's next
  // RINGKV.PEER and forgotten when the connection closes.
  std::unordered_map<uint64_t, Challenge> challenges_;
  // A blocking command relayed to a peer travels on a link of its own, so it never holds up the
  // pooled links other clients share. By client id: (peer index in ring_, link).
  std::unordered_map<uint64_t, std::pair<size_t, std::unique_ptr<PeerLink>>> blocking_links_;
  struct TransactionLink {
    size_t node;  // index in ring_
    std::unique_ptr<PeerLink> link;
    uint64_t connects = 0;  // link connects when the transaction started using it
  };
  std::unordered_map<uint64_t, TransactionLink> transaction_links_;
  // The client's transaction link to routing node `node`, opened if needed.
  TransactionLink& transaction_link(size_t node, uint64_t client_id);
  // Links released from inside their own callbacks, destroyed at the end of the loop iteration.
  std::vector<std::unique_ptr<PeerLink>> retired_links_;
  uv_check_t flush_check_;
  uv_timer_t timeout_timer_;
  uv_timer_t health_timer_;
  bool started_ = false;
  uint64_t relayed_ = 0;
  uint64_t relay_errors_ = 0;
  uint64_t split_ = 0;
  uint64_t fanout_ = 0;
};

}  // namespace ringkv::cluster
