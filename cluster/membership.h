// Live membership: the types of a ring change and what the data side of a node (the server,
// which owns the store) does during one. The change itself (Cluster, membership.cpp) runs in
// phases over the authenticated peer links, coordinated by the node that received the command:
//
//   prepare  every member (and a joining node) records the new ring version, persisted. The
//            command's client gets +OK here.
//   copy     sources copy the keys whose owner changes to their new owners — with replicas and
//            nothing failed, each key also to the members that become its replicas
//            (Cluster::change_delivers_copies) — (RESTORE frames on a link of their own per
//            target, taken only by a prepared target) and track the keys written meanwhile; the
//            coordinator waits until every copy is acknowledged.
//   pause    every node holds client requests that touch keys and waits for its relayed
//            requests to be answered (and, with replication, for its replicas to acknowledge
//            its stream): nothing writes anywhere.
//   flush    sources send the keys written (or deleted) since they were copied, and mark on
//            each replication stream that it holds every write of the old ring
//            (Replication::mark_drained). A paused node relays nothing; requests a node that
//            committed relays to one that has not wait there for its commit.
//   commit   every node switches to the new ring (persisted), runs what it held, and deletes in
//            the background the keys it no longer owns (DELs in its append-only file).
//
// A failure before commit aborts the change everywhere (copies deleted on their targets); once a
// node committed, the coordinator commits the others, and itself last. A coordinator that is
// down leaves the change to its members: they fence every participant (it refuses the
// coordinator's steps from then on) and commit it if one had, else abort it
// (Cluster::maybe_resolve_orphaned_change).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "hashring/hash_ring.h"

namespace ringkv::cluster {

// CLUSTER JOIN host:port [WEIGHT w] / LEAVE host:port [FORCE] / SETWEIGHT host:port w.
struct RingChangeRequest {
  enum Kind { kJoin, kLeave, kSetWeight };
  Kind kind;
  std::string address;
  uint32_t weight = 1;
  bool force = false;  // LEAVE of a member that is down for good: its keys are lost
};

// Parses the arguments after CLUSTER (JOIN ..., LEAVE ..., SETWEIGHT ...); sets `error` (Redis
// style, without the leading '-') when they are wrong.
bool parse_ring_change(std::span<const std::string_view> args, RingChangeRequest& out,
                       std::string& error);

// A source's copy of the keys that move away from it.
struct CopyProgress {
  bool copied = true;     // every moving key sent and acknowledged (or none to send)
  bool failed = false;    // a copy was refused or its link failed: the change must abort
  bool flushed = true;    // the keys written since were sent and acknowledged (after flush)
  uint64_t to_move = 0;   // keys found moving so far
  uint64_t moved = 0;     // keys acknowledged by their new owners
  bool sweeping = false;  // deleting the keys this node no longer owns (after a change)
  // Restores of this node: members whose copies resumed from what it held, and did not.
  uint64_t resumed = 0;
  uint64_t resumed_full = 0;
};

class MembershipHost {
 public:
  virtual ~MembershipHost() = default;
  // A change to `next` was prepared: copy every key this node holds whose owner in `next` is
  // another node to that node, keeping track of the keys written meanwhile.
  // Copies are tagged with `version` (a target takes them only while that change is prepared).
  virtual void copy_start(const hashring::HashRing& next, uint64_t version,
                          std::string_view self) = 0;
  virtual CopyProgress copy_progress() const = 0;
  // Sends the keys written or deleted since they were copied; flushed once acknowledged.
  virtual void copy_flush() = 0;
  // The change ended: stop copying, and delete in the background every key whose owner in
  // `owners` is not `self` (the new ring after a commit; the old one after an abort, which
  // removes copies a target received).
  virtual void copy_end(const hashring::HashRing& owners, std::string_view self) = 0;
  // The requests held while the ring switched may run.
  virtual void release_held() = 0;
  // Keys this node holds (a node may join only while it holds none).
  virtual size_t key_count() = 0;
  // This node comes back from being failed over while its keys have copies elsewhere (a change
  // to `next` restores it): what it holds may be stale. It keeps the keys it owns in `next`
  // while it still knows where its replication streams ended (the members that served them
  // say at the copy whether their copies resume from there), and deletes the rest.
  virtual void prepare_restore(const hashring::HashRing& next) = 0;
  // The function libraries a node joining the cluster is given (FUNCTION DUMP's payload; empty
  // when there are none), and how the node being joined takes them (FUNCTION RESTORE ...
  // REPLACE): returns "" or the error.
  virtual std::string function_payload() { return {}; }
  virtual std::string restore_functions(std::string_view /*payload*/) { return {}; }
};

}  // namespace ringkv::cluster
