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

#include "protocol/reply_writer.h"

namespace ringkv::cluster {

// Receives the complete reply of a command that involved peers.
using ReplyDone = std::function<void(std::string_view reply)>;

class ReplyMerge {
 public:
  enum class Kind {
    kValues,  // MGET: the parts' arrays, put back in the original key order
    kSum,     // DEL, UNLINK, EXISTS, TOUCH, DBSIZE: integers added up
    kAllOk,   // MSET, FLUSHALL, FLUSHDB: +OK when every part said +OK
    kConcat,  // KEYS: the parts' arrays one after the other
    kRandom,  // RANDOMKEY: any part's key, or null when every part is empty
    // Pub/Sub is best effort, as in Redis Cluster: a node that cannot be reached has no
    // subscribers to count, so it contributes nothing instead of failing the command.
    kSumReachable,  // PUBLISH, PUBSUB NUMPAT: integers added up
    kUnion,         // PUBSUB CHANNELS: the distinct names in the parts' arrays
    kPairSums,      // PUBSUB NUMSUB: [name, count, ...] with each name's counts added up
  };
  // The merge a command's parts need (by its full lowercase name: "mget", "pubsub|numsub").
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

// SCAN over the cluster: a cursor encodes the node being walked (cursor % nodes) and that node's
// own cursor (cursor / nodes); when a node's walk ends the cursor moves to the next node, so
// Redis's SCAN guarantees hold node by node, hence for the whole keyspace.
struct ScanStep {
  size_t node;
  uint64_t node_cursor;
};
ScanStep scan_step(uint64_t cursor, size_t nodes);

// Rewrites a node's SCAN reply [node-cursor, keys] into the cluster cursor's reply. An error
// reply (or anything that is not a SCAN page) is returned unchanged.
std::string cluster_scan_reply(std::string_view node_reply, size_t node, size_t nodes,
                               protocol::RespVersion resp);

// "-<text>\r\n"
std::string error_reply(std::string_view text);

}  // namespace ringkv::cluster
