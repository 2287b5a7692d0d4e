// Replication's internal types, shared by its files (see replication.h): a write's wait for
// acknowledgements and a primary's stream to one replica.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/frame_log.h"
#include "cluster/replication.h"
#include "common/secret.h"

namespace ringkv::cluster {

// A replication id as Redis prints one: 40 random hex digits.
inline std::string random_replid() { return common::random_hex(20); }

// A write counts as acknowledged by n replicas only when the first n of its replicas in
// preference order have it: failing its primary over makes the first replica not failed with it
// the keys' owner, so an acknowledgement from a later one alone would not survive the failover.
struct Replication::Waiter {
  enum class Part : uint8_t { kOpen, kAcked, kLost };
  size_t need = 0;
  std::vector<Part> parts;  // the ticket's parts, in its order (the replicas' preference order)
  size_t acked = 0;         // how many parts from the first are acknowledged
  size_t reachable = 0;     // how many parts from the first are not lost with their replica
  bool give_up = false;
  bool fired = false;
  std::function<void(size_t, bool)> done;
  std::multimap<uint64_t, std::shared_ptr<Waiter>>::iterator pos;  // in waiters_
};

struct Replication::WaitEntry {
  uint64_t offset = 0;
  std::weak_ptr<Waiter> waiter;
  size_t part = 0;  // its index in the waiter's parts
};

struct Replication::Stream {
  enum class State { kDisconnected, kHello, kOnline };

  uint64_t id = 0;
  std::string target;
  std::string replid = random_replid();
  uint64_t next = 1;   // the offset the next frame gets
  uint64_t sent = 0;   // the last offset written to the current link
  uint64_t acked = 0;  // the last offset the replica acknowledged
  // The replica acknowledges only when asked (RINGKV.REPL GETACK): `sent` then, and when.
  uint64_t asked = 0;
  uint64_t asked_ms = 0;
  uint64_t queued_ms = 0;  // when the link's first frame not written yet was queued
  FrameLog backlog;
  State state = State::kDisconnected;
  std::unique_ptr<PeerLink> link;
  uint64_t gen = 0;  // callbacks of older links are ignored
  uint64_t retry_at_ms = 0;
  uint64_t backoff_ms = 0;
  uint64_t hello_next = 0;  // `next` when HELLO was sent
  bool snapshot = false;    // a full copy (or a copy of the keys gained) is being sent
  bool synced = false;      // the replica acknowledged the end of its full copy
  // The copy running (or cut off) sends only the keys gained in the last ring change: the
  // replica kept what it held (+GAIN).
  bool gaining = false;
  uint64_t ring_from = 1;  // the offset of the first frame made under the current ring
  uint64_t synced_offset = 0;
  bool in_block = false;  // MULTI sent for the block open now
  int block_db = 0;       // the database the open block's queued commands run in
  std::deque<uint32_t> unacked_sizes;
  uint64_t unacked_bytes = 0;
  uint64_t last_ack_ms = 0;
  std::deque<WaitEntry> waiting;  // by offset
  // Frames up to this offset reach the replica only through its last full copy (they came
  // before the HELLO that started it, and the replica dropped what it had): they count as
  // acknowledged once that copy ended (synced), and their waits wait for it in waiting_copy.
  uint64_t copied_from = 0;
  std::deque<WaitEntry> waiting_copy;
  bool has(uint64_t offset) const { return acked >= offset && (synced || offset > copied_from); }
  uint64_t full_syncs = 0;
  uint64_t partial_syncs = 0;
  std::string last_failure;
  // Opened again after its replica was restored (see Replication::parked_): a +RESUME sends
  // these keys' states, then SYNCED.
  bool resuming = false;
  std::vector<std::pair<int, std::string>> resume_keys;
  // Parked because this node was failed over: only a replica with every frame made until then
  // (before this offset) may resume. 0: parked because the replica was, any offset will do.
  uint64_t parked_next = 0;
  // A replica whose copy missed the frames after `offset` may resume from it too: the restore
  // gave this node the replica's values of the `keys` they wrote (resume_before_missed).
  struct Missed {
    uint64_t offset = 0;
    Replication::KeyList keys;
  };
  std::optional<Missed> missed;
  // The offset of the DRAINED mark of the ring change being flushed (0: none sent).
  uint64_t drain_offset = 0;
};

}  // namespace ringkv::cluster
