// Migration: the server's side of a ring change (cluster::MembershipHost). As a source it copies
// the keys whose owner changes (in every database) to their new owners, and, when the change
// delivers copies (Cluster::change_delivers_copies), the keys it routes to the members that become
// their replicas — RESTORE ... REPLACE ABSTTL frames on one link per target, a batch per loop turn
// so the loop keeps serving — tracks the keys
// written or deleted meanwhile and sends them again at the flush. After the change it deletes, a
// batch per loop turn, the keys this node no longer owns (each a DEL in the append-only file).
// While the ring switches it holds the connections whose next request must wait.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cluster/membership.h"
#include "cluster/peer_link.h"
#include "cluster/replication.h"
#include "engine/commands/key_commands.h"
#include "hashring/hash_ring.h"
#include "server/idle_task.h"

namespace ringkv::server {

class Server;
class Connection;

class Migration final : public cluster::MembershipHost {
 public:
  explicit Migration(Server& server);
  ~Migration() override;
  Migration(const Migration&) = delete;
  Migration& operator=(const Migration&) = delete;

  // cluster::MembershipHost
  void copy_start(const hashring::HashRing& next, uint64_t version, std::string_view self) override;
  cluster::CopyProgress copy_progress() const override;
  void copy_flush() override;
  void copy_end(const hashring::HashRing& owners, std::string_view self) override;
  void release_held() override;
  size_t key_count() override;
  void prepare_restore(const hashring::HashRing& next) override;
  std::string function_payload() override;
  std::string restore_functions(std::string_view payload) override;

  // A key of database `db` was written or deleted (by a command, expiry or eviction); `dropped`:
  // it is being deleted by expiry or eviction (reported before the store removes it, so the
  // store must not be looked up here: the lookup would expire it again, and again).
  void key_changed(int db, std::string_view key, bool dropped = false);
  // A write ran here while members are failed over, without replicas (a stand-in, in eject
  // mode): each of its keys that a failed member owns and that is absent here now (one it
  // deleted, or a DEL of a key the stand-in never held) is handed back as a deletion.
  void write_ran(int db, const engine::CommandSpec& spec, std::span<const std::string_view> argv);
  // RINGKV.RESUME <source> <replid> <offset>, the first copy frame of `source` to this node
  // being restored: whether its copy of the keys `source` routed while this node was away
  // resumes from what this node holds (+PARTIAL: the stream this node ran to `source` as a
  // primary ended where `source`'s copy of it did, so only the keys written since follow) or
  // not (+FULL: those keys are deleted here, and every one follows). When `source` missed only
  // writes its backlog still holds, the answer is *PARTIAL with their keys (resume_missed).
  std::string resume(std::span<const std::string_view> args);
  // With replicas: every key changed here while members are failed over (see record_away);
  // false when there were too many to keep.
  bool changes_while_away(const std::function<void(int db, std::string_view key)>& fn) const;

  // Keys were replaced wholesale (FLUSHALL, FLUSHDB, SWAPDB): everything copied is sent again
  // and the scan starts over (a SWAPDB may have put unscanned keys in a database scanned already).
  void keyspace_flushed();
  // `conn`'s next request waits until release_held(). With `limit_ms` (a client's request):
  // false, and nothing held, once that request has waited so long since it was first held.
  bool hold(Connection& conn, uint64_t limit_ms = 0);
  // The client's request runs (or is answered): it no longer waits.
  void not_held(const Connection& conn) {
    if (!held_since_.empty()) forget_held(conn);
  }
  // Resumes the clients whose held request has waited `limit_ms` (they are then answered).
  void wake_expired(uint64_t limit_ms);
  // Closes the handles (shutdown).
  void stop();

 private:
  // One loop turn's batch: copies, resends or deletes.
  bool step();
  void copy_batch();
  // Below the limits on unacknowledged copies.
  bool may_send() const;
  void sweep_batch();
  // Sends `key` of database `db` (its current value, or a DEL when it is gone) to its new owner
  // and to the members that gain a copy of it (see gained_holders); `first`: its first copy
  // (counted in the progress), not a resend at the flush.
  void send_key(int db, std::string_view key, bool first);
  // The same, to the node of index `owner` in the next ring (known from the scan; kNoNode: none)
  // and, when `gained`, to the members that gain a copy.
  void send_key_to(int db, std::string_view key, bool first, size_t owner, bool gained);
  // When the change delivers copies (Cluster::change_delivers_copies): the members (indexes in
  // the next ring) that hold `key` under it as replicas and do not now, if this node routes it
  // now (its owner, if it moves, is moving_to's). Else none.
  const std::vector<size_t>& gained_holders(std::string_view key);
  // The frame prefix of a copy into database `db`: [RINGKV.DB n] RINGKV.MIGRATE <version>.
  std::span<const std::string_view> copy_prefix(int db) const;
  // The index in the next ring of `key`'s new owner when the key moves away from this node, else
  // kNoNode. Only keys this node routes now are its to send (scanned or written during the copy):
  // a replica's copy (written by its primary's stream, possibly behind it) or a leftover of an
  // earlier change would reach the new owner on another link than the owner's, in any order, and
  // could overwrite the owner's newer value.
  size_t moving_to(std::string_view key) const;
  // The copy has keys to send and room to send them.
  bool more_to_copy() const;
  // Sends slices of the collection being copied slice by slice while there is room and time
  // (the turn began at `start`, monotonic µs).
  void send_slices(int64_t start);
  // Commits `requests` requests just written to `link` as copies (`first`: the last of them
  // ends the key's first copy).
  void commit_copies(cluster::PeerLink& link, size_t requests, uint64_t bytes, bool first);
  void commit_copy(cluster::PeerLink& link, uint64_t bytes, bool first);
  // What an acknowledgement callback carries: small enough for std::function to hold without
  // allocating (one allocation less per key copied). Bytes saturate at kMaxBytes, counted the
  // same way when sent.
  struct Ack {
    static constexpr uint64_t kMaxBytes = UINT32_MAX >> 1;
    uint32_t generation;   // the low bits of generation_ at the copy
    uint32_t bytes_first;  // bytes << 1 | (the end of a first copy)
  };

  Server& server_;
  IdleTask task_;
  std::vector<uint64_t> held_;  // connection ids
  // Clients' requests held with a limit: connection id → when first held (loop ms).
  std::unordered_map<uint64_t, uint64_t> held_since_;
  void forget_held(const Connection& conn);
  std::string self_;

  // The copy (source side) while a change is prepared.
  struct Copy {
    hashring::HashRing next;  // the ring the change moves to
    std::string version;      // of the change, as its copies carry it
    uint64_t cursor = 0;
    int scan_db = 0;  // the database the scan is in
    bool scanned = false;
    bool flushing = false;
    bool failed = false;
    // A key the scan found moving, not sent yet, with its new owner (an index into
    // next.nodes()).
    struct Found {
      int db;
      size_t owner;  // kNoNode when only the members gaining a copy get it
      bool gained;   // the members gaining a copy get it too
      std::string key;
    };
    std::vector<Found> found{};
    // By database: keys copied (a FLUSHALL makes them all dirty), and written since copied (sent
    // again). `sent` is a list, not a set: appending a short key allocates nothing and dropping
    // the list at the end of the change frees one block, where a set of 100 000s of nodes took
    // tens of milliseconds of one loop turn to free. A key sent twice is listed twice, which
    // only matters after a FLUSHALL (it goes into `dirty`, a set, once).
    std::vector<std::vector<std::string>> sent{};
    std::vector<std::unordered_set<std::string>> dirty{};
    // By database: the frame prefix of its copies, and the database number it names.
    std::vector<std::string> db_digits{};
    std::vector<std::vector<std::string_view>> prefixes{};
    uint64_t in_flight = 0;        // copies not yet acknowledged
    uint64_t in_flight_bytes = 0;  // ... and their payload bytes
    // A big collection being copied a slice per turn (one at a time; see engine::KeySliceCursor).
    struct Sliced {
      int db;
      std::string key;
      engine::KeySliceCursor cursor;
      bool first;                   // its first copy, counted in the progress
      std::vector<size_t> targets;  // indexes in `next`
    };
    std::optional<Sliced> sliced{};
    // Restored members asked whether their copy resumes (the scan waits for every answer), and
    // by index in `next`: the members whose copy resumes (only the keys changed since go).
    size_t resuming = 0;
    std::vector<bool> resumes{};
    // The change gives the members that become a key's replicas their copies too.
    bool delivers = false;
    bool sends = true;  // false on a node being joined (it holds only the copies it is given)
    std::vector<size_t> pref_now{}, pref_next{}, gained{}, targets{};  // scratch
  };
  std::optional<Copy> copy_;
  // The last copy's counts, shown after it ended too.
  uint64_t to_move_ = 0;
  uint64_t moved_ = 0;
  uint64_t generation_ = 0;  // a new copy ignores the acknowledgements of an old one

  // The sweep: deleting the keys this node does not own under `owners`.
  struct Sweep {
    hashring::HashRing owners;
    int db = 0;
    uint64_t cursor = 0;
    uint64_t deleted = 0;
  };
  std::optional<Sweep> sweep_;
  uint64_t last_log_ms_ = 0;
  // A key changed (`deleted`: it is gone): while members are failed over, a change is
  // remembered — without replicas (a cache) only deletions of their keys, so that their
  // restore deletes those keys there too; with replicas every change, so that a restore
  // resuming from the member's own copies (of the keys it owns, and of those it replicates)
  // sends only those keys.
  void record_away(int db, std::string_view key, bool deleted);
  // Keys of failed members changed here while they were away (see record_away), by database,
  // bounded (away_count_ in all).
  std::vector<std::unordered_set<std::string>> away_keys_;
  std::vector<size_t> key_scratch_;  // write_ran's key positions
  size_t away_count_ = 0;
  bool away_overflowed_ = false;
  // A restored member's copy resumes from `target`'s (its answer to RINGKV.RESUME: +PARTIAL,
  // or `missed`, *PARTIAL listing keys of its writes this node's copy missed).
  void resume_to(size_t target, std::string_view missed = {});
  // RINGKV.RESUME's answer when `source`'s copy of this node's stream ran it up to `offset` of
  // `last`: the keys the rest wrote (`missed`, those `source` served) are deleted here and
  // taken from `source`.
  std::string resume_missed(std::string_view source, uint64_t offset, uint64_t last,
                            const cluster::Replication::KeyList& missed);

  // This node being restored (target side): the ring that routed its keys while it was away,
  // the ring the restore moves to, the members that routed keys it kept and have not said yet
  // whether its copy of them resumes, and the counts of those that did and did not.
  struct Restore {
    hashring::HashRing routing;
    hashring::HashRing next;
    std::set<std::string, std::less<>> unheard;
  };
  std::optional<Restore> restore_;
  uint64_t resumed_ = 0;
  uint64_t resumed_full_ = 0;
  bool dropping_ = false;  // the keys being deleted are stale copies, not changes
  // Deletes every key `drop(key)` names, in every database (each a DEL in the append-only file).
  template <typename F>
  size_t drop_keys_if(F drop);
  // Deletes its own keys routed by any of `sources` (members whose copies it does not resume
  // from), in one scan.
  void drop_shares(const std::set<std::string, std::less<>>& sources);

  // Whether this node holds `key` under `ring`: it is among its first replication-factor
  // preferences there (its owner, without replication).
  bool holds(const hashring::HashRing& ring, std::string_view key) const;
};

}  // namespace ringkv::server
