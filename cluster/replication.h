// Replication: with `replication-factor` N, each key lives on its primary (its owner on the
// routing ring) and on its replicas, the next N-1 distinct members clockwise (its preference
// list). A primary sends every write it records — the effective forms the append-only file gets —
// to the replicas of the keys written, over one stream per replica:
//
//   a dedicated peer link whose frames are numbered by the stream (its offsets, from 1), run by
//   the replica in order and not answered one by one: the replica acknowledges the offset it ran
//   up to (":<offset>") when the primary asks (RINGKV.REPL GETACK, not a frame of the stream: at
//   once when a write or a copy waits for it, else every few milliseconds), and answers only a
//   frame it refuses (an error, after which the primary copies everything again);
//   RINGKV.REPL HELLO <primary> <replid> <ring version> <first> <next> <ring from> <previous
//   version> opens each connection: the replica answers +CONTINUE <offset> when it has this
//   stream up to an offset the backlog (the last repl-backlog-size bytes of frames) still holds —
//   a partial resync — or +FULL after dropping its copies of the primary's keys, and the primary
//   then sends every key the replica should hold (RESTORE ... REPLACE ABSTTL frames, made by the
//   host) among the new writes, ending with RINGKV.REPL SYNCED;
//   a ring change (the keys a replica holds change) opens every stream again under the new ring.
//   A replica whose copy was complete under the previous ring (<previous version>) and that has
//   every frame made under it (the frames before offset <ring from>) keeps its copies and answers
//   +GAIN <offset>: the stream continues, and the primary sends only the keys the replica gained
//   (those it did not replicate of this primary under the previous ring), ending with SYNCED.
//   A change with no member failed gives each replica the keys it gains in its own copy step
//   instead (Migration), and each primary ends the old ring on its streams at the flush with
//   RINGKV.REPL DRAINED <version>: a replica that reached every primary's mark holds a complete
//   copy at the commit, and answers the next HELLO +CONTINUE <ring from − 1>: nothing is copied
//   (change_copies.cpp).
//   A ring change that removes a replica (failed over) or the primary keeps their stream aside
//   (parked); the change right after it, back to the same members (the restore), opens it again
//   where it was, and a replica whose copy is complete for the ring it ran under and that has
//   its frames up to an offset the backlog holds answers +RESUME <offset>: the primary sends the
//   frames after it, then the keys written while the stream was closed, ending with SYNCED. (A
//   primary that was itself removed requires every frame it made before — its keys were written
//   by others since, which its older frames must not overwrite — unless its restore took that
//   replica's values of the keys the frames it missed wrote (Migration::resume_missed): then the
//   replica runs them again and gets those keys' states with the keys written meanwhile.) On
//   the replica the keys the restore kept are the same as before the failover; its copy counts
//   as stale until SYNCED.
//   Frames made under an earlier ring are never run after the change: a replica refuses them
//   once its ring changed, and then its copy continues no more (the next HELLO gets +FULL) —
//   but for a primary the new ring routes no key to: its frames are neither run nor counted
//   (-REMOVED), and the copy stays where the change found it, for a restore to resume from.
//
// A write whose keys have different replicas (a multi-key command over keys of one primary) is
// sent as the state of each key to that key's replicas. MULTI/EXEC blocks (transactions, scripts)
// stay blocks on every replica that gets part of them.
//
// Acknowledgements make `replica-acks` and WAIT possible: a ticket names the offsets one
// command's writes reached on each stream; wait() calls back once enough of them are acknowledged
// or a deadline passes.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/peer_frame.h"
#include "cluster/peer_link.h"
#include "hashring/hash_ring.h"

namespace ringkv::engine {
struct CommandSpec;
}

namespace ringkv::cluster {

// The server's data side of replication.
class ReplicationHost {
 public:
  virtual ~ReplicationHost() = default;
  // Appends to `frame` a request that makes a replica's copy of `key` equal to this node's:
  // RESTORE key <absolute ttl> <payload> REPLACE ABSTTL, or DEL key when it does not exist.
  virtual void append_key_frame(int db, std::string_view key, std::string& frame) = 0;
  // Starts (again, from the beginning) the copy to `target`: every key
  // Replication::copies_key(key, target) names (all it replicates of this node, or those it
  // gained), each through Replication::send_key(target, key), paced by
  // Replication::has_room(target), then Replication::snapshot_done(target).
  virtual void snapshot_start(const std::string& target) = 0;
  // The copy to `target` is no longer wanted (the stream closed for good).
  virtual void snapshot_stop(const std::string& target) = 0;
  // The stream to `target` has room again for a copy waiting for it.
  virtual void stream_ready(const std::string& target) = 0;
  // Every key (database, name) changed here while members were failed over — written or
  // deleted, the keys of any primary — through `fn`; false when there were too many to keep
  // (then not every one is known).
  virtual bool changes_while_away(const std::function<void(int db, std::string_view key)>& fn) = 0;
  // Replica side: deletes every key this node holds in database `db` (every database when -1)
  // whose primary is `primary` (its full copy follows, or it flushed its keys).
  virtual void drop_keys_of(std::string_view primary, int db = -1) = 0;
};

// The offsets one command's writes reached on the streams, to wait for their acknowledgement.
struct ReplTicket {
  // (stream id, offset), in the order of the writes' replicas in their keys' preference list.
  std::vector<std::pair<uint64_t, uint64_t>> parts;
  // The writes had different replica sets (or no keys, e.g. FLUSHALL): every part counts.
  bool mixed = false;
  bool empty() const { return parts.empty(); }
};

// One replica stream's state, for INFO, ROLE and CLUSTER NODES.
struct ReplicaStatus {
  std::string address;
  std::string state;    // "online", "sync" (full copy running), "connecting", "disconnected"
  uint64_t offset = 0;  // frames sent so far (the stream's offset)
  uint64_t acked = 0;   // frames the replica acknowledged
  uint64_t lag_ms = 0;  // since the last acknowledgement while frames were outstanding
  uint64_t full_syncs = 0;
  uint64_t partial_syncs = 0;
};

// A primary this node replicates, as the replica sees it.
struct SourceStatus {
  std::string address;
  bool synced = false;  // a full copy (or the stream since it) is complete
  uint64_t offset = 0;
  uint64_t last_frame_ms = 0;  // loop time of its last frame
};

class Replication {
 public:
  struct Env {
    uv_loop_t* loop;
    // Opens a relay-mode peer link (the cluster handshake included) to a member.
    std::function<std::unique_ptr<PeerLink>(const std::string& address)> make_link;
    // Whether health checks see the member up.
    std::function<bool(const std::string& address)> peer_up;
    // Loop time of the member's last answered health check (0: none yet).
    std::function<uint64_t(const std::string& address)> last_heard_ms;
  };

  // `batch_ms`: how long frames nothing waits for may queue before they are written.
  Replication(Env env, std::string self, size_t factor, size_t backlog_bytes, uint64_t batch_ms);
  ~Replication();
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  void set_host(ReplicationHost* host) { host_ = host; }
  void start();
  void stop();
  // Writes what the streams queued: at once when something waits for the replica's
  // acknowledgement (asking for it), else `batch_ms` after the first frame queued (0: at once);
  // asks a replica for its offset every few milliseconds while frames go out.
  void flush();
  // While held, no stream opens (this node does not know yet whether its keys are current: a
  // full copy from it would replace newer ones).
  void hold_streams(bool held) { streams_held_ = held; }

  size_t factor() const { return factor_; }
  bool enabled() const { return factor_ > 1; }

  // Resuming a stream opened again (see parked_): the keys its replica gets after +RESUME (each
  // key's state now), which the host collected when it opened. Returns false for another stream.
  bool take_resume_keys(const std::string& target, std::vector<std::pair<int, std::string>>& keys);
  // The ring keys are routed by changed (membership, failover): streams to members that no
  // longer replicate this node's keys close, new ones open, and every stream opens again with
  // the new version (replicas copy again what they now hold).
  // `members` is the whole ring (failed members included): a stream closed because its replica
  // or this node failed over is parked (see parked_), not one to a member that left.
  void set_routing(const hashring::HashRing& routing, uint64_t version,
                   const hashring::HashRing& members);
  // A member's health changed: a stream to a member known down stops trying.
  void peer_state_changed(const std::string& address, bool up);

  // Whether this node is the primary of `key`; then `targets` gets its replicas' addresses.
  bool replicas_of(std::string_view key, std::vector<std::string_view>& targets) const;
  // The primary of `key` on the routing ring.
  std::string_view primary_of(std::string_view key) const { return routing_.owner_of(key); }

  // Primary side.
  // One recorded write (its table name and arguments) in database `db`: sent to the replicas of
  // its keys. A record of database n > 0 travels behind RINGKV.DB n, or, inside a block (queued
  // in the replica's MULTI, run at its EXEC), after a SELECT n queued there.
  // `spec`, when given, is the command argv names (else it is looked up).
  void feed(int db, std::span<const std::string_view> argv,
            const engine::CommandSpec* spec = nullptr);
  // The records fed between these calls form one MULTI/EXEC block on every replica.
  void begin_block();
  void end_block();
  // Collects the offsets of the writes fed from now on into a ticket (nested calls share the
  // outermost's); take_ticket() ends it. Its ticket stays valid until the next begin_ticket().
  void begin_ticket();
  const ReplTicket& take_ticket();
  // Calls `done(acknowledged, enough)` once the first `need` parts of `ticket` are acknowledged
  // (every part when it is mixed), or at `deadline_ms` (loop time; 0 = never) with how many
  // from the first are acknowledged then — or, with `give_up`, as soon as a replica known down
  // among the first `need` makes that impossible. Parts count in order because a failover
  // promotes the first replica of a key's preference list that is not failed with its primary.
  void wait(const ReplTicket& ticket, size_t need, uint64_t deadline_ms, bool give_up,
            std::function<void(size_t acknowledged, bool enough)> done);
  // How many parts of `ticket`, from the first on, are acknowledged now.
  size_t acknowledged(const ReplTicket& ticket) const;
  // The ticket of everything sent so far to the replicas of `key` (WAIT relayed for a key).
  ReplTicket ticket_for(std::string_view key) const;
  // Full copy: room on the stream to `target` for another key; sending one; the end.
  bool has_room(const std::string& target) const;
  // Whether the copy running to `target` sends `key`: `target` replicates it of this node, and,
  // when the copy sends only keys gained in a ring change, did not under the previous ring.
  bool copies_key(std::string_view key, std::string_view target) const;
  void send_key(const std::string& target, int db, std::string_view key);
  // One request (a slice of a big key) on the stream to `target`.
  void send_frame(const std::string& target, std::string request);
  void snapshot_done(const std::string& target);

  // Replica side: a RINGKV.REPL frame (its arguments after the name) on connection `conn_id`,
  // whose stream is `primary`'s ("" until HELLO named it). Returns the reply; HELLO sets
  // `primary` and makes this connection the primary's current stream.
  std::string on_frame(std::span<const std::string_view> args, uint64_t conn_id,
                       std::string& primary);
  // What this node holds of `primary`'s keys: nothing (no stream from it opened here since this
  // node started), a complete copy (its last full copy ended, the stream continued since), an
  // incomplete one (a full copy began — dropping what was here — and its end never came), or a
  // stale one: complete for an earlier ring, and the ring changed since in a way that may make
  // this node the first replica of keys it never got (a member joined, came back or changed
  // weight, or at least replication-factor − 1 members left or failed; the primary had not
  // streamed again under the new ring, or the keys gained are still being copied; or the stream
  // resumed after a restore and the keys written meanwhile are still being copied; or the ring
  // changed by a change that gave replicas their keys, and a primary's stream did not bring its
  // end-of-ring mark here: what that stream missed, this node may now replicate of another
  // primary). Failing the primary over needs complete copies.
  enum class CopyState { kNone, kComplete, kIncomplete, kStale };
  CopyState copy_state(std::string_view primary) const;
  // What this node knows of a primary's stream to it.
  struct Source {
    std::string replid;         // "" once a frame was refused: the stream no longer continues
    uint64_t ring_version = 0;  // the ring its current stream opened under
    uint64_t offset = 0;
    bool synced = false;  // the copy is complete for the ring of copy_version
    uint64_t last_frame_ms = 0;
    uint64_t conn = 0;          // the connection of its current stream
    uint64_t copy_version = 0;  // the ring its copy was last complete for
    bool resuming = false;      // resumed (+RESUME): the keys written meanwhile still follow
    uint64_t drained = 0;       // the change whose DRAINED mark this stream reached, complete
    // The copy was made complete by the change to copy_version (copies_delivered), and its
    // stream has not opened again since.
    bool delivered = false;
    // The copy is complete for the ring its stream opened under (not still getting the keys
    // gained in a ring change).
    bool current() const { return synced && copy_version == ring_version; }
  };
  // `primary`'s stream if `conn_id` carries its current one, else nullptr (frames of an older
  // one are refused). Valid while this Replication lives: sources are never dropped.
  Source* current_source(std::string_view primary, uint64_t conn_id);
  // A frame of the source's stream ran here (its offset advances).
  void frame_applied(Source& source);
  // A frame of the source's stream was refused here (it is counted, and the copy misses it): the
  // stream must not continue (the next HELLO gets a full copy).
  void frame_refused(Source& source) { source.replid.clear(); }
  // Whether `primary`'s write `argv` (its source's current stream) may run here: the stream
  // opened under this node's ring (both ends route by the same ring, and a primary sends only
  // writes of keys it is the primary of there). Once this node's ring changed, the primary's
  // frames until it opens the stream again under the new ring (as it does after its own change)
  // are taken only when every key they write is still the primary's and replicated here on this
  // node's ring — writes a peer that switched first relayed to it while it had not: a key that
  // moved has a new primary, whose copy this frame must not overwrite.
  bool accepts_writes(const Source& source, std::string_view primary,
                      const engine::CommandSpec& spec, std::span<const std::string_view> argv) {
    return source.ring_version == ring_version_ || accepts_late_write(primary, spec, argv);
  }

  // Whether `primary`'s frames on its source's current stream are of a ring this node left
  // behind, which no longer routes any key to the primary (failed over, or gone): none runs and
  // none counts, so this node's copy stays where that ring change found it — what a restore
  // resumes from (copy_of_removed).
  bool primary_removed(const Source& source, std::string_view primary) const {
    return source.ring_version != ring_version_ && !routing_.contains(primary);
  }
  // The error such a frame gets: its primary stops the stream and keeps it as it is.
  static constexpr std::string_view kRemovedError = "-REMOVED ";

  // Resuming a member failed over (see Migration): each side's view of the stream the member
  // ran as a primary to a replica, at the moment it stopped. Equal views mean the replica's
  // copy of the member's keys was exactly the member's, so its restore needs only the keys
  // written since.
  struct ResumePoint {
    std::string replid;
    uint64_t offset = 0;  // the stream's last frame
    bool operator==(const ResumePoint&) const = default;
  };
  // The failed-over member's side: where its stream to `replica` ended when this node learned
  // it no longer routes keys (kept until the next ring change, or forgotten).
  std::optional<ResumePoint> resume_point(std::string_view replica) const;
  bool has_resume_points() const {
    return self_index_ == hashring::HashRing::kNoNode && !parked_.empty();
  }
  void forget_resume_point(std::string_view replica);
  void forget_resume_points();
  // The failed-over member's side, when `replica` ran its stream only up to `offset`, before the
  // resume point: the keys (database, name) the frames after it wrote — what the replica's copy
  // missed — if the backlog still holds every one of those frames and each names the keys it
  // writes (else nullopt: a flush, a keyless record, frames gone). The restore takes the
  // replica's values of those keys, so the stream to it may then resume from `offset`: the
  // replica runs the frames after it again, then gets those keys' states with the keys written
  // while it was away.
  using KeyList = std::vector<std::pair<int, std::string>>;
  std::optional<KeyList> resume_before_missed(std::string_view replica, uint64_t offset);
  // The replica's side: its copies of every primary's keys were dropped outside their streams
  // (the next HELLO of each gets +FULL).
  void forget_copies();
  // The replica's side: its complete copy of `primary`'s keys, where the primary's stream had
  // reached when the ring last changed and removed it — while the ring has not changed since.
  std::optional<ResumePoint> copy_of_removed(std::string_view primary) const;

  std::vector<ReplicaStatus> replicas() const;
  // min-replicas-to-write: how many replicas of `keys` (the fewest over the keys this node is
  // the primary of) have a complete copy, are online, and lag at most `max_lag_s` seconds (as
  // Redis counts them: whole seconds since their last acknowledgement of frames outstanding, or
  // since they last answered a health check, whichever is longer); without such keys
  // (FLUSHALL, EXEC), how many of this node's streams are so (at most factor - 1).
  size_t good_replicas(std::span<const std::string_view> keys, uint64_t max_lag_s) const;
  std::vector<SourceStatus> sources() const;
  // Offset totals for INFO replication (frames sent over every stream).
  uint64_t total_offset() const;
  // Bytes the streams' backlogs hold (parked streams' too), for INFO memory.
  uint64_t backlog_held() const;
  // Frames sent to replicas whose streams are online and not copying, not acknowledged yet (by a
  // replica that acknowledged something within the last second, unless `stalled_too`).
  uint64_t unacknowledged(bool stalled_too = false) const;
  // A shutdown waits for the replicas (shutdown-timeout): while `on`, every stream asks its
  // replica to acknowledge what it sent at once, as a waiting write would.
  void set_draining(bool on) { draining_ = on; }

  // A ring change that delivers copies (Cluster::change_delivers_copies; change_copies.cpp).
  // The primary's side, at its flush: RINGKV.REPL DRAINED <version> on every stream — the
  // replica has every write this node made under the old ring once it ran it (nothing writes
  // here between the flush and the switch) — and whether every such mark was acknowledged (or
  // its replica is down, went silent, or did not reconnect within a second: its copies then count
  // as stale after the change, see copy_state).
  void mark_drained(uint64_t version);
  bool drained_acknowledged() const;
  // The replica's side, at the commit of such a change to `version` (this node now routes by
  // it): when every other member of the ring before (`before`) marked its stream drained here,
  // this node holds every key it holds under the new ring — its copies, current, and the keys
  // the change's copy gave it — so its copy of every primary's keys counts as complete now, and
  // each primary's next HELLO under `version` continues the stream (from the first frame made
  // under the new ring) instead of copying anything.
  void copies_delivered(uint64_t version, const std::vector<std::string>& before);
  uint64_t backlog_bytes() const { return backlog_limit_; }
  // repl-backlog-size changed (CONFIG SET): each stream's backlog keeps this many bytes from its
  // next frame on.
  void set_backlog_bytes(size_t bytes) { backlog_limit_ = bytes; }

 private:
  struct Stream;
  // Appends `frame`, a record of database `db`, to the stream (see feed()).
  void append_record(Stream& s, int db, std::string_view frame);
  struct Waiter;
  struct WaitEntry;
  // Part `part` of `w` was acknowledged (or its replica is gone); fires `w` once it is settled.
  void part_done(const std::shared_ptr<Waiter>& w, size_t part, bool acked);
  void check_waiter(const std::shared_ptr<Waiter>& w);
  Stream* stream_to(std::string_view address) const;
  // Whether the ring of `version` (one of the last this node routed by) had the members the
  // routing ring has.
  bool same_members(uint64_t version) const;
  bool accepts_late_write(std::string_view primary, const engine::CommandSpec& spec,
                          std::span<const std::string_view> argv);
  // Appends one frame to `s` (numbered, kept in the backlog, written when online); `bytes` is a
  // complete request. Adds its offset to the open ticket.
  void append(Stream& s, std::string_view bytes);
  void write_frame(Stream& s, uint64_t offset, std::string_view bytes);
  // Milliseconds the replica of `s` is behind at loop time `now` (0: it has every frame).
  static uint64_t lag_ms(const Stream& s, uint64_t now);
  // HELLO of `primary` under `version` to a copy a ring change made complete
  // (copies_delivered): the +CONTINUE reply when the stream is the one that copy was complete
  // for up to the ring change (or new, made under the new ring), else "" (the copy follows).
  std::string continue_delivered(Source& src, std::string_view replid, uint64_t version,
                                 uint64_t first, uint64_t next, uint64_t ring_from);
  // A message of the replica on the stream's connection: an acknowledgement or a refusal.
  void on_stream_message(Stream& s, std::string_view message);
  void connect(Stream& s);
  void on_hello_reply(Stream& s, uint64_t gen, std::string_view reply);
  void link_failed(Stream& s, std::string_view why);
  void acked(Stream& s, uint64_t offset);
  // The replica's full copy ended: it has every frame so far.
  void copy_ended(Stream& s);
  void check_deadlines();
  // Ends the waits that needed acknowledgements of `s`'s replica (it is down or gone).
  void abandon_waits(Stream& s);
  void fire(const std::shared_ptr<Waiter>& w);
  void tick();
  // The addresses this node's keys are replicated to on the current routing ring.
  std::vector<std::string> compute_targets() const;

  Env env_;
  std::string self_;
  size_t factor_;
  size_t backlog_limit_;
  uint64_t batch_ms_;
  ReplicationHost* host_ = nullptr;
  hashring::HashRing routing_;
  uint64_t ring_version_ = 0;
  // The ring before the last change, which a replica's copy continued across it dates from.
  hashring::HashRing previous_routing_;
  uint64_t previous_version_ = 0;
  size_t previous_self_index_ = hashring::HashRing::kNoNode;
  mutable std::vector<size_t> pref_scratch_;
  // Whether, on `ring`, `key`'s primary is the member of index `primary` and `address` is one of
  // its replicas.
  bool replicates(const hashring::HashRing& ring, size_t primary, std::string_view key,
                  std::string_view address) const;
  size_t self_index_ = hashring::HashRing::kNoNode;
  std::map<std::string, std::unique_ptr<Stream>, std::less<>> streams_;
  // The stream to each member of routing_ by its index there (nullptr: none), for feed().
  std::vector<Stream*> stream_by_node_;
  // Rebuilds stream_by_node_ (streams or routing_ changed).
  void index_streams();
  uint64_t next_stream_id_ = 1;
  std::map<uint64_t, Stream*> streams_by_id_;
  std::map<std::string, Source, std::less<>> sources_;
  // Streams a ring change closed because their replica or this node failed over, by replica,
  // as they ended: the change after next restoring the same members
  // opens them again where they were, and the replica resumes its copy (+RESUME) when it has
  // their frames up to an offset their backlog still holds. Dropped at any other change.
  std::map<std::string, std::unique_ptr<Stream>, std::less<>> parked_;
  uint64_t parked_at_ = 0;    // the ring version that closed them
  uint64_t parked_from_ = 0;  // the ring version they ran under
  // Notes removed_copies_ for the members `routing` removes from previous_routing_.
  void note_removed_copies(const hashring::HashRing& routing);
  // A replica resuming the stream `s` of this node, which was failed over, from `offset`
  // before its parked end: allowed when the restore took the replica's values of what the
  // frames after it wrote (resume_before_missed); their keys join the stream's resume keys.
  bool resumes_missed(Stream& s, uint64_t offset);
  // Whether the parked stream `s` opens again: this ring restores the one it ran under, right
  // after the change that closed it (then its replica may resume, see take_resume_keys).
  bool unpark(Stream& s);
  // By primary removed in the last ring change (ring_version_): its copy here then.
  std::map<std::string, ResumePoint, std::less<>> removed_copies_;
  // The source current_source() found last (frames come in batches per stream).
  std::map<std::string, Source, std::less<>>::iterator last_source_ = sources_.end();
  // The live members of the last rings (by version) a source's copy may date from.
  std::map<uint64_t, std::vector<hashring::Member>> live_history_;
  // The last change that delivered copies and whose mark (DRAINED) a primary's stream did not
  // bring here: until each primary's stream copied the keys this node gained, every copy of an
  // earlier ring counts as stale (see copy_state).
  uint64_t marks_missed_ = 0;
  uint64_t drain_started_ms_ = 0;  // when mark_drained ran (loop time)
  int block_depth_ = 0;
  int ticket_depth_ = 0;
  ReplTicket ticket_;
  // Waiters by deadline (earliest first; UINT64_MAX for none).
  std::multimap<uint64_t, std::shared_ptr<Waiter>> waiters_;
  // Links given up, possibly from inside their own callbacks: destroyed at the next tick.
  std::vector<std::unique_ptr<PeerLink>> retired_;
  uv_timer_t timer_;        // deadlines and reconnects
  uv_timer_t flush_timer_;  // frames left queued by flush()
  // Whether something waits for `s`'s replica to acknowledge: a write (replica-acks, WAIT), a
  // copy (its window, its end), a ring change's mark.
  static bool awaited(const Stream& s);
  // Writes what `s` queued now, whatever the batching (the stream closes, or the node stops).
  static void write_queued(Stream& s);
  bool started_ = false;
  bool streams_held_ = false;
  bool draining_ = false;
  std::vector<size_t> scratch_;
  std::vector<size_t> first_scratch_;
  std::vector<size_t> key_scratch_;
  std::string frame_scratch_;  // the record feed() sends
};

}  // namespace ringkv::cluster
