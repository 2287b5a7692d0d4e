// Replication across a failover and its restore (see replication.h): the streams a ring change
// closes because it removed their replica or this node are kept (parked) and opened again where
// they were by the restore, and each side notes where the removed member's stream ended, so
// that the restored member's keys and copies resume rather than being copied again in full.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cluster/frame_keys.h"
#include "cluster/replication.h"
#include "cluster/replication_stream.h"

namespace ringkv::cluster {

void Replication::note_removed_copies(const hashring::HashRing& routing) {
  // Members this ring removes (failed over, or gone): what this node's copy of their keys was,
  // for a restore that resumes from it.
  removed_copies_.clear();
  for (const hashring::Member& m : previous_routing_.nodes()) {
    auto it = sources_.find(m.address);
    if (routing.contains(m.address) || it == sources_.end()) continue;
    const Source& src = it->second;
    if (src.current() && src.ring_version == previous_version_ && !src.replid.empty()) {
      removed_copies_[m.address] = ResumePoint{src.replid, src.offset};
    }
  }
}

bool Replication::unpark(Stream& s) {
  // Opened again only by the change right after the one that closed it, back to the members
  // it ran under: the keys the replica held of this node then are the ones it holds now.
  if (parked_at_ != previous_version_ || !same_members(parked_from_) || host_ == nullptr) {
    return false;
  }
  // The keys written here since (the replica has none of those changes): sent after +RESUME.
  s.resume_keys.clear();
  const bool complete = host_->changes_while_away([&](int db, std::string_view key) {
    if (replicates(routing_, self_index_, key, s.target)) s.resume_keys.emplace_back(db, key);
  });
  if (!complete) return false;
  s.resuming = true;
  s.retry_at_ms = 0;
  s.backoff_ms = 0;
  s.ring_from = s.next;
  spdlog::info("replication: {} replicates keys of this node again; {} of them changed since",
               s.target, s.resume_keys.size());
  return true;
}

std::optional<Replication::ResumePoint> Replication::resume_point(std::string_view replica) const {
  auto it = parked_.find(replica);
  if (it == parked_.end()) return std::nullopt;
  return ResumePoint{it->second->replid, it->second->next - 1};
}

void Replication::forget_resume_point(std::string_view replica) {
  if (auto it = parked_.find(replica); it != parked_.end()) parked_.erase(it);
}

void Replication::forget_resume_points() { parked_.clear(); }

std::optional<Replication::KeyList> Replication::resume_before_missed(std::string_view replica,
                                                                      uint64_t offset) {
  auto it = parked_.find(replica);
  if (it == parked_.end() || it->second->parked_next == 0) return std::nullopt;
  Stream& s = *it->second;
  KeyList keys;
  if (offset + 1 >= s.next || !keys_of_frames(s.backlog, offset + 1, s.next, keys)) {
    return std::nullopt;
  }
  s.missed = Stream::Missed{offset, keys};
  return keys;
}

bool Replication::resumes_missed(Stream& s, uint64_t offset) {
  // The restore took the replica's values of the keys the frames after `offset` wrote
  // (resume_before_missed): it runs them again, and those keys' states now follow with the keys
  // written while it was away.
  if (!s.missed || s.missed->offset != offset) return false;
  s.resume_keys.insert(s.resume_keys.end(), s.missed->keys.begin(), s.missed->keys.end());
  return true;
}

bool Replication::take_resume_keys(const std::string& target,
                                   std::vector<std::pair<int, std::string>>& keys) {
  Stream* s = stream_to(target);
  if (s == nullptr || !s->resuming) return false;
  keys = std::move(s->resume_keys);
  s->resume_keys.clear();
  s->resuming = false;
  return true;
}

std::optional<Replication::ResumePoint> Replication::copy_of_removed(
    std::string_view primary) const {
  auto it = removed_copies_.find(primary);
  if (it == removed_copies_.end()) return std::nullopt;
  return it->second;
}

void Replication::forget_copies() {
  for (auto& [primary, src] : sources_) frame_refused(src);
}

bool Replication::same_members(uint64_t version) const {
  const auto then = live_history_.find(version);
  return then != live_history_.end() &&
         std::equal(then->second.begin(), then->second.end(), routing_.nodes().begin(),
                    routing_.nodes().end());
}

}  // namespace ringkv::cluster
