// What travels on a relay link between members, read and written in one place. A frame is a RESP
// request; it may start with prefixes (in this order) that say how to run what follows:
//   RINGKV.DB <n>        run in database n (without it: database 0, so a link shared by clients
//                        of every database needs no SELECT and database 0 costs nothing)
//   RINGKV.RESP3         write the reply in RESP3 (the client is RESP3, the link RESP2)
//   RINGKV.AS <user>     run a relayed script with that ACL user's rights, as the caller's node
//                        would have
// then either a relayed command or one of the members' own frames named below. RESP3 and AS
// prefix commands only; DB may prefix any frame.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/result.h"

namespace ringkv::cluster {

inline constexpr std::string_view kDbPrefix = "ringkv.db";
inline constexpr std::string_view kResp3Prefix = "ringkv.resp3";
inline constexpr std::string_view kUserPrefix = "ringkv.as";

// A control frame of a ring change (membership.cpp): RINGKV.RING <step> <version> ...
inline constexpr std::string_view kRingControl = "ringkv.ring";
// The ring a relay link's sender routes by from this frame on, sent on its open relay links when
// its ring (members, or which are failed) changed since their handshake: RINGKV.VIEW
// <fingerprint>. The receiver compares it with its own, as it compares the handshake's, to tell
// whether a request on the link was routed by the ring it has (Cluster::link_current).
inline constexpr std::string_view kViewFrame = "ringkv.view";
// A key a ring change copies: RINGKV.MIGRATE <version> RESTORE|DEL ..., run only while that
// change is prepared (a late copy after an abort must not land).
inline constexpr std::string_view kMigrateFrame = "ringkv.migrate";
// The first copy frame to a member being restored (after RINGKV.MIGRATE <version>):
// RINGKV.RESUME <source> <replid> <offset> (see server/migration.h).
inline constexpr std::string_view kResumeFrame = "RINGKV.RESUME";
// A replication stream's own frames (replication.h): RINGKV.REPL HELLO|SYNCED|FLUSH ...
inline constexpr std::string_view kReplFrame = "ringkv.repl";
// A primary asks how many replicas have a key's writes: RINGKV.WAIT ... (replication.h).
inline constexpr std::string_view kWaitFrame = "ringkv.wait";
// A step of a transaction over several members (cross_txn.h): RINGKV.TXN LOCK|RUN|RELEASE ...
inline constexpr std::string_view kTxnFrame = "ringkv.txn";
// Sharded pub/sub between nodes (server/shard_interests.h): a node tells a shard channel's
// owner how many subscribers it has there, RINGKV.SHARDSUB <its address> <channel> <count>...,
// and the owner forwards each SPUBLISH to such nodes, RINGKV.SHARDMSG <channel> <message>.
inline constexpr std::string_view kShardSubscribers = "ringkv.shardsub";
inline constexpr std::string_view kShardMessage = "ringkv.shardmsg";
// A keyspace event the key's owner published, for this node's subscribers:
// RINGKV.KEYSPACEMSG <channel> <message> [<channel> <message>] (server/notifications.cpp).
inline constexpr std::string_view kKeyspaceMessage = "ringkv.keyspacemsg";
// Client-side caching between nodes (server/client_control.cpp): RINGKV.TRACK <reader's node>
// <key>... asks a key's owner to report the keys' next change; it does with RINGKV.INVALIDATE
// <key>.
inline constexpr std::string_view kTrackFrame = "ringkv.track";
inline constexpr std::string_view kInvalidateFrame = "ringkv.invalidate";
// Imports other members run (server/import_control.cpp): RINGKV.IMPORT <node> <fields> and
// RINGKV.IMPORT STOP <source>.
inline constexpr std::string_view kImportFrame = "ringkv.import";

enum class PeerFrameKind : uint8_t {
  kCommand,           // a relayed command (or a write of a replication stream)
  kRingControl,       // RINGKV.RING
  kMigrate,           // RINGKV.MIGRATE <version> <command...>
  kReplication,       // RINGKV.REPL
  kReplicaWait,       // RINGKV.WAIT
  kTransaction,       // RINGKV.TXN
  kShardSubscribers,  // RINGKV.SHARDSUB <node> <channel> <count>...
  kShardMessage,      // RINGKV.SHARDMSG <channel> <message>
  kKeyspaceMessage,   // RINGKV.KEYSPACEMSG [<channel> <message>]...
  kTrack,             // RINGKV.TRACK <node> <key>...
  kInvalidate,        // RINGKV.INVALIDATE <key>
  kImport,            // RINGKV.IMPORT ...
  kView,              // RINGKV.VIEW <fingerprint>
};

// A frame as read: how to run it and what it carries.
struct PeerFrame {
  PeerFrameKind kind = PeerFrameKind::kCommand;
  std::optional<int> db;  // RINGKV.DB's database, if the frame names one
  bool resp3 = false;     // RINGKV.RESP3: the reply is RESP3
  std::string_view user;  // RINGKV.AS's user (empty: none)
  uint64_t version = 0;   // kMigrate: the ring version the copy belongs to
  // kCommand and kMigrate: the command (its name first); the members' own frames: the arguments
  // after the frame's name.
  std::span<const std::string_view> args;
};

// Reads a frame's argv (views into it stay valid while argv does). `databases` is how many the
// node has: a RINGKV.DB outside them is refused with Redis's "DB index is out of range".
// Malformed frames (a prefix without its command, a frame without its arguments) are errors.
engine::Result<PeerFrame> parse_peer_frame(std::span<const std::string_view> argv, int databases);

// The prefixes a relayed request carries (see the top of this file).
struct PeerPrefix {
  int db = 0;  // 0 needs no prefix
  bool resp3 = false;
  std::string_view user = {};  // empty: none

  size_t size() const { return (db != 0 ? 2 : 0) + (resp3 ? 1 : 0) + (user.empty() ? 0 : 2); }
};

// Appends one request: `prefix`'s arguments, then argv.
void append_peer_frame(std::string& out, const PeerPrefix& prefix,
                       std::span<const std::string_view> argv);

// `frame` (one encoded request, as append_peer_frame or protocol::append_request write it) behind
// `prefix`; the frame itself when there is none.
std::string prefixed_frame(const PeerPrefix& prefix, std::string_view frame);

// `prefix`'s arguments, for a frame built as a list of arguments; the database's digits are
// kept in `digits`, which must outlive the views.
std::vector<std::string_view> peer_prefix_args(const PeerPrefix& prefix, std::string& digits);

}  // namespace ringkv::cluster
