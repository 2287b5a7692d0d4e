// Internals shared by the two sides of a ring change: the participant (membership.cpp) and the
// coordinator (ring_change.cpp) — the state a participant reports and the texts both log.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_internal.h"
#include "common/numbers.h"
#include "hashring/hash_ring.h"

namespace ringkv::cluster {

inline std::string members_text(const std::vector<hashring::Member>& members) {
  std::string out;
  for (const auto& m : members) {
    if (!out.empty()) out += ' ';
    out += m.address + "=" + std::to_string(m.weight);
  }
  return out;
}

// A node's answer to RINGKV.RING STATE (and COPY), one simple string:
//   +<version> <phase> <copied> <flushed> <relays in flight> <keys> <members> <pending version>
//    <coordinating> <replication-factor>
struct ChangeState {
  uint64_t version = 0;    // the ring it runs by
  std::string_view phase;  // idle, prepared, paused or switching
  char copied = '1';       // '1' done (or nothing to copy), '0' going on, 'x' failed or unknown
  bool flushed = true;     // the flush was sent and acknowledged (or nothing to flush)
  uint64_t in_flight = 0;  // relayed requests and replica-stream frames awaiting replies
  uint64_t keys = 0;       // keys it holds
  uint64_t members = 0;    // members of its ring
  uint64_t pending = 0;    // the version a prepared change moves to; 0 for none
  bool coordinating = false;
  uint64_t factor = 1;  // its replication-factor (a node to join must have the cluster's)

  std::string text() const {
    return "+" + std::to_string(version) + " " + std::string(phase) + " " + copied + " " +
           (flushed ? "1" : "0") + " " + std::to_string(in_flight) + " " + std::to_string(keys) +
           " " + std::to_string(members) + " " + std::to_string(pending) + " " +
           (coordinating ? "1" : "0") + " " + std::to_string(factor) + "\r\n";
  }

  static std::optional<ChangeState> parse(std::string_view reply) {
    if (reply.empty() || reply[0] != '+') return std::nullopt;
    const std::vector<std::string_view> w = common::split_words(line_text(reply));
    if (w.size() != 10 || w[2].size() != 1) return std::nullopt;
    // The numeric words: version, relays in flight, keys, members, pending version, factor.
    constexpr size_t kAt[] = {0, 4, 5, 6, 7, 9};
    uint64_t n[std::size(kAt)];
    for (size_t i = 0; i < std::size(kAt); ++i) {
      const std::optional<int64_t> v = common::parse_integer(w[kAt[i]]);
      if (!v || *v < 0) return std::nullopt;
      n[i] = static_cast<uint64_t>(*v);
    }
    ChangeState s;
    s.version = n[0];
    s.phase = w[1];
    s.copied = w[2][0];
    s.flushed = w[3] == "1";
    s.in_flight = n[1];
    s.keys = n[2];
    s.members = n[3];
    s.pending = n[4];
    s.coordinating = w[8] == "1";
    s.factor = n[5];
    return s;
  }
};

// The start of a participant's refusal of a failover whose keys it holds no complete copy
// of (Cluster::failover_veto): the coordinator gives up the failover, whatever the majority.
inline constexpr std::string_view kIncompleteCopyReply = "-NOCOPY ";

// A participant's answer to a step of a change it does not hold and has not committed: the
// change was aborted there (by its coordinator, or by the members that resolved it while its
// coordinator was away). In the commit step that means nobody committed it: the coordinator,
// which commits itself last, aborts it too.
inline constexpr std::string_view kNoChangeReply = "-NOCHANGE ";
// A participant's refusal of a step of a change its members fenced to resolve it without the
// coordinator (Cluster::maybe_resolve_orphaned_change).
inline constexpr std::string_view kFencedReply = "-FENCED ";
// The last word of a failover's PREPARE from a coordinator that completes the change and never
// aborts it (Coordination::taken_over): the members accept it beside another such coordinator.
inline constexpr std::string_view kCompletesWord = "COMPLETES";
// A coordinator's ABORT ends with BY and its address: a member that recorded another coordinator
// of the change, one that completes it (see kCompletesWord), keeps it (Cluster::ring_control).
inline constexpr std::string_view kAbortByWord = "BY";

// Every step of a change after its PREPARE ends with FOR and the fingerprint of the ring the
// change moves to (Cluster::change_target): a member holding another change of that version
// (one aborted while it was away, whose version the next change took again) takes the step as
// one of a change it does not hold, and a member on that version answers that it committed the
// change only if its ring is that one.
inline constexpr std::string_view kForWord = "FOR";
// The answers to RINGKV.RING FENCE: the change is committed here; this node is on a later ring,
// and cannot tell which change of that version it committed (the member resolving the change
// takes this node's ring up instead of committing its own copy of the change; only to a FENCE
// that names its change, kForWord); it is fenced here now (the coordinator's steps are
// refused); it is not prepared here (never, or aborted).
inline constexpr std::string_view kFenceCommitted = "+COMMITTED\r\n";
inline constexpr std::string_view kFenceNewer = "+NEWER\r\n";
inline constexpr std::string_view kFenceHeld = "+FENCED\r\n";
inline constexpr std::string_view kFenceAborted = "+ABORTED\r\n";

// The text of a failed control request: an error reply's, or the link's error.
inline std::string failure_text(std::string_view reply) {
  return std::string(!reply.empty() && reply[0] == '-' ? line_text(reply) : reply);
}

}  // namespace ringkv::cluster
