// Cluster: this node's view of the cluster — the ring, the router, and a pool of pipelined links
// per peer — and the execution of commands that involve peers: relaying a command whole,
// splitting a multi-key command per owner and merging the parts in key order, and fanning a
// keyspace-wide command out to every node.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cluster/cross_txn.h"
#include "cluster/membership.h"
#include "cluster/merge.h"
#include "cluster/peer_frame.h"
#include "cluster/peer_link.h"
#include "cluster/replication.h"
#include "cluster/router.h"
#include "conf/options.h"
#include "engine/command.h"
#include "hashring/hash_ring.h"
#include "protocol/reply_writer.h"

namespace ringkv::cluster {

// Runs this node's part of a command (no routing) in database `db` and writes its reply: the
// whole command (a fanned-out one) or a fragment of a split one, whose row is the whole command's.
using LocalExecutor =
    std::function<void(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                       int db, protocol::ReplyWriter& out)>;

// The peer handshake a node runs on every relay link it opens (see README, Security):
//   with a [cluster] secret:  RINGKV.CHALLENGE <self address> <nonce>   → +<acceptor's nonce>
//                             RINGKV.PEER <self address> <ring fingerprint> <proof>
//                                                      → +<acceptor's fingerprint> <its proof>
//   without one:              RINGKV.PEER <self address> <ring fingerprint> → +<fingerprint>
// Relayed frames follow only after the acceptor's '+'.
inline constexpr std::string_view kPeerHandshake = "ringkv.peer";
inline constexpr std::string_view kPeerChallenge = "ringkv.challenge";
// The fingerprint a control link's handshake gives instead of its ring's: such a link carries
// RINGKV.RING frames only, so it links whatever the rings (they differ while a change runs).
inline constexpr std::string_view kControlLink = "control";

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
  std::string reply;         // the step's reply (RESP); an error when refused
  bool control = false;      // accepted as a control link: RINGKV.RING frames only
  std::string address = {};  // accepted: the peer's address, as it claimed and proved it
  uint64_t fingerprint = 0;  // accepted: the ring the link runs by (its fingerprint)
};

class Cluster {
 public:
  // Builds the ring from the ring file in `dir` if there is one, else from config.cluster (self +
  // peers). `local` runs commands here.
  Cluster(uv_loop_t* loop, const conf::ClusterOptions& options, std::string_view dir,
          LocalExecutor local);
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
  // Whether the routing ring has this node: not failed over, not gone.
  bool on_ring() const { return router_.self() != hashring::HashRing::kNoNode; }
  const std::string& self_address() const { return self_; }

  // Executes a command whose route is not kLocal for a client: relayed whole (kRemote), split
  // per owner (kSplit), sent to every node (kFanOut) or refused (kCrossSlot); `done` receives
  // the reply (possibly before this returns, e.g. when a peer is known down).
  // Every request of one client to one peer uses the same link, so they run in order.
  // The command runs in database `db` (the client's SELECTed one) wherever it runs.
  void execute(const Route& route, const engine::CommandSpec& spec,
               std::span<const std::string_view> argv, uint64_t client_id,
               protocol::RespVersion resp, int db, ReplyDone done);

  // A client went away: its blocking requests on peers are abandoned (their links closed, which
  // unblocks it there too), and so is its transaction on a peer (and any handshake challenge).
  void client_closed(uint64_t client_id);
  // Sends an internal frame (RINGKV.SHARDSUB, RINGKV.SHARDMSG) to the member at `address` on a
  // pooled link, not waiting for its answer. Dropped when the address is this node, not on the
  // routing ring, or known down, and once the cluster stopped: such frames are repeated or lose
  // nothing that can be saved.
  void send_frame(std::string_view address, std::span<const std::string_view> argv);

  // Transactions whose keys live on a peer: WATCH and the whole MULTI ... EXEC block travel on a
  // link of the client's own to that peer, which keeps the WATCHes and runs the block atomically.
  // Relays argv (WATCH ...) to `node` (routing index) on the client's transaction link.
  void transaction_send(size_t node, uint64_t client_id, std::span<const std::string_view> argv,
                        protocol::RespVersion resp, int db, ReplyDone done);
  // Relays MULTI, the queued commands and EXEC as one unit; `done` gets EXEC's reply. When the
  // link had to reconnect since the first WATCH, the peer forgot the WATCHes: the transaction is
  // not sent and `done` gets a null array, as for a changed key. `ahead`, unless empty, is a frame
  // sent before the block on that link.
  void transaction_exec(size_t node, uint64_t client_id, std::span<const std::string> ahead,
                        const std::vector<std::vector<std::string>>& queued,
                        protocol::RespVersion resp, int db, ReplyDone done);
  // WAIT for a client whose last write went to the peer at `address` (its key `key`): asks the
  // peer what the key's replicas must acknowledge (on the client's link, after the write), then
  // waits there on a link of the client's own; `done` gets the count (an integer reply) or the
  // error.
  void wait_remote(const std::string& address, uint64_t client_id, const std::string& key,
                   int64_t numreplicas, int64_t timeout_ms, ReplyDone done);
  // Drops the client's transaction links, and with them its WATCHes on peers.
  void transaction_end(uint64_t client_id);
  bool has_transaction_link(uint64_t client_id) const {
    return transaction_links_.count(client_id) != 0;
  }

  // Cross-node transactions (cross_txn.cpp). The server's side of this node's own parts; set
  // before the first transaction.
  void set_txn_host(TxnHost* host) { txn_host_ = host; }
  // Starts a transaction of client `client_id` over `parts` (on several nodes). With `watches`
  // (an EXEC) the client's transaction links to those nodes, and its WATCHes there, become the
  // transaction's and are checked; without, they are left alone (a multi-key command).
  // The parts' commands run in database `db`.
  std::shared_ptr<TxnSession> begin_transaction(uint64_t client_id, std::vector<TxnPart> parts,
                                                protocol::RespVersion resp, int db, bool watches);

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
  // Answers RINGKV.VIEW from peer `address`: the fingerprint its link runs by from now on (0 for
  // one that is not a fingerprint: no ring of this node's matches it). A ring other than this
  // node's is asked about as a ring mismatch would be (catch_up_ring), as in accept_peer.
  uint64_t peer_view(std::string_view address, std::string_view hex);

  // Membership (membership.cpp). The server's data side of ring changes; set before start().
  void set_host(MembershipHost* host);
  // tls-cluster: every peer link opened from now on uses the context `tls` returns.
  void set_tls(std::function<std::shared_ptr<const common::TlsContext>()> tls) {
    tls_ = std::move(tls);
  }
  // `lost` is called with a member's address whenever what this node told it, or what it was
  // to tell this node, may have been lost: health checks see it down, or it answers them on
  // another connection than before (that one broke: it restarted, or the network failed).
  void set_peer_lost_listener(std::function<void(const std::string& address)> lost) {
    peer_lost_ = std::move(lost);
  }
  // CLUSTER JOIN / LEAVE / SETWEIGHT, coordinated by this node: `done` gets +OK once every member
  // has accepted the new ring version (the keys then move in the background), or the error
  // (nothing changed).
  void change_ring(const RingChangeRequest& request, ReplyDone done);
  // Answers a RINGKV.RING control frame (its arguments) from the coordinator of a change.
  std::string ring_control(std::span<const std::string_view> args);
  // Whether a copy for the change to `version` may land here (it is prepared).
  bool accepts_copy(uint64_t version) const { return pending_ && pending_version_ == version; }
  // While the ring switches (paused, or flushed and waiting for the commit) client requests
  // that touch keys wait until release_held(); so do they on a node being joined (it serves no
  // keys of its own meanwhile).
  bool holds_clients() const {
    return phase_ == Phase::kPaused || phase_ == Phase::kSwitching || joining_here() ||
           lease_pending();
  }
  // Past the pause of a ring change, waiting for its commit: no request of the old ring is left
  // anywhere (the pause waited for them), so a relayed request or a cross-node transaction's
  // LOCK reaching this node now comes from a node that committed already, and waits for this
  // node's commit. Run now, it would write under the old ring, after the flush: past the copies
  // the change gave the members that become its keys' replicas (and a LOCK would see its RUN
  // refused after the commit).
  bool switching_ring() const { return phase_ == Phase::kSwitching; }

  // Failover (failover.cpp). With replication-factor > 1 (or on-peer-down = eject) a member a
  // majority sees down is failed over: a ring change marks it failed, so its keys go to the next
  // node of their preference lists, where their copies are; when it answers again a second
  // change restores it, copying it the keys it owns again first.
  bool failover_enabled() const {
    return options_.replication_factor > 1 || options_.on_peer_down == conf::kPeerDownEject;
  }
  // A node serves the keys it owns only while a majority of the members answered its pings
  // within the lease (so a node cut off stops before the others fail it over). Always true
  // without failover.
  bool lease_valid() const;
  // The lease is not valid but may be soon (the node just started, or lost it a moment ago):
  // requests for keys wait instead of failing.
  bool lease_pending() const;
  // Whether pings from `address` must fail: a failover of it is prepared here, so this node no
  // longer grants it a lease.
  // `link_fingerprint`: the ring the peer's link was accepted with (PeerVerdict::fingerprint).
  bool fenced(std::string_view address, uint64_t link_fingerprint) const;
  // Whether a peer's link was accepted with this node's view of the ring (its members and the
  // failed ones) as it is now. On a link of another view (this node's ring changed since, or
  // the peer is still on an earlier one) a request may have been routed by a ring this node no
  // longer has.
  bool link_current(uint64_t link_fingerprint) const {
    return link_fingerprint == view_fingerprint();
  }
  // Whether the prepared change's copy gives each key to the members that become its replicas
  // too (not only to its new owner), so that every copy is complete when the ring switches: with
  // replicas, and no member failed before or after it (a failed member sends nothing).
  bool change_delivers_copies() const {
    return options_.replication_factor > 1 && pending_ && failed_.empty() &&
           pending_failed_.empty() && pending_forced_.empty();
  }
  // A prepared change adds this node, alone on its own ring until the change commits (what it
  // holds meanwhile are the copies it is given: it sends none).
  bool joining_here() const { return pending_ && ring_.size() == 1 && pending_->size() > 1; }
  // Members failed over (sorted).
  const std::vector<std::string>& failed() const { return failed_; }
  bool is_failed(std::string_view address) const {
    return std::find(failed_.begin(), failed_.end(), address) != failed_.end();
  }
  // Members this node has seen failed over since it started. With replica-acks 0 a failed-over
  // member may have acknowledged writes its replicas never got (failover_may_lose_writes()).
  uint64_t failovers_seen() const { return failovers_seen_; }
  bool failover_may_lose_writes() const { return options_.replica_acks == 0; }
  // This node restarted without an append-only file fsynced at every write: its replicas may
  // hold newer copies of its keys than it does. It serves none until it knows (failover.cpp):
  // when a peer held copies of its keys, it asks to be failed over and is then restored from
  // them; when none did (a new cluster, or every copy gone), it goes on with what it has.
  void check_after_restart();
  // Changes whenever routing does (a ring change, a peer ejected or back): a transaction pinned
  // to a node under another epoch cannot run.
  uint64_t routing_epoch() const { return routing_epoch_; }
  // A ring change is under way here (CLUSTER INFO's cluster_migration_state:migrating): keys
  // this node is given or has given away may be held by their other owner too.
  bool moving_keys() const { return migrating(host_ ? host_->copy_progress() : CopyProgress{}); }
  // The link migration frames to `address` travel on, in order (one per target).
  PeerLink& migration_link(std::string_view address);

  // Replication of this node's keys to their replicas, and of its primaries' keys to it.
  Replication& replication() { return *replication_; }
  const Replication& replication() const { return *replication_; }

  // Introspection: CLUSTER INFO, CLUSTER NODES, CLUSTER OWNER and the INFO cluster section.
  std::string info_text() const;
  // `self_keys`: this node's key count, shown on its own line (peers' counts are not known).
  std::string nodes_text(size_t self_keys) const;
  std::string info_section() const;

 private:
  struct PeerState;
  class LinkHandshake;
  friend class TxnSession;
  // The nonces of a handshake challenge issued on a connection.
  struct Challenge {
    std::string connector_nonce;
    std::string acceptor_nonce;
  };

  enum class Phase : uint8_t { kIdle, kPrepared, kPaused, kSwitching };
  struct Coordination;

  // `control`: a link for ring-change frames only (see kControlLink).
  std::unique_ptr<PeerLink> make_link(PeerState& peer, LinkOptions options, bool control = false);
  // The state of the peer at `address`, created on first use.
  PeerState& peer(std::string_view address);
  // peers_ and self_full_ from ring_.
  void index_peers();
  // Reads the ring file (the file wins over the TOML, with a warning when they differ).
  void load_ring();
  // An empty ring of one: it may be joined (and links with any ring meanwhile).
  bool candidate() const {
    return ring_.size() == 1 && host_ != nullptr && host_->key_count() == 0;
  }
  // A prepared change restores this node from failed to live.
  bool restoring_here() const {
    return pending_ && is_failed(self_) &&
           std::find(pending_failed_.begin(), pending_failed_.end(), self_) ==
               pending_failed_.end();
  }
  // The ring fingerprint that links compare: the members, which are failed, and the
  // replication-factor.
  uint64_t view_fingerprint(const hashring::HashRing& ring,
                            const std::vector<std::string>& failed) const;
  uint64_t view_fingerprint() const { return view_fingerprint(ring_, failed_); }
  // What view_fingerprint folds in for the replication-factor (0: nothing, factor 1).
  static uint64_t factor_salt(int64_t replication_factor);
  // The fingerprint of the ring a change moves to (`members`, `failed` of them failed over):
  // what names the change in its steps (kForWord), beside its version, which a change aborted
  // without some member hearing of it leaves free for the next one.
  uint64_t change_target(std::span<const hashring::Member> members,
                         std::vector<std::string> failed) const;
  // The FOR word's fingerprint of the change prepared on this node (pending_failed_ is kept
  // sorted, as change_target sorts).
  uint64_t pending_target() const { return view_fingerprint(*pending_, pending_failed_); }
  // The FOR word's fingerprint of the change this node coordinates, made on first use (its
  // members and failed ones are set before its first round).
  const std::string& coordinated_target(Coordination& c) const;
  // The ring keys are routed by: `members` less the `failed` ones.
  hashring::HashRing live_ring(std::span<const hashring::Member> members,
                               const std::vector<std::string>& failed) const;
  // The ring whose keys this node keeps when a change ends: the one keys are routed by, or,
  // while this node is failed over, that ring with this node live (it keeps its own keys until
  // it is restored; only leftovers go).
  hashring::HashRing kept_keys_ring() const;
  // Starts a change that fails over a member this node sees down, when it is the member that
  // proposes such changes (the first live member by address that it sees up).
  void maybe_fail_over();
  // Starts a failover of `members` (coordinated here); `requested`: they asked for it
  // themselves (restarted with stale data), so no one need see them down nor wait for a lease.
  void start_failover(const std::vector<std::string>& members, bool requested);
  // A participant's refusal of a failover of `failed` ("" = none): a member it must see down
  // whose keys' copy here was cut off in the middle of a full copy (its keys' only complete
  // copies may be on that member: failing it over would lose them). `requested` ones are not
  // checked (they are up, and asked after finding a complete copy: drive_restart_check()).
  std::string failover_veto(const std::vector<std::string>& failed,
                            const std::vector<std::string>& requested) const;
  // check_after_restart(): asks the peers whether they held copies of this node's keys, then
  // asks to be failed over; gives up after a while.
  void drive_restart_check();
  // Ends the check: this node serves the keys it holds (why: logged).
  void end_restart_check(std::string_view why);
  // Starts a change that restores a failed member that answers again (same proposer).
  void maybe_restore();
  // Asks peers that refuse this node's links for a ring mismatch which ring they have; adopts
  // a newer committed one (a node that was away while the ring changed).
  void catch_up_ring();
  // Asks `address` for its ring and adopts it if it is a newer committed one. When that ring is
  // the one the change prepared here moves to, at its version, the change is committed here
  // (not taken up as any ring: the commit step's work is done); a change of that version whose
  // ring differs was aborted (the version used again), and the ring is taken up as any other.
  void catch_up_from(const std::string& address);
  // Recomputes the lease from the peers' answered pings.
  void update_lease();
  // Votes in the decisions a majority takes (the lease, failovers): one per member, two for the
  // tie-breaker while the members are even in number. A majority is more than half the total.
  size_t votes_of(std::string_view address) const;
  // The votes of the members a ring with these members failed over leaves: a failover's
  // participants. Below votes_needed() no prepare round of it can pass.
  size_t votes_left(const std::vector<std::string>& failed) const;
  size_t votes_total() const { return ring_.size() + (tie_breaker_counts() ? 1 : 0); }
  size_t votes_needed() const { return votes_total() / 2 + 1; }
  // CLUSTER INFO's cluster_failover: which members' loss the others can fail over ("off",
  // "every-member", "not-the-tie-breaker" or "none", as with 2 members and no tie-breaker).
  std::string failover_coverage() const;
  bool tie_breaker_counts() const {
    return ring_.size() % 2 == 0 && !options_.tie_breaker.empty() &&
           ring_.contains(options_.tie_breaker);
  }
  // The member that proposes failovers and restores: the first by address of the live members
  // this node sees up (itself included).
  std::string proposer() const;
  // The answer to RINGKV.RING GET: "+<version> <failed members or -> <member=weight>...".
  std::string ring_text() const;
  // A change is prepared here, coordinated from here, or leftovers are still being deleted.
  bool migrating(const CopyProgress& progress) const {
    return phase_ != Phase::kIdle || change_ || progress.sweeping;
  }
  // Forgets the prepared change (committed or aborted here), persisting nothing yet.
  void end_pending();
  void close_migration_links();
  // Persists ring_ and a pending change; a failure is logged.
  void save_ring();
  // Makes `members` (version `version`) this node's ring; a node not in it is alone on its own.
  void apply_ring(std::vector<hashring::Member> members, std::vector<std::string> failed,
                  uint64_t version);
  // This node's ring changed: tells every peer, on each relay link it has open, the ring the
  // requests after it are routed by (RINGKV.VIEW). Without it a link keeps the ring of its
  // handshake, and a peer whose ring is that one again (a restore gives back the fingerprint of
  // the ring before the failover) would take requests this node routed by another ring for its
  // own, running writes for keys it holds only copies of.
  void announce_view();
  // Whether a peer's ring fingerprint may link with this node: this ring, the one a change is
  // moving to, the one it came from, or any while this node is an empty ring of one.
  bool fingerprint_acceptable(std::string_view hex) const;
  // Sends a control frame to the participant at `address` (or answers it here for self).
  void control(const std::string& address, std::vector<std::string> args,
               std::function<void(std::string_view reply, bool ok)> cb);
  // The coordinator of a change: sends the current step's round to every participant;
  // judges a completed round (next step, a retry, or the end); runs drive_change() soon.
  void drive_change();
  void change_round_done();
  void failover_round_done();
  void schedule_change();
  void finish_change(std::string error);
  // Once a second while a change is prepared here: a coordinator that restarted takes it up
  // again; a participant asks the coordinator whether it committed or aborted it.
  void recover();
  // The coordination of the change prepared here, taken up again from its step of resolving
  // (whether any member committed) by this node.
  void resume_change();
  // A failover prepared here whose coordinator is down (by this node's health view; the other
  // members agree before they take its new PREPARE): the member that proposes failovers takes it
  // over, so the cluster is not stuck on a dead coordinator that nobody may fail over meanwhile.
  void maybe_take_over_change();
  // A membership change or restore prepared here whose coordinator is down (by this node's
  // health view): every other participant is fenced (RINGKV.RING FENCE: it refuses the
  // coordinator's steps from then on) and tells whether it committed. One that committed makes
  // the change committed everywhere; none, the change aborted everywhere — safe because the
  // coordinator commits itself last. Without an answer from every participant but the
  // coordinator, nothing is decided (tried again by recover()). So a dead coordinator neither
  // holds every member's keyed requests nor blocks its own failover.
  void maybe_resolve_orphaned_change();
  // The participants of the change prepared here: the members live in its new ring, a live
  // member leaving it, and the members it adds.
  std::vector<std::string> pending_participants() const;
  // Commits or aborts the change to `version` on its `participants` (the coordinator left out),
  // this node last: the decision of members that resolved it without its coordinator.
  void decide_orphaned_change(uint64_t version, bool commit,
                              const std::vector<std::string>& participants);
  // Whether the change prepared here keeps the members (a failover or a restore), and whether it
  // is a failover (it fails more members over).
  bool pending_same_members() const;
  bool pending_failover() const {
    return pending_same_members() && pending_failed_.size() > failed_.size();
  }
  // The answer to RINGKV.RING STATE (and COPY).
  std::string state_text() const;
  // Relayed requests awaiting their reply (not blocking ones): none once a pause took hold.
  size_t relays_in_flight() const;
  // Those and the writes streamed to replicas not acknowledged yet: none once a pause took hold
  // (so every replica has every write made under the old ring when it switches, and keeps its
  // copy; see Replication).
  size_t writes_in_flight() const {
    return relays_in_flight() + static_cast<size_t>(replication_->unacknowledged());
  }
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
  // routing_), or runs it here. `cb` counts a failed reply in relay_errors_.
  void send_to(size_t node, const engine::CommandSpec& spec, std::span<const std::string_view> argv,
               const std::vector<size_t>* groups, size_t step, uint64_t client_id,
               protocol::RespVersion resp, int db, PeerLink::ReplyCallback cb);
  // Relays a blocking command on a dedicated link for its client.
  void execute_blocking(size_t node, const engine::CommandSpec& spec,
                        std::span<const std::string_view> argv, uint64_t client_id,
                        protocol::RespVersion resp, int db, ReplyDone done);
  void execute_scan(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                    uint64_t client_id, protocol::RespVersion resp, int db, ReplyDone done);

  uv_loop_t* loop_;
  conf::ClusterOptions options_;
  uint64_t factor_salt_ = factor_salt(options_.replication_factor);
  LocalExecutor local_;
  std::string ring_dir_;
  std::string self_;
  hashring::HashRing ring_;              // every configured member (what peers compare)
  hashring::HashRing routing_;           // the members keys are routed to: ring_ less ejected peers
  std::vector<size_t> routing_to_full_;  // routing_ node index → ring_ node index
  Router router_;                        // over routing_
  size_t self_full_;
  // Every peer this node has known (members, candidates, members that left), by address; never
  // destroyed before the Cluster, so callbacks of their links always find them.
  std::unordered_map<std::string, std::unique_ptr<PeerState>> known_peers_;
  std::vector<PeerState*> peers_;  // by node index in ring_; null for self
  // Refusals already logged ("address|reason"), so a misconfigured or hostile peer that keeps
  // retrying is logged once; bounded so strangers cannot grow it without limit.
  std::unordered_set<std::string> refusals_logged_;
  // Handshake challenges issued, by connection id; each is used up by that connection's next
  // RINGKV.PEER and forgotten when the connection closes.
  std::unordered_map<uint64_t, Challenge> challenges_;
  // A blocking command relayed to a peer travels on a link of its own, so it never holds up the
  // pooled links other clients share. By client id. When a ring change moves its keys, it is
  // sent again to their new owner (reroute_blocking).
  struct BlockingRelay {
    PeerState* peer = nullptr;
    std::unique_ptr<PeerLink> link;
    std::vector<std::string> argv;
    const engine::CommandSpec* spec = nullptr;
    protocol::RespVersion resp = protocol::RespVersion::kResp2;
    int db = 0;
    ReplyDone done;
    uint64_t seq = 0;  // the send whose answer counts
  };
  std::unordered_map<uint64_t, BlockingRelay> blocking_links_;
  void send_blocking(uint64_t client_id, BlockingRelay& b, PeerState& peer);
  // After a ring change: blocking requests whose keys moved are sent to their new owner.
  void reroute_blocking();
  struct TransactionLink {
    PeerState* node;
    std::unique_ptr<PeerLink> link;
    uint64_t connects = 0;  // link connects when the transaction started using it
  };
  // By client id: its links to the peers where it WATCHes keys (or runs a transaction pinned
  // there).
  std::unordered_map<uint64_t, std::vector<TransactionLink>> transaction_links_;
  // Cross-node transactions coordinated here (each in sessions_ while it lives).
  TxnHost* txn_host_ = nullptr;
  std::unordered_set<TxnSession*> sessions_;
  // The options of transaction links: a LOCK may wait up to request-timeout for its keys, so its
  // answer is given a little longer.
  LinkOptions transaction_link_options() const;
  // A link for a transaction of client `client_id` on routing node `node` (a peer): the client's
  // own when it WATCHes there (`watches_lost`: it reconnected since, so the peer forgot them),
  // else an idle one of that peer's or a new one.
  std::unique_ptr<PeerLink> take_transaction_link(size_t node, uint64_t client_id, bool watches,
                                                  bool& watches_lost);
  // A transaction is done with `link`: kept for the next one when `clean` (the peer holds no
  // WATCHes or locks for it), closed otherwise.
  void give_back_transaction_link(PeerState& peer, std::unique_ptr<PeerLink> link, bool clean);
  // Calls f(link) for every transaction link (the clients' and the sessions').
  void for_each_transaction_link(const std::function<void(PeerLink&)>& f);
  // WAITs relayed to the peers that have a client's last write: (client id, "peer key") → the
  // link the wait for that key's replicas runs on.
  std::map<std::pair<uint64_t, std::string>, std::unique_ptr<PeerLink>> wait_links_;
  // The client's transaction link to routing node `node`, opened if needed.
  TransactionLink& transaction_link(size_t node, uint64_t client_id);
  // Links released from inside their own callbacks, destroyed at the end of the loop iteration.
  std::vector<std::unique_ptr<PeerLink>> retired_links_;
  uv_check_t flush_check_;
  uv_timer_t timeout_timer_;
  uv_timer_t health_timer_;
  bool started_ = false;
  // Membership.
  MembershipHost* host_ = nullptr;
  std::string ring_path_;
  uint64_t ring_version_ = 0;
  Phase phase_ = Phase::kIdle;
  uint64_t pending_version_ = 0;
  std::optional<hashring::HashRing> pending_;  // the ring a prepared change moves to
  std::vector<std::string> failed_;
  uint64_t failovers_seen_ = 0;
  std::vector<std::string> pending_failed_;  // the failed members of the prepared change's ring
  std::vector<std::string> pending_forced_;  // members it forces out, who take no part in it
  uint64_t lease_ms_ = 0;
  uint64_t lease_until_ = 0;       // loop time the lease ends
  uint64_t lease_lost_since_ = 0;  // loop time it was last found invalid (0 while valid)
  bool lease_held_ = false;        // the lease was valid once (start-up is not a loss)
  enum class RestartCheck : uint8_t { kNone, kAsking, kReturning };
  RestartCheck restart_check_ = RestartCheck::kNone;
  uint64_t restart_check_since_ = 0;
  // A failover refused for an incomplete copy is not proposed again before then (loop time):
  // only the member's return mends it, and every try logs.
  uint64_t failover_retry_at_ms_ = 0;
  std::unordered_set<std::string> seen_answers_;  // peers that answered SEEN with +0
  std::unordered_set<std::string> seen_asked_;    // SEEN requests in flight
  uint64_t previous_fingerprint_ = 0;
  std::string change_from_fingerprint_;  // the ring a prepared change moves from (hex)
  std::string pending_coordinator_;      // the node coordinating the prepared change
  bool recovering_ = false;              // restarted with the change prepared
  bool pending_fenced_ = false;          // resolved without its coordinator (FENCE; persisted)
  bool pending_completes_ = false;       // its coordinator never aborts it (persisted)
  bool resolving_ = false;               // maybe_resolve_orphaned_change() awaits answers
  bool copy_started_ = false;            // this node copies for the prepared change
  uv_timer_t recovery_timer_;
  uint64_t routing_epoch_ = 0;
  std::unordered_map<std::string, std::unique_ptr<PeerLink>> migration_links_;
  std::unordered_map<std::string, std::unique_ptr<PeerLink>> control_links_;
  std::unique_ptr<Coordination> change_;  // the change this node coordinates
  uv_timer_t change_timer_;
  std::string last_change_;  // how the last change this node coordinated ended
  std::unique_ptr<Replication> replication_;
  uint64_t relayed_ = 0;
  uint64_t relay_errors_ = 0;
  uint64_t split_ = 0;
  uint64_t fanout_ = 0;
  std::function<std::shared_ptr<const common::TlsContext>()> tls_;  // tls-cluster, else empty
  std::function<void(const std::string& address)> peer_lost_;
};

}  // namespace ringkv::cluster
