// The ring a node persists in its `dir` (file "ring"): the cluster-wide ring version, the members
// with their weights, and a change in progress (its version and members). Written atomically
// (a temporary file, fsync, rename), so a crash leaves the old file or the new one. The TOML
// `peers` only seed a brand-new cluster; once this file exists it wins.
//
//   ringkv-ring 1
//   version 3
//   member 127.0.0.1:7001 1
//   member 127.0.0.1:7002 2
//   failed 127.0.0.1:7003
//   pending 4
//   coordinator 127.0.0.1:7002
//   pending-member 127.0.0.1:7001 1
//   pending-failed 127.0.0.1:7003
//   pending-forced 127.0.0.1:7004
//   ...
// A failed member (replication failed it over) is still a member but owns no keys until it is
// restored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hashring/hash_ring.h"

namespace ringkv::cluster {

struct RingState {
  uint64_t version = 0;
  std::vector<hashring::Member> members;
  std::vector<std::string> failed;  // members failed over, sorted
  // A change every member has prepared but not yet committed: the ring it moves to.
  uint64_t pending_version = 0;  // 0 = none
  std::vector<hashring::Member> pending_members;
  std::vector<std::string> pending_failed;
  // Members the change forces out (CLUSTER LEAVE ... FORCE): they take no part in it.
  std::vector<std::string> pending_forced;
  std::string coordinator;  // the node coordinating the pending change
  // The pending change is fenced: members resolve it without its coordinator, whose steps this
  // node refuses from then on (Cluster::maybe_resolve_orphaned_change).
  bool fenced = false;
  // Its coordinator completes it and never aborts it (a failover taken up again).
  bool completes = false;

  bool operator==(const RingState&) const = default;
};

// The file's text for `state`.
std::string format_ring_state(const RingState& state);
// Parses the file's text; on failure returns nullopt and sets `error` (with the line number).
std::optional<RingState> parse_ring_state(std::string_view text, std::string& error);

// The path of the ring file in `dir`.
std::string ring_file_path(std::string_view dir);
// Reads `path`: nullopt with `error` empty when it does not exist, nullopt with `error` set when
// it cannot be read or parsed.
std::optional<RingState> read_ring_file(const std::string& path, std::string& error);
// Writes `state` to `path` atomically; returns "" or the reason it failed.
std::string write_ring_file(const std::string& path, const RingState& state);

}  // namespace ringkv::cluster
