// Replication: what the streams' states say — the replicas' status (INFO, ROLE), the good
// replicas min-replicas-to-write counts, the totals — (see replication.h).
#include <uv.h>

#include <algorithm>

#include "cluster/replication.h"
#include "cluster/replication_stream.h"

namespace ringkv::cluster {
namespace {

// A ring change does not wait for a replica that acknowledged nothing for this long.
constexpr uint64_t kStalledAckMs = 1000;

}  // namespace

uint64_t Replication::lag_ms(const Stream& s, uint64_t now) {
  // Frames outstanding: the replica's silence since its last acknowledgement, or since the
  // first of them was sent when it had acknowledged everything before.
  return s.acked + 1 < s.next && now > s.last_ack_ms ? now - s.last_ack_ms : 0;
}

size_t Replication::good_replicas(std::span<const std::string_view> keys,
                                  uint64_t max_lag_s) const {
  if (!enabled()) return 0;
  const uint64_t now = started_ ? uv_now(env_.loop) : 0;
  auto good = [&](const Stream* s) {
    if (s == nullptr || s->state != Stream::State::kOnline || !s->synced || s->gaining) {
      return false;
    }
    // A replica with nothing outstanding lags by its silence: a hung one stops answering.
    const uint64_t heard = env_.last_heard_ms ? env_.last_heard_ms(s->target) : now;
    const uint64_t silent = now > heard ? now - heard : 0;
    return std::max(lag_ms(*s, now), silent) / 1000 <= max_lag_s;
  };
  size_t fewest = SIZE_MAX;
  std::vector<size_t>& pref = pref_scratch_;
  for (std::string_view key : keys) {
    routing_.preference(key, factor_, pref);
    if (pref.empty() || pref[0] != self_index_) continue;
    size_t n = 0;
    for (size_t k = 1; k < pref.size(); ++k) n += good(stream_by_node_[pref[k]]) ? 1 : 0;
    fewest = std::min(fewest, n);
  }
  if (fewest != SIZE_MAX) return fewest;
  size_t n = 0;
  for (const auto& [address, s] : streams_) n += good(s.get()) ? 1 : 0;
  return std::min(n, factor_ - 1);
}

std::vector<ReplicaStatus> Replication::replicas() const {
  std::vector<ReplicaStatus> out;
  const uint64_t now = started_ ? uv_now(env_.loop) : 0;
  for (const auto& [address, s] : streams_) {
    ReplicaStatus r;
    r.address = address;
    r.state = s->state == Stream::State::kOnline  ? (s->synced && !s->gaining ? "online" : "sync")
              : s->state == Stream::State::kHello ? "connecting"
                                                  : "disconnected";
    r.offset = s->next - 1;
    r.acked = s->acked;
    r.lag_ms = lag_ms(*s, now);
    r.full_syncs = s->full_syncs;
    r.partial_syncs = s->partial_syncs;
    out.push_back(std::move(r));
  }
  return out;
}

uint64_t Replication::unacknowledged(bool stalled_too) const {
  // A stream copying keys sends until its copy ends (its replica copies again anyway if the ring
  // changes meanwhile), one that is not online has its replica copy in full when it reconnects,
  // and one whose replica acknowledged nothing for a while is not waited for either unless
  // `stalled_too` (its frames are refused once the replica's ring changed, and it copies in
  // full).
  const uint64_t now = started_ ? uv_now(env_.loop) : 0;
  uint64_t n = 0;
  for (const auto& [address, s] : streams_) {
    if (s->state == Stream::State::kOnline && !s->snapshot &&
        (stalled_too || now < s->last_ack_ms + kStalledAckMs)) {
      n += s->next - 1 - s->acked;
    }
  }
  return n;
}

uint64_t Replication::total_offset() const {
  uint64_t total = 0;
  for (const auto& [address, s] : streams_) total += s->next - 1;
  return total;
}

uint64_t Replication::backlog_held() const {
  uint64_t total = 0;
  for (const auto* streams : {&streams_, &parked_}) {
    for (const auto& [address, s] : *streams) total += s->backlog.bytes();
  }
  return total;
}

}  // namespace ringkv::cluster
