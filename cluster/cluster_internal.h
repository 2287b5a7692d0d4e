// Internals shared by the files that implement Cluster (cluster.cpp, cluster_handshake.cpp): a
// peer's state and the texts both show.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/peer_link.h"
#include "cluster/peer_pool.h"

namespace ringkv::cluster {

// Why a peer link is refused when the two rings differ (in the handshake's error reply, logs
// and CLUSTER NODES).
inline constexpr std::string_view kRingMismatch =
    "ring mismatch (check that every node lists the same members, weights, replicas, hash and "
    "replication-factor)";

// A ring fingerprint as handshakes carry it: 16 lowercase hex digits.
inline std::string fingerprint_hex(uint64_t fp) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(fp));
  return buf;
}

// The number fingerprint_hex printed; 0 for anything else (a control link's word).
inline uint64_t parse_fingerprint_hex(std::string_view hex) {
  uint64_t fp = 0;
  const char* end = hex.data() + hex.size();
  const auto [at, ec] = std::from_chars(hex.data(), end, fp, 16);
  return ec == std::errc() && at == end ? fp : 0;
}

// The text of a one-line reply ("+text\r\n" or "-text\r\n").
inline std::string_view line_text(std::string_view reply) {
  return reply.size() >= 3 ? reply.substr(1, reply.size() - 3) : std::string_view();
}

// A list of members as ring-change frames carry it: comma-separated, or "-" for none.
inline std::string members_list_text(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& a : list) out += (out.empty() ? "" : ",") + a;
  return out.empty() ? "-" : out;
}

// Parses members_list_text (sorted).
inline std::vector<std::string> parse_members_list(std::string_view text) {
  std::vector<std::string> out;
  if (text == "-") return out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    out.emplace_back(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline bool list_contains(const std::vector<std::string>& list, std::string_view a) {
  return std::find(list.begin(), list.end(), a) != list.end();
}

// `text` made safe for one log line (or, with `space` '_', one CLUSTER NODES token): printable
// ASCII, bounded.
inline std::string printable(std::string_view text, size_t max = 64, char space = ' ') {
  std::string out;
  for (char c : text.substr(0, max)) {
    out.push_back(c == ' ' ? space : c > ' ' && c < 127 ? c : '?');
  }
  return out;
}

struct Cluster::PeerState {
  // `make_link` opens a link to this peer with the given options.
  PeerState(std::string addr, size_t pool_size, LinkOptions relay,
            const std::function<std::unique_ptr<PeerLink>(PeerState&, LinkOptions)>& make_link)
      : address(std::move(addr)),
        pool(pool_size, relay, [this, make_link](LinkOptions o) { return make_link(*this, o); }) {}
  PeerState(const PeerState&) = delete;
  PeerState& operator=(const PeerState&) = delete;

  std::string address;
  PeerPool pool;
  std::string fingerprint;  // the peer's, from its handshake reply
  // Why the peer refuses the links this node opens ("" while it accepts them): its keys fail at
  // once with that reason rather than being relayed.
  std::string refused_by_peer;
  // Why this node refused the peer's last link ("" once one is accepted); shown, not acted on.
  std::string refused_here;
  // Its last link was accepted under a ring of this node's other than the current one (a
  // restore gives the ring the fingerprint it had before the failover, so neither side refuses
  // the other): one of the two missed a change. catch_up_ring asks it until it answers.
  bool on_other_ring = false;
  // Health, from the pings.
  bool up = true;
  bool ping_in_flight = false;
  uint64_t health_connects = 0;  // the health link's connections when a ping was last answered
  uint64_t ping_seq = 0;         // the ping whose answer counts
  int64_t failures = 0;          // consecutive failed pings
  uint64_t last_seen_ms = 0;     // loop time of the last answered ping; 0 = never
  uint64_t ping_sent_ms = 0;     // loop time the ping in flight was sent
  uint64_t granted_ms = 0;       // loop time the last answered ping was sent (the lease it grants)
  uint64_t times_down = 0;       // up → down transitions
  std::string last_failure;      // why the last ping failed
  // Transaction links no transaction uses now, kept for the next (see TxnSession).
  std::vector<std::unique_ptr<PeerLink>> idle_transaction_links;
};

// The change this node coordinates.
struct Cluster::Coordination {
  enum Step {
    kResolving,  // taken up again after a restart: did any member commit?
    kPreparing,
    kCopying,
    kPausing,
    kQuiescing,
    kFlushing,
    kFlushWait,
    kCommitting,
    kLeaseWait,  // a failover: prepared by a majority, waiting for the failed node's lease to end
  };
  enum Kind {
    kMembership,  // CLUSTER JOIN / LEAVE / SETWEIGHT: every participant takes part
    kFailover,    // failed members added: a majority takes part, nothing is copied
    kRestore,     // failed members live again: every participant, copies as for a join
  };
  Kind kind = kMembership;
  uint64_t version = 0;
  std::vector<hashring::Member> members;  // the new ring
  std::vector<std::string> failed;        // its failed members
  std::vector<std::string> requested;     // failovers the members asked for themselves
  std::vector<std::string> participants;  // old members and new ones, less a forced leaver
  Step step = kPreparing;
  bool prepare_sent = false;
  // A failover taken up again (restarted here, or taken over from a coordinator that failed):
  // it never aborts, as the other coordinator may have committed it; a failed round leaves the
  // change prepared for recover() to try again.
  bool taken_over = false;
  size_t waiting = 0;           // control replies outstanding this round
  uint64_t rounds = 0;          // rounds sent so far (drive_change)
  bool round_failed = false;    // a participant failed or refused this round
  bool fatal = false;           // ... in a way no retry mends (a copy failed)
  bool some_committed = false;  // resolving: a member is at the new version already
  // Resolving: every participant answered and none is at the new version, so nobody committed
  // it (a failover commits on its participants): taken up again or not, a prepare that fails
  // aborts it.
  bool nobody_committed = false;
  std::string target;           // the ring it moves to, as its steps name it (coordinated_target)
  bool round_ready = true;      // every participant reported what the step waits for
  std::string failure;          // the first failure's text
  std::vector<bool> committed;  // per participant, in the commit step
  ReplyDone done;               // the command's client, until every member prepared
  uint64_t step_started_ms = 0;
  int failures = 0;     // consecutive failed rounds of this step
  size_t round_ok = 0;  // votes of the participants that answered this round as asked
};

}  // namespace ringkv::cluster
