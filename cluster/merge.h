// ReplyMerge: builds one client reply from the replies of the parts of a command that ran on
// several nodes — a split MGET/MSET/DEL/EXISTS/TOUCH/UNLINK, a fanned-out DBSIZE/KEYS/
// RANDOMKEY/FLUSHALL or PUBLISH/PUBSUB — and the cluster-wide SCAN cursor. Pure code: unit-tested
// without I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/command.h"
#include "protocol/reply_writer.h"

namespace ringkv::cluster {

// Receives the complete reply of a command that involved peers.
using ReplyDone = std::function<void(std::string_view reply)>;

class ReplyMerge {
 public:
  // The merge kinds are the command table's merge column (engine::MergePolicy).
  using Kind = engine::MergePolicy;
  // The merge a command's parts need, from its row (full lowercase name: "mget",
  // "pubsub|numsub"); kSum for a name that is no command.
  static Kind kind_for(std::string_view command);

  // `write`: the command changes data, so a failed part leaves the others applied.
  ReplyMerge(Kind kind, bool write, protocol::RespVersion resp, size_t parts, ReplyDone done);

  // kValues: the positions in the merged array of part `part`'s values, in its order.
  void set_positions(size_t part, std::vector<size_t> positions);

  // Part `part` finished: its reply (ok) or the relay's error text (!ok). The last call runs
  // `done` with the merged reply. A relay failure fails the whole command; otherwise the first
  // error reply of a part is the reply.
  void part_done(size_t part, bool ok, std::string_view reply);

 private:
  std::string merge() const;

  Kind kind_;
  bool write_;
  protocol::RespVersion resp_;
  ReplyDone done_;
  size_t remaining_;
  std::vector<std::string> replies_;  // per part, raw
  std::string link_error_;            // the first relay failure, as an error text
  size_t failed_parts_ = 0;
  std::vector<std::vector<size_t>> positions_;
  size_t total_values_ = 0;
};

// SCAN over the cluster: a cursor holds a position — the node being walked (position % nodes)
// and that node's own cursor (position / nodes) — above a 16-bit tag of the routing ring it was
// made under. When a node's walk ends the position moves to the next node, so Redis's SCAN
// guarantees hold node by node, hence for the whole keyspace while the ring stays. A cursor of
// another ring (keys have moved between nodes the walk passed and nodes it has not) starts the
// walk over: keys may come twice, as Redis allows, but none that stayed is missed. Every member
// routing by the same ring makes the same tags, so a cursor works through any of them.
struct ScanStep {
  size_t node;
  uint64_t node_cursor;
};
// The tag of cursors made under a routing ring of this fingerprint.
uint16_t scan_tag(uint64_t ring_fingerprint);
ScanStep scan_step(uint64_t cursor, size_t nodes, uint16_t tag);

// Rewrites a node's SCAN reply [node-cursor, keys] into the cluster cursor's reply. An error
// reply (or anything that is not a SCAN page) is returned unchanged.
std::string cluster_scan_reply(std::string_view node_reply, size_t node, size_t nodes, uint16_t tag,
                               protocol::RespVersion resp);

// "-<text>\r\n"
std::string error_reply(std::string_view text);

}  // namespace ringkv::cluster
