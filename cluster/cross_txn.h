// Cross-node transactions: a MULTI ... EXEC whose commands touch keys on several nodes (and,
// with [cluster] atomic-multikey, a multi-key command over several owners) runs as one isolated
// unit, coordinated by the node its client is connected to.
//
//   lock     each participant, one after the other in address order (so two transactions never
//            wait for each other in a cycle), locks its part's keys and the client's WATCHed keys
//            there, checks those WATCHes, and refuses the part as a command of its own would be
//            refused there — its maxmemory when the part may grow memory (checks bit 1), its
//            persistence and min-replicas-to-write when it writes (bit 2):
//              RINGKV.TXN LOCK <wait-ms> <lease-ms> <checks 0-3> <key>...
//                → +OK | +WATCHED | +BUSY | -error (nothing locked)
//            a participant waits at most wait-ms for keys other transactions hold (0: it answers
//            BUSY at once); it drops its locks by itself when no RUN or RELEASE came within
//            lease-ms (and refuses a late RUN); the WATCHes stay until the RUN or a final
//            RELEASE;
//   run      once every participant is locked, each runs its part as one MULTI/EXEC block
//            (recorded so in its append-only file and replication streams) and releases its locks:
//              RINGKV.TXN RUN <resp 2|3> <release 0|1> <not-after> <n> (<argc> <arg>...)...
//                → *n replies | -error (nothing ran)
//            (a RUN reaching its participant after the unix time not-after, in ms, when the
//            coordinator stopped waiting for it, is refused);
//            the last participant's LOCK and RUN travel together (one round trip less);
//   release  RINGKV.TXN RELEASE <final 0|1> drops what LOCK took (an abort; final: the WATCHes
//            there too).
//
// A transaction first tries every participant at once with LOCKs that may not wait (nobody waits,
// so no cycle can form), the one remote participant's RUN travelling with its LOCK: one round trip
// when its keys are free. If a key is held, it gives back what it took and locks in order.
//
// Every participant locks before any runs, and while a key is locked every other command on it
// waits, so no client ever sees some parts applied and others not (two-phase locking). Frames
// travel on transaction links (one per client and peer while the client WATCHes there, borrowed
// from a per-peer idle set otherwise), never on the shared relay links.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/link_error.h"
#include "cluster/peer_frame.h"
#include "protocol/reply_writer.h"

namespace ringkv::cluster {

// A participant's answers to LOCK.
inline constexpr std::string_view kTxnLocked = "+OK\r\n";
inline constexpr std::string_view kTxnWatched = "+WATCHED\r\n";
// ... to a LOCK that may not wait (wait-ms 0) and found a key held by another transaction.
inline constexpr std::string_view kTxnBusy = "+BUSY\r\n";

// How the coordinator reaches its own node's part (implemented by the server).
class TxnHost {
 public:
  virtual ~TxnHost() = default;
  // Locks `keys` here for the transaction of client `client_id` (with `watches`, its WATCHed
  // keys here too, whose WATCHes it checks then drops) after checking what would refuse the part
  // (see TxnPart::refusal_checks: maxmemory, then for a write the persistence and replicas);
  // `done` gets kTxnLocked, kTxnWatched or an error reply, at once or once the keys are free (at
  // most `wait_ms` later).
  virtual void lock_here(uint64_t client_id, std::vector<std::string> keys, bool watches,
                         unsigned checks, uint64_t wait_ms,
                         std::function<void(std::string_view reply)> done) = 0;
  // Runs `commands` here for the client as one block (recorded as MULTI ... EXEC); returns the
  // array of their replies in `resp`.
  virtual std::string run_here(uint64_t client_id,
                               const std::vector<std::vector<std::string>>& commands,
                               protocol::RespVersion resp) = 0;
  // Drops the client's locks here.
  virtual void release_here(uint64_t client_id) = 0;
};

// One participant's share of a transaction.
struct TxnPart {
  size_t node = 0;                // index in the routing ring
  std::vector<std::string> keys;  // locked there before anything runs
  bool deny_oom = false;          // a command may grow memory (maxmemory check)
  bool writes = false;            // a command writes (persistence and min-replicas-to-write checks)
  std::vector<std::vector<std::string>> commands;  // run there as one block
  // What the participant checks before it locks: bit 1 maxmemory, bit 2 the write checks.
  static constexpr unsigned kCheckMemory = 1;
  static constexpr unsigned kCheckWrites = 2;
  unsigned refusal_checks() const {
    return (deny_oom ? kCheckMemory : 0) | (writes ? kCheckWrites : 0);
  }
};

struct TxnOutcome {
  enum Kind {
    kCommitted,    // every part ran: replies[i] is part i's array reply
    kWatched,      // a WATCHed key changed: nothing ran
    kRingChanged,  // routing changed before the commit: nothing ran
    kAborted,      // nothing ran; `error` says why (a lock wait, an unreachable peer, OOM...)
    kIncomplete,   // some parts ran and others did not, or may not have; `error` names them
  };
  Kind kind = kAborted;
  std::vector<std::string> replies;  // in the order of the parts given
  std::string error;                 // an error text, without '-' and CRLF
};
using TxnDone = std::function<void(TxnOutcome outcome)>;
// A part's RUN: its array reply (or the participant's error reply: nothing ran), or, with
// `error`, why the link failed (the part may have run).
using TxnRunDone = std::function<void(std::string_view reply, const std::string* error)>;

class Cluster;

// One cross-node transaction, coordinated here. Made by Cluster::begin_transaction; alive until
// finish() (callbacks keep it).
class TxnSession : public std::enable_shared_from_this<TxnSession> {
 public:
  TxnSession(Cluster& cluster, uint64_t client_id, std::vector<TxnPart> parts,
             protocol::RespVersion resp, int db, bool watches);
  ~TxnSession();
  TxnSession(const TxnSession&) = delete;
  TxnSession& operator=(const TxnSession&) = delete;

  // Locks every part, then runs every part and releases: `done` gets each part's reply
  // (MULTI/EXEC and the atomic split commands).
  void execute(TxnDone done);
  // Locks every part; `done` gets kCommitted (no replies) once all are locked, or why not (what
  // was locked is released). Then run() and release() as the command needs.
  void lock(TxnDone done);
  // Runs `commands` on part `part` (locked), releasing its locks after with `release`.
  void run(size_t part, std::vector<std::vector<std::string>> commands, bool release,
           TxnRunDone done);
  // Releases every part still locked, and gives the links back.
  void finish();
  // For a command whose parts ran in several RUNs: the error text naming the parts that ran,
  // may have run and did not, after a RUN failed.
  std::string incomplete_error() const;

  size_t size() const { return members_.size(); }
  // The address of part `part`'s node.
  const std::string& address(size_t part) const;

 private:
  friend class Cluster;
  struct Member;

  // Checks the peers and takes the links; false when that ended the transaction.
  bool prepare();
  // execute()'s first attempt: every participant at once, without waiting.
  void try_at_once();
  void on_locked_at_once(size_t i, std::string_view reply, const LinkError* error);
  // Gives back what the first attempt locked and locks one participant after the other.
  void lock_in_order();
  size_t remote_count() const;
  void lock_from(size_t i);
  // `ran_with_it`: the member's RUN travelled with this LOCK.
  void on_locked(size_t i, std::string_view reply, const LinkError* error,
                 bool ran_with_it = false);
  void on_last_run(size_t i, std::string_view reply, const std::string* error);
  // Runs every part not yet run, each releasing; then ends with what they answered.
  void commit_rest();
  void part_ran(size_t i, std::string_view reply, const std::string* error);
  void end(TxnOutcome outcome);
  // Releases what is locked (and sends RELEASE where a LOCK went), then ends with `outcome`.
  void abort(TxnOutcome::Kind kind, std::string error);
  // The frames of a part. `wait`: the LOCK waits for keys other transactions hold (else it
  // answers kTxnBusy).
  std::string lock_frame(const Member& m, bool wait) const;
  // Sends RELEASE (`final`: the WATCHes there go too).
  void release_frame(Member& m, bool final);
  std::string run_frame(const std::vector<std::vector<std::string>>& commands, bool release) const;
  void send(Member& m, const std::string& frame,
            std::function<void(std::string_view reply, const LinkError* error)> cb);

  Cluster& cluster_;
  uint64_t client_id_;
  protocol::RespVersion resp_;
  int db_;        // the database the parts' commands run in
  bool watches_;  // the client's WATCHes are checked (MULTI/EXEC), not left alone (a command)
  std::vector<std::unique_ptr<Member>> members_;  // in address order
  std::vector<size_t> order_;                     // members_ index of each part as given
  uint64_t deadline_ms_ = 0;                      // lock waits end (loop time)
  uint64_t epoch_ = 0;
  bool execute_ = false;  // execute(): the last member runs with its LOCK
  bool ended_ = false;
  uint64_t generation_ = 0;     // answers of a given-up attempt are ignored
  size_t at_once_waiting_ = 0;  // LOCKs of the first attempt not answered yet
  bool busy_ = false;           // ... and one found a key held
  bool ordered_ = false;        // locking in order, each LOCK waiting for its keys
  TxnDone done_;
  size_t running_ = 0;  // RUNs outstanding in commit_rest
};

// The replies of the parts that ran fragments of one command (a split MGET, DEL...) inside a
// transaction, as (part, reply) in part order; returns the command's one reply.
using FragmentMerge = std::function<std::string(
    size_t position, std::span<const std::pair<size_t, std::string_view>>)>;

// The array reply of a MULTI ... EXEC from its parts' arrays: part p's i-th reply goes to
// position positions[p][i]. A position several parts answer is a split command's: `merge` makes
// its reply. Empty when a part's reply is not an array of its commands' replies.
std::string interleave_replies(const std::vector<std::string>& part_replies,
                               const std::vector<std::vector<size_t>>& positions, size_t total,
                               const FragmentMerge& merge = {});

// Splits a complete array reply into its elements' bytes (views into `reply`); false when it is
// not an array.
bool split_array(std::string_view reply, std::vector<std::string_view>& elements);

}  // namespace ringkv::cluster
