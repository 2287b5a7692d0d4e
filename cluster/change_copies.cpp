// Replication across a ring change that delivers copies (see Cluster::change_delivers_copies and
// replication.h): the change's copy gives each key to the members that become its replicas, the
// primaries mark on their streams where the old ring's writes end, and a replica that reached
// every mark holds a complete copy of every primary's keys the moment the ring switches — no
// key waits for a copy after the change, and a primary lost right after it is failed over.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "cluster/replication.h"
#include "cluster/replication_stream.h"
#include "protocol/request_writer.h"

namespace ringkv::cluster {
namespace {

// A change does not wait for the mark of a replica that acknowledged nothing for this long (as
// Replication::unacknowledged).
constexpr uint64_t kStalledMarkMs = 1000;

}  // namespace

void Replication::mark_drained(uint64_t version) {
  if (!enabled()) return;
  const std::string v = std::to_string(version);
  const std::array<std::string_view, 3> argv{"RINGKV.REPL", "DRAINED", v};
  std::string frame;
  protocol::append_request(frame, argv);
  // On every stream, connected or not: one that reconnects soon still takes it from the backlog.
  drain_started_ms_ = started_ ? uv_now(env_.loop) : 0;
  for (auto& [address, s] : streams_) {
    append(*s, frame);
    s->drain_offset = s->next - 1;
  }
}

bool Replication::drained_acknowledged() const {
  const uint64_t now = started_ ? uv_now(env_.loop) : 0;
  return std::all_of(streams_.begin(), streams_.end(), [&](const auto& entry) {
    const Stream& s = *entry.second;
    if (s.drain_offset == 0 || s.acked >= s.drain_offset || !env_.peer_up(s.target)) return true;
    // An online replica is waited for until it is silent for a while; one reconnecting, for as
    // long from the flush on.
    return s.state == Stream::State::kOnline ? now >= s.last_ack_ms + kStalledMarkMs
                                             : now >= drain_started_ms_ + kStalledMarkMs;
  });
}

void Replication::copies_delivered(uint64_t version, const std::vector<std::string>& before) {
  if (!enabled()) return;
  for (const std::string& q : before) {
    if (q == self_) continue;
    auto it = sources_.find(q);
    if (it == sources_.end() || it->second.drained != version) {
      marks_missed_ = version;
      spdlog::info(
          "ring version {}: {}'s stream did not reach the end of the previous ring here: the "
          "keys this node gained follow its streams",
          version, q);
      return;
    }
  }
  for (const hashring::Member& m : routing_.nodes()) {
    if (m.address == self_) continue;
    Source& src = sources_[m.address];
    // A member that was not in the ring before: its stream to this node (or this node's ring)
    // is new, and everything this node holds of its keys came with the change.
    if (std::find(before.begin(), before.end(), m.address) == before.end()) src = Source{};
    src.synced = true;
    src.resuming = false;
    src.copy_version = version;
    src.delivered = true;
  }
  spdlog::info("ring version {}: every copy this node holds is complete under it", version);
}

std::string Replication::continue_delivered(Source& src, std::string_view replid, uint64_t version,
                                            uint64_t first, uint64_t next, uint64_t ring_from) {
  src.delivered = false;
  // The same stream, run here up to the first frame of the new ring (every frame of the old
  // one, none after), or a stream new with the ring; its frames from there still in the backlog.
  const bool same = !src.replid.empty() && src.replid == replid && src.offset + 1 == ring_from;
  const bool fresh = src.replid.empty() && ring_from == 1;
  if ((!same && !fresh) || ring_from < first || ring_from > next) return {};
  src.replid = std::string(replid);
  src.ring_version = version;
  src.offset = ring_from - 1;
  return "+CONTINUE " + std::to_string(src.offset) + "\r\n";
}

}  // namespace ringkv::cluster
