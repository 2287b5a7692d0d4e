// Replication, the replica's side: the streams of the primaries whose keys this node holds (see
// replication.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/replication.h"
#include "common/numbers.h"
#include "engine/command.h"

namespace ringkv::cluster {

std::string Replication::on_frame(std::span<const std::string_view> args, uint64_t conn_id,
                                  std::string& primary) {
  if (args.empty()) return "-ERR RINGKV.REPL needs a subcommand\r\n";
  const std::string_view sub = args[0];
  if (common::equals_ignore_case(sub, "hello")) {
    if (args.size() != 8) return "-ERR RINGKV.REPL HELLO needs 7 arguments\r\n";
    const std::optional<uint64_t> version = common::parse_unsigned(args[3]);
    const std::optional<uint64_t> first = common::parse_unsigned(args[4]);
    const std::optional<uint64_t> next = common::parse_unsigned(args[5]);
    const std::optional<uint64_t> ring_from = common::parse_unsigned(args[6]);
    const std::optional<uint64_t> previous = common::parse_unsigned(args[7]);
    if (!version || !first || !next || !ring_from || !previous || *next < 1) {
      return "-ERR bad RINGKV.REPL HELLO\r\n";
    }
    // Both ends must route by the same ring, or this node could drop keys it owns under the
    // primary's (a change committed there and not yet here): the primary tries again.
    if (*version != ring_version_) {
      return "-TRYAGAIN ring version " + std::to_string(*version) + " there, " +
             std::to_string(ring_version_) + " here\r\n";
    }
    if (!routing_.contains(args[1])) {
      return "-ERR " + std::string(args[1]) + " is not a member of this node's ring\r\n";
    }
    primary = std::string(args[1]);
    Source& src = sources_[primary];
    src.last_frame_ms = uv_now(env_.loop);
    // Frames still arriving on an older connection of this primary no longer count.
    src.conn = conn_id;
    // A copy the ring change made complete continues from the new ring's first frame.
    if (src.delivered && src.copy_version == *version) {
      std::string reply = continue_delivered(src, args[2], *version, *first, *next, *ring_from);
      if (!reply.empty()) return reply;
    }
    // Only a complete copy continues: one whose copy was cut off (its end, SYNCED, never came)
    // copies again, or this node would keep a stream that never sends the keys it dropped (or
    // gained).
    const bool complete =
        src.current() && src.replid == args[2] && src.offset + 1 >= *first && src.offset < *next;
    if (complete && src.ring_version == *version) {
      return "+CONTINUE " + std::to_string(src.offset) + "\r\n";
    }
    // Complete under the primary's previous ring, with every frame made under it: the copy
    // stays, and the keys this node gained follow (what it no longer holds, the ring change's
    // sweep deletes).
    if (complete && src.ring_version == *previous && src.offset + 1 >= *ring_from) {
      src.ring_version = *version;
      return "+GAIN " + std::to_string(src.offset) + "\r\n";
    }
    // Back from being failed over (or the primary is): its copy dates from the ring before the
    // failover, with the same members as now — the keys it holds of this primary are the same.
    // The primary opened the stream again where it was, and sends the keys written since.
    if (complete && src.ring_version != *version && src.ring_version != *previous &&
        same_members(src.ring_version)) {
      src.ring_version = *version;
      src.resuming = true;
      return "+RESUME " + std::to_string(src.offset) + "\r\n";
    }
    if (src.replid.empty() && src.offset == 0 && !src.synced) {
      spdlog::info("replication: {} streams to this node: a full copy", primary);
    } else {
      spdlog::info("replication: {} streams to this node again: a full copy ({})", primary,
                   !src.current()          ? "the last copy was cut off"
                   : src.replid != args[2] ? "a frame was refused, or the stream is new"
                   : src.offset + 1 < *first || src.offset >= *next
                       ? "the frames missed are no longer in the backlog"
                   : src.ring_version != *version && src.ring_version != *previous
                       ? "the copy dates from a ring before the previous one"
                       : "frames made under the previous ring were missed");
    }
    if (host_) host_->drop_keys_of(primary);
    src = Source{.replid = std::string(args[2]),
                 .ring_version = *version,
                 .offset = *next - 1,
                 .last_frame_ms = uv_now(env_.loop),
                 .conn = conn_id};
    return "+FULL\r\n";
  }
  Source* src = current_source(primary, conn_id);
  if (src == nullptr) return "-ERR not the current stream of its primary\r\n";
  if (common::equals_ignore_case(sub, "synced")) {
    src->synced = true;
    src->resuming = false;
    src->copy_version = src->ring_version;
    frame_applied(*src);
    return "+OK\r\n";
  }
  if (common::equals_ignore_case(sub, "drained")) {
    // RINGKV.REPL DRAINED <version>: every write the primary made under the ring before that
    // change ran here (see Replication::mark_drained); it counts for a copy complete under it.
    const std::optional<uint64_t> version =
        args.size() == 2 ? common::parse_unsigned(args[1]) : std::nullopt;
    if (!version) return "-ERR RINGKV.REPL DRAINED needs a ring version\r\n";
    if (src->current() && !src->resuming && src->ring_version == ring_version_) {
      src->drained = *version;
    }
    frame_applied(*src);
    return "+OK\r\n";
  }
  if (common::equals_ignore_case(sub, "flush")) {
    // RINGKV.REPL FLUSH [db]: one database (FLUSHDB) or all (FLUSHALL).
    const std::optional<int64_t> db =
        args.size() > 1 ? common::parse_integer(args[1]) : std::optional<int64_t>(-1);
    if (!db || *db < -1) return "-ERR RINGKV.REPL FLUSH needs a database\r\n";
    if (host_) host_->drop_keys_of(primary, static_cast<int>(*db));
    frame_applied(*src);
    return "+OK\r\n";
  }
  return "-ERR unknown RINGKV.REPL subcommand\r\n";
}

bool Replication::accepts_late_write(std::string_view primary, const engine::CommandSpec& spec,
                                     std::span<const std::string_view> argv) {
  const size_t primary_index = routing_.index_of(primary);
  std::vector<size_t>& keys = key_scratch_;
  engine::key_positions(spec, argv, keys);
  if (keys.empty()) return false;  // FLUSHALL, a block's MULTI: not known to be only its keys
  return std::all_of(keys.begin(), keys.end(), [&](size_t pos) {
    return replicates(routing_, primary_index, argv[pos], self_);
  });
}

Replication::CopyState Replication::copy_state(std::string_view primary) const {
  auto it = sources_.find(primary);
  if (it == sources_.end()) return CopyState::kNone;
  const Source& src = it->second;
  if (!src.synced) return CopyState::kIncomplete;
  if (src.resuming) return CopyState::kStale;  // the keys written while it was away follow
  if (src.copy_version == ring_version_) return CopyState::kComplete;
  if (marks_missed_ == ring_version_) return CopyState::kStale;
  // A key's replicas are the members after its primary in its preference list, and removing a
  // member from the ring only takes it out of every list. So if members only left (or failed)
  // since the copy's ring, fewer than replication-factor − 1 of them, the first live member
  // after the primary in every list of its keys was one of their replicas then.
  const auto then = live_history_.find(src.copy_version);
  if (then == live_history_.end()) return CopyState::kStale;
  size_t gone = 0;
  for (const hashring::Member& m : then->second) {
    if (!routing_.contains(m.address)) gone++;
  }
  for (const hashring::Member& m : routing_.nodes()) {
    if (std::find(then->second.begin(), then->second.end(), m) == then->second.end()) {
      return CopyState::kStale;  // a member added, restored or reweighted
    }
  }
  return gone + 1 < factor_ ? CopyState::kComplete : CopyState::kStale;
}

Replication::Source* Replication::current_source(std::string_view primary, uint64_t conn_id) {
  if (last_source_ == sources_.end() || last_source_->first != primary) {
    last_source_ = sources_.find(primary);
  }
  return last_source_ != sources_.end() && last_source_->second.conn == conn_id
             ? &last_source_->second
             : nullptr;
}

void Replication::frame_applied(Source& source) {
  source.offset++;
  source.last_frame_ms = uv_now(env_.loop);
}

std::vector<SourceStatus> Replication::sources() const {
  std::vector<SourceStatus> out;
  for (const auto& [address, src] : sources_) {
    // (A copy a ring change made complete counts as synced before its stream opens again.)
    const bool synced = src.current() || (src.delivered && src.copy_version == ring_version_);
    out.push_back(SourceStatus{address, synced, src.offset, src.last_frame_ms});
  }
  return out;
}

}  // namespace ringkv::cluster
