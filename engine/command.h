// The command table: one row per command (and per subcommand), the single source for arity
// checks, routing key positions, COMMAND COUNT/INFO/DOCS/LIST/GETKEYS and the README's list.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/keyspace_events.h"
#include "engine/key_range.h"
#include "protocol/reply_writer.h"

namespace ringkv::engine {

class Store;
class Databases;
struct CommandContext;
class ScriptEngine;
struct Observability;
struct LatencyDoctorSettings;
namespace acl {
class User;
class Users;
}  // namespace acl
struct ClientTracking;

using CommandHandler = void (*)(CommandContext& ctx);
// For commands whose keys move with their arguments (LMPOP numkeys key..., ZUNION numkeys ...):
// appends the argv positions of the keys; appends nothing when argv is malformed (the handler then
// reports the error where the command runs).
using KeyFinder = void (*)(std::span<const std::string_view> argv, std::vector<size_t>& positions);
// A key argument of a command and what the command does to it: KeyFlag bits (key_specs.h).
struct KeyReference {
  size_t position;
  uint16_t flags;
};
// Redis's own key finder (getkeys proc) of a command whose key specs cannot say what it does to
// its keys (variable_flags, or a begin search Redis marks unknown): appends each key and flags.
using KeyFlagsFinder = void (*)(std::span<const std::string_view> argv,
                                std::vector<KeyReference>& keys);

// Command flags, as COMMAND INFO names them, in the order it lists them.
enum CommandFlag : uint32_t {
  kWrite = 1u << 0,             // "write"
  kReadonly = 1u << 1,          // "readonly"
  kDenyOom = 1u << 2,           // "denyoom"
  kAdmin = 1u << 3,             // "admin"
  kPubsub = 1u << 4,            // "pubsub"
  kNoscript = 1u << 5,          // "noscript"
  kBlocking = 1u << 6,          // "blocking"
  kLoading = 1u << 7,           // "loading"
  kStale = 1u << 8,             // "stale"
  kSkipMonitor = 1u << 9,       // "skip_monitor"
  kSkipSlowlog = 1u << 10,      // "skip_slowlog"
  kAsking = 1u << 11,           // "asking"
  kFast = 1u << 12,             // "fast"
  kNoAuth = 1u << 13,           // "no_auth"
  kNoMandatoryKeys = 1u << 14,  // "no_mandatory_keys"
  kNoAsyncLoading = 1u << 15,   // "no_async_loading"
  kNoMulti = 1u << 16,          // "no_multi"
  kAllowBusy = 1u << 17,        // "allow_busy" (COMMAND INFO prints "movablekeys" before it)
  kMayReplicate = 1u << 18,     // "may_replicate" (hidden by COMMAND INFO, as in Redis)
  // "protected" (hidden by COMMAND INFO, as in Redis): DEBUG and MODULE LOAD/LOADEX/UNLOAD,
  // refused before anything else is checked unless enable-debug-command (enable-module-command:
  // always "no", ringkv loads no modules) allows the client.
  kProtected = 1u << 19,
  // ringkv's own routing flags (not reported by COMMAND INFO):
  kKeyspaceWide = 1u << 20,  // acts on every key (DBSIZE, KEYS, SCAN, FLUSHALL, RANDOMKEY…)
  kSplittable = 1u << 21,    // multi-key command that may be split per owner (MGET, MSET, DEL…)
  kClusterWide = 1u << 22,   // acts on every node's state, not keys (PUBLISH, PUBSUB CHANNELS…)
  kRunsInMulti = 1u << 23,   // runs at once inside MULTI instead of being queued (EXEC, WATCH…)
  kSubscribedOk = 1u << 24,  // allowed to a RESP2 client with subscriptions (SUBSCRIBE, PING…)
  // The keys are shard channels the client (un)subscribes to on the node it is connected to:
  // they must have one owner (CROSSSLOT otherwise), but the command runs here (SSUBSCRIBE).
  kSubscribesHere = 1u << 25,
};

// How the cluster builds one reply from the replies of a command's parts that ran on several
// nodes (a split MGET/MSET/DEL..., a fanned-out DBSIZE/KEYS/FLUSHALL or PUBLISH/PUBSUB).
enum class MergePolicy : uint8_t {
  kSum,     // DEL, UNLINK, EXISTS, TOUCH, DBSIZE: integers added up
  kValues,  // MGET: the parts' arrays, put back in the original key order
  kAllOk,   // MSET, FLUSHALL, FLUSHDB: +OK when every part said +OK
  kConcat,  // KEYS: the parts' arrays one after the other
  kRandom,  // RANDOMKEY: any part's key, or null when every part is empty
  // Pub/Sub is best effort, as in Redis Cluster: a node that cannot be reached has no
  // subscribers to count, so it contributes nothing instead of failing the command.
  kSumReachable,  // PUBLISH, PUBSUB NUMPAT: integers added up
  kUnion,         // PUBSUB CHANNELS: the distinct names in the parts' arrays
  kPairSums,      // PUBSUB NUMSUB: [name, count, ...] with each name's counts added up
  kSame,          // SCRIPT LOAD: every node answers the same (the script's SHA1); that reply
  kAllTrue,       // SCRIPT EXISTS: per position, 1 when every node answered 1
  kDigest,        // CLUSTER DIGEST: the nodes' dataset digests, as one server holding every key
};

struct CommandSpec {
  std::string_view name{};  // lowercase; subcommands are named without the parent ("get")
  int arity;                // as Redis: counts the name; negative means "at least -arity"
  uint32_t flags;
  CommandHandler handler;    // nullptr for a container of subcommands
  std::string_view group{};  // "string", "generic", "connection", "server", ...
  std::string_view since{};  // Redis version the command appeared in
  std::string_view summary{};
  std::string_view complexity{};
  // Argument syntax: Redis's usage notation annotated with what COMMAND DOCS reports (types,
  // group names, versions), e.g. "key<key> value [condition: NX | XX]@2.6.12 [GET]@6.2.0".
  // COMMAND DOCS and the README's usage lines derive from it (see command_docs.h).
  std::string_view syntax{};
  std::span<const CommandSpec> subcommands{};
  // COMMAND INFO extras, as Redis 7.0 reports them.
  std::string_view acl_categories{};  // space-separated, without '@': "write string slow"
  std::string_view tips{};            // space-separated: "request_policy:all_shards ..."
  // Where its keys are and what it does to them (see KeySpecs), as Redis 7.0 states it.
  KeySpecs key_specs{};
  // COMMAND DOCS extras: history entries "version|text", '\n'-separated; doc flags
  // ("deprecated"); for deprecated commands the version and the replacement.
  std::string_view history{};
  std::string_view doc_flags{};
  std::string_view deprecated_since{};
  std::string_view replaced_by{};
  // Set for commands with movable keys (their key specs give no plain range: first_key() is 0).
  KeyFinder find_keys = nullptr;
  // Set for SET, BITFIELD, SORT and SORT_RO (see KeyFlagsFinder); key_references() uses it.
  KeyFlagsFinder find_key_flags = nullptr;
  // How the parts' replies merge when the command runs on several nodes (split or fanned out).
  MergePolicy merge = MergePolicy::kSum;

  // COMMAND INFO's first key, last key and step, derived from the key specs: 0 when the command
  // takes no key (or its keys move); a negative last key counts from the end (-1 = the last).
  constexpr int first_key() const { return key_specs.first; }
  constexpr int last_key() const { return key_specs.last; }
  constexpr int key_step() const { return key_specs.step; }
};

// The row of a command without keys, with no syntax, key specs or tips.
constexpr CommandSpec keyless_row(std::string_view name, int arity, uint32_t flags,
                                  CommandHandler handler, std::string_view group,
                                  std::string_view since, std::string_view summary,
                                  std::string_view complexity, std::string_view acl_categories,
                                  std::span<const CommandSpec> subcommands = {}) {
  return {.name = name,
          .arity = arity,
          .flags = flags,
          .handler = handler,
          .group = group,
          .since = since,
          .summary = summary,
          .complexity = complexity,
          .subcommands = subcommands,
          .acl_categories = acl_categories};
}

// The row of a command that only groups subcommands (CONFIG, CLIENT, XINFO, ...): Redis gives
// them all the same arity, flags, complexity and categories.
constexpr CommandSpec container_row(std::string_view name, std::string_view group,
                                    std::string_view since, std::string_view summary,
                                    std::span<const CommandSpec> subcommands) {
  return keyless_row(name, -2, 0, nullptr, group, since, summary, "Depends on subcommand.", "slow",
                     subcommands);
}

// A row marked deprecated since `since`, replaced by `replaced_by` (COMMAND DOCS' doc flags).
constexpr CommandSpec deprecated_row(CommandSpec row, std::string_view since,
                                     std::string_view replaced_by) {
  row.doc_flags = "deprecated";
  row.deprecated_since = since;
  row.replaced_by = replaced_by;
  return row;
}

// The row of a container's HELP subcommand.
constexpr CommandSpec help_row(CommandHandler handler, std::string_view group,
                               std::string_view since, std::string_view acl_categories = "slow") {
  return keyless_row("help", 2, kLoading | kStale, handler, group, since,
                     "Show helpful text about the different subcommands", "O(1)", acl_categories);
}

// The client a command runs for, as the engine sees it (implemented by server/).
// A client's connection as the Lua debugger talks over it (SCRIPT DEBUG): a blocking dialogue
// of its own, beside the node's event loop, over the plain socket or the client's TLS session.
class DebugLink {
 public:
  virtual ~DebugLink() = default;
  // Writes all of `data`; an error is left for the next read to notice.
  virtual void write_all(std::string_view data) = 0;
  // Appends what the client sent to `in`, waiting for it at most `idle_ms` (0: as long as it
  // takes); false when the connection closed, failed or nothing came in time.
  virtual bool read_some(std::string& in, int64_t idle_ms) = 0;
  // Ends the connection, in order (a TLS session with its close_notify): a forked debugging
  // copy's last act.
  virtual void close() = 0;
};

class ClientSession {
 public:
  virtual ~ClientSession() = default;
  virtual uint64_t id() const = 0;
  virtual std::string_view name() const = 0;
  virtual void set_name(std::string_view name) = 0;
  virtual protocol::RespVersion resp() const = 0;
  virtual void set_resp(protocol::RespVersion v) = 0;
  virtual int db() const = 0;
  // SELECT: the database the client's next commands use (checked by the caller).
  virtual void set_db(int /*db*/) {}
  // Close the connection after the pending replies are written (QUIT, CLIENT KILL of self).
  virtual void close_after_reply() = 0;
  // Reset to a fresh connection's state (RESET): name, RESP version, ...
  virtual void reset_state() = 0;
  // The line CLIENT LIST/INFO prints for this client (no trailing newline).
  virtual std::string info_line() const = 0;
  // Whether the client may run commands that need authentication (AUTH/HELLO succeeded, or it
  // connected while no password was required).
  virtual bool authenticated() const { return true; }
  virtual void set_authenticated(bool /*yes*/) {}
  // The ACL user the client runs as; null where nothing is checked (unit tests).
  virtual const acl::User* user() const { return nullptr; }
  // Authenticates the client as `user` (AUTH, HELLO ... AUTH).
  virtual void set_user(std::shared_ptr<acl::User> /*user*/) {}
  // Whether the client is inside MULTI (the context of its ACL LOG entries).
  virtual bool in_transaction() const { return false; }
  // CLIENT REPLY: replies are sent (kOn), none until ON (kOff), or the next command's is dropped
  // (kSkip).
  enum class ReplyMode { kOn, kOff, kSkip };
  virtual void set_reply_mode(ReplyMode /*mode*/) {}
  // CLIENT NO-EVICT ON|OFF.
  virtual void set_no_evict(bool /*on*/) {}
  // The client's CLIENT TRACKING state; null where it cannot track (unit tests).
  virtual ClientTracking* tracking() { return nullptr; }
  // SCRIPT DEBUG: how the client's next EVAL runs: normally, debugged in a forked copy of the
  // node whose changes are thrown away (YES), or debugged in the node itself (SYNC).
  enum class ScriptDebug { kOff, kFork, kSync };
  virtual ScriptDebug script_debug() const { return ScriptDebug::kOff; }
  virtual void set_script_debug(ScriptDebug /*mode*/) {}
  // The client's connection for the Lua debugger's own blocking dialogue (plain or TLS); null
  // where there is none (peers' links, unit tests).
  virtual DebugLink* debug_link() { return nullptr; }
  // Replies of the client's earlier requests wait to be written (SCRIPT DEBUG must come alone).
  virtual bool has_pending_replies() const { return false; }
};

// The kinds of connection CLIENT LIST TYPE and CLIENT KILL TYPE tell apart: Redis's normal
// and pubsub clients, and ringkv's peer links (another node's relay, health and control links),
// which Redis users' tools must not count or kill as clients.
enum class ClientKind { kNormal, kPubSub, kPeer };

// CLIENT KILL's filters, combined with AND.
struct ClientKillFilter {
  std::optional<uint64_t> id;       // ID client-id
  const acl::User* user = nullptr;  // USER username: clients authenticated as it; null = any
  std::string_view addr;            // ADDR ip:port (the client's remote address); empty = any
  std::string_view laddr;          // LADDR ip:port (the local address it connected to); empty = any
  std::optional<ClientKind> kind;  // TYPE normal|pubsub|peer
  bool skipme = true;              // SKIPME yes|no: spare the calling client
  uint64_t self_id = 0;            // the calling client
};

// Process-wide services a command may need (implemented by server/).
// A blocking connection MIGRATE sends its RESTOREs on, as Redis's syncio: every call waits at
// most its timeout.
class MigrateLink {
 public:
  virtual ~MigrateLink() = default;
  // Writes all of `data`; false on an error or when `timeout_ms` passes (errno says which:
  // ETIMEDOUT for the timeout).
  virtual bool write(std::string_view data, int64_t timeout_ms) = 0;
  // Reads one line into `line`, without its CRLF (at most 1 023 bytes, as Redis's buffer); false
  // on an error, the end of the stream or the timeout (errno ETIMEDOUT).
  virtual bool read_line(std::string& line, int64_t timeout_ms) = 0;
  // The database the target has selected on this connection; -1 when not known.
  int64_t last_db = -1;
};

class ServerControl {
 public:
  virtual ~ServerControl() = default;
  // INFO text for the given sections (lowercase; empty = default sections).
  virtual std::string info(std::span<const std::string_view> sections) = 0;
  // CLIENT LIST text for all clients (only these ids when non-empty; only this kind when set),
  // one line per client, each ending in "\n" as the CLIENT LIST reply carries it.
  virtual std::string client_list(std::span<const uint64_t> ids,
                                  std::optional<ClientKind> kind) = 0;
  // Kills the clients matching every set field of `filter` (CLIENT KILL); returns how many.
  // The calling client (filter.self_id), when it matches, is closed after its reply instead.
  virtual size_t kill_clients(const ClientKillFilter& filter) = 0;
  // CONFIG GET: appends (name, value) pairs of parameters matching the glob pattern.
  virtual void config_get(std::string_view pattern,
                          std::vector<std::pair<std::string, std::string>>& out) = 0;
  // CONFIG SET of name/value pairs, all or nothing; returns an empty string on success or the
  // full error reply text (e.g. "ERR Unknown option or number of arguments for CONFIG SET -
  // 'foo'").
  virtual std::string config_set(
      std::span<const std::pair<std::string_view, std::string_view>> pairs) = 0;
  virtual void config_resetstat() = 0;
  // Transactions: the server queues the commands between MULTI and EXEC itself; these run the
  // transaction commands for ctx.client, writing their replies to ctx.reply.
  virtual void multi(CommandContext& ctx) = 0;
  virtual void exec(CommandContext& ctx) = 0;
  virtual void discard(CommandContext& ctx) = 0;
  virtual void watch(CommandContext& ctx) = 0;
  virtual void unwatch(CommandContext& ctx) = 0;

  // CLUSTER INFO and CLUSTER NODES text; empty when this node is standalone.
  virtual std::string cluster_info() { return {}; }
  // Whether this node is a member of a cluster (CLUSTER INFO answers the ring), not standalone.
  virtual bool clustered() const { return false; }
  virtual std::string cluster_nodes() { return {}; }
  // The address of the node that owns `key`; empty when this node is standalone.
  virtual std::string cluster_owner(std::string_view /*key*/) { return {}; }
  // The addresses of the nodes that keep `key`, its primary first; empty when standalone.
  virtual std::vector<std::string> cluster_copies(std::string_view /*key*/) { return {}; }
  // CLUSTER JOIN / LEAVE / SETWEIGHT: answers through ctx (possibly later, the server keeps
  // the client's place in its replies). False when this node is not part of a cluster.
  virtual bool cluster_change(CommandContext& /*ctx*/) { return false; }
  // The node's numbered databases (SELECT, MOVE, SWAPDB, COPY ... DB, FLUSHALL); null where
  // there is only the context's store (unit tests of pure commands, append-only file replay).
  virtual Databases* databases() { return nullptr; }
  // SWAPDB a b (checked by the caller): exchanges the two databases' keys; clients watching keys
  // of either fail their EXEC and clients blocked on them are served from their new contents.
  virtual void swap_databases(int /*a*/, int /*b*/) {}
  // The node's ACL users; null where there are none (unit tests of pure commands).
  virtual acl::Users* acl_users() { return nullptr; }
  // The ACL file (aclfile) ACL LOAD and ACL SAVE use; empty when none is configured.
  virtual std::string_view acl_file() const { return {}; }
  // acllog-max-len: entries the ACL LOG keeps.
  virtual size_t acl_log_max_len() const { return 128; }
  // Disconnects the clients authenticated as one of `users` (the calling client `self` after
  // its reply): they were deleted, or replaced by ACL LOAD.
  virtual void disconnect_users(std::span<const acl::User* const> /*users*/,
                                ClientSession* /*self*/) {}
  // ACL SETUSER changed `user`'s channels: its subscribers to channels it may no longer use are
  // disconnected.
  virtual void user_channels_changed(const acl::User& /*user*/) {}
  // CLUSTER IMPORT host:port [AUTH password] | STOP [host:port]: answers through ctx. False when
  // this node is not part of a cluster.
  virtual bool cluster_import(CommandContext& /*ctx*/) { return false; }
  // Begin an orderly shutdown after this command's reply is flushed.
  virtual void shutdown() = 0;
  // BGREWRITEAOF: starts (or schedules) a rewrite of the append-only file and writes Redis's
  // reply for the outcome.
  virtual void rewrite_append_only_file(protocol::ReplyWriter& reply) {
    reply.error(
        "ERR Can't execute an AOF background rewriting. Please check the server logs "
        "for more information.");
  }
  virtual int64_t last_save_unix() const = 0;
  // SAVE and BGSAVE [SCHEDULE]: write Redis's reply for the outcome.
  virtual void save_snapshot(protocol::ReplyWriter& reply) { reply.error("ERR"); }
  virtual void background_save(bool /*schedule*/, protocol::ReplyWriter& reply) {
    reply.error("ERR");
  }
  // SHUTDOWN's save step, before shutdown(): saves the RDB file when `save` (SHUTDOWN SAVE), or
  // when save rules are set and not `nosave`. False when a wanted save failed.
  virtual bool save_before_shutdown(bool /*save*/, bool /*nosave*/) { return true; }
  // SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT] (checked): answers through ctx, possibly
  // later. Without replicas to wait for: ABORT has nothing to abort; else the save step, and
  // shutdown() unless a wanted save failed (without FORCE).
  struct ShutdownFlags {
    bool save = false;
    bool nosave = false;
    bool now = false;
    bool force = false;
    bool abort = false;
  };
  virtual void shutdown_command(CommandContext& ctx, const ShutdownFlags& flags);
  // REPLCONF, and SYNC/PSYNC (`psync`): a tool asks for a snapshot of this node.
  virtual void replconf(CommandContext& ctx);
  virtual void sync(CommandContext& ctx, bool psync);
  // WAIT numreplicas timeout (arguments checked): answers through ctx, possibly later (the
  // server keeps the client's place in its replies), with how many replicas have the client's
  // last write.
  // The default: no replicas, answered at once.
  virtual void wait_replicas(CommandContext& ctx, int64_t numreplicas, int64_t timeout_ms);
  // ROLE: this node as a primary, with the replicas of its keys (default: none).
  virtual void role(CommandContext& ctx);
  // The Lua scripts of this node (EVAL, SCRIPT ...); null where scripts cannot run.
  virtual ScriptEngine* script_engine() { return nullptr; }

  // What the node observed of its commands (SLOWLOG, LATENCY, INFO's command and error
  // counters); null where nothing is observed.
  virtual Observability* observability() { return nullptr; }
  // MONITOR: from now on ctx.client receives every command the node runs; replies +OK.
  virtual void monitor(CommandContext& ctx);
  // What LATENCY DOCTOR's advice depends on (thresholds, hz, fsync policy).
  virtual void latency_settings(LatencyDoctorSettings& /*out*/) const {}
  // MEMORY STATS (Redis's map of figures) and MEMORY DOCTOR's report.
  virtual void memory_stats(protocol::ReplyWriter& reply) { reply.map(0); }
  virtual std::string memory_doctor() { return {}; }
  // Whether `client` may run DEBUG (enable-debug-command: yes, or local and it is local).
  virtual bool debug_allowed(const ClientSession* /*client*/) const { return false; }
  // DEBUG SET-ACTIVE-EXPIRE: whether the timer deletes expired keys.
  virtual void set_active_expire(bool /*on*/) {}
  // CONFIG REWRITE: writes the effective configuration to the file it was loaded from.
  // Returns an empty string, or Redis's error text.
  virtual std::string config_rewrite() { return "ERR The server is running without a config file"; }
  // CLIENT PAUSE: until unix time `until_ms`, clients' commands (all, or only those that may
  // write) wait; a pause already running keeps its later end and its stricter kind.
  virtual void pause_clients(int64_t /*until_ms*/, bool /*all*/) {}
  // CLIENT UNPAUSE: the paused clients go on.
  virtual void unpause_clients() {}
  // CLIENT UNBLOCK: answers client `id`'s blocking command as timed out, or with the UNBLOCKED
  // error. False when no such client is blocked here.
  virtual bool unblock_client(uint64_t /*id*/, bool /*error*/) { return false; }
  virtual bool client_exists(uint64_t /*id*/) const { return false; }
  // CLIENT TRACKING: client `id` listens to (or, with `add` false, no longer to) keys starting
  // with each of `prefixes` (BCAST mode).
  virtual void track_prefixes(uint64_t /*id*/, std::span<const std::string> /*prefixes*/,
                              bool /*add*/) {}
  // MIGRATE's connection to `host`:`port` (Redis's cached migrate sockets, kept 10 s after their
  // last use): null when the connection cannot even be started.
  virtual MigrateLink* migrate_link(std::string_view /*host*/, std::string_view /*port*/,
                                    int64_t /*timeout_ms*/) {
    return nullptr;
  }
  // Closes that connection (after an I/O error), if it is open.
  virtual void migrate_close(std::string_view /*host*/, std::string_view /*port*/) {}
};

// Everything a handler can touch while running one command.
// What a blocking command (BLPOP, BZPOPMIN, ...) that found nothing to serve waits for.
struct BlockRequest {
  bool active = false;            // set by the handler: wait instead of replying
  std::vector<std::string> keys;  // any of these being written wakes the client
  int64_t timeout_ms = 0;         // relative; 0 = wait forever
  // The command to run again when woken, when it is not the one sent (XREAD's '$' stands for
  // the IDs at the time it blocked, so those are run again instead).
  std::vector<std::string> rerun_argv;
  // Each waiter is judged alone: one that cannot be served does not mean the key has nothing
  // left for those blocked after it (readers of a stream at different IDs).
  bool independent = false;
};

// Receives what writes do to keys (implemented by server/): which keys became ready for blocked
// clients, and which keys changed (for WATCH).
class KeyEvents {
 public:
  virtual ~KeyEvents() = default;
  // A list or sorted set at `key` was created or grew: clients blocked on it may be served.
  virtual void key_ready(std::string_view key) = 0;
  // `key` was changed by a command (where Redis calls signalModifiedKey): WATCHers of it fail.
  virtual void key_modified(std::string_view /*key*/) {}
  // `key` changed where Redis signals no key (a stream's consumer groups): the change is logged
  // like any write (and a ring change copies the key again), and WATCHers are not told.
  virtual void data_changed(std::string_view /*key*/) {}
  // Every key of the command's database is about to be dropped (FLUSHDB): WATCHers of existing
  // keys fail.
  virtual void keyspace_flushing() {}
  // The same for every database (FLUSHALL).
  virtual void all_keyspaces_flushing() { keyspace_flushing(); }
  // `key` was written in database `db`, not the command's own (MOVE's and COPY ... DB's
  // destination): its WATCHers fail and clients blocked on it there may be served.
  virtual void key_written_in(int /*db*/, std::string_view /*key*/) {}
  // A keyspace event, where Redis calls notifyKeyspaceEvent: `type` is its class
  // (common/keyspace_events.h), `event` its name ("set", "lpush", ...), `db` the key's database.
  virtual void keyspace_event(int /*type*/, std::string_view /*event*/, std::string_view /*key*/,
                              int /*db*/) {}
};

// Publish/subscribe on this node (implemented by server/): subscriptions of clients (by id) and
// delivery of messages to this node's subscribers.
class PubSubHub {
 public:
  virtual ~PubSubHub() = default;
  // Subscribes the client to a channel (or, with `pattern`, a glob pattern); returns false when
  // it already was.
  virtual bool subscribe(uint64_t client, std::string_view name, bool pattern) = 0;
  // Drops that subscription; returns false when the client did not have it.
  virtual bool unsubscribe(uint64_t client, std::string_view name, bool pattern) = 0;
  // The client's channels (or patterns), in the order UNSUBSCRIBE (PUNSUBSCRIBE) without
  // arguments drops them.
  virtual std::vector<std::string> subscriptions(uint64_t client, bool pattern) const = 0;
  // Channels plus patterns the client listens to: the count in (un)subscribe replies.
  virtual size_t subscription_count(uint64_t client) const = 0;
  // Delivers the message to every subscriber of the channel and of a matching pattern here;
  // returns how many deliveries were made.
  virtual int64_t publish(std::string_view channel, std::string_view message) = 0;
  // Channels with subscribers here, all of them or those matching the glob `pattern`.
  virtual std::vector<std::string> active_channels(
      std::optional<std::string_view> pattern) const = 0;
  // Clients subscribed to the channel itself (pattern subscriptions excluded).
  virtual int64_t subscribers(std::string_view channel) const = 0;
  // Distinct patterns subscribed to by any client.
  virtual int64_t pattern_count() const = 0;

  // Shard channels (SSUBSCRIBE, SPUBLISH), apart from channels and patterns: subscribing returns
  // false when the client already was, unsubscribing when it was not.
  virtual bool shard_subscribe(uint64_t client, std::string_view channel) = 0;
  virtual bool shard_unsubscribe(uint64_t client, std::string_view channel) = 0;
  // The client's shard channels, in the order SUNSUBSCRIBE without arguments drops them.
  virtual std::vector<std::string> shard_subscriptions(uint64_t client) const = 0;
  // The count in (un)subscribe replies of shard channels: the client's shard channels.
  virtual size_t shard_subscription_count(uint64_t client) const = 0;
  // Delivers the message to the shard channel's subscribers (in a cluster, on every node that
  // has some); returns how many received it.
  virtual int64_t shard_publish(std::string_view channel, std::string_view message) = 0;
  // Shard channels with subscribers here, all of them or those matching the glob `pattern`.
  virtual std::vector<std::string> active_shard_channels(
      std::optional<std::string_view> pattern) const = 0;
  // Clients subscribed to the shard channel here.
  virtual int64_t shard_subscribers(std::string_view channel) const = 0;
};

// What a command leaves in the append-only log (Redis's "propagation"). The server logs a
// command that changed data (it reported KeyEvents::key_modified or keyspace_flushing) as it
// arrived, unless its handler named an effective form here: a command whose effect depends on
// the clock or on chance (EXPIRE, SET EX, INCRBYFLOAT, SPOP, ...) logs what it did instead, so
// that replaying the log reproduces the same data whenever it runs.
class Propagation {
 public:
  // Logs `argv` in place of the command; called again, logs several commands in order.
  void replace(std::vector<std::string> argv) {
    replaced_ = true;
    commands_.push_back(std::move(argv));
  }
  // Logs nothing for this command even though it changed data (its effect is logged otherwise).
  void suppress() { replaced_ = true; }
  // Logs `argv` though no key changed: the command changed state kept with the data (FUNCTION
  // LOAD, DELETE, FLUSH, RESTORE change the function libraries).
  void record_always(std::vector<std::string> argv) {
    forced_ = true;
    replace(std::move(argv));
  }
  bool replaced() const { return replaced_; }
  bool forced() const { return forced_; }
  const std::vector<std::vector<std::string>>& commands() const { return commands_; }
  void clear() {
    replaced_ = false;
    forced_ = false;
    commands_.clear();
  }

 private:
  bool replaced_ = false;
  bool forced_ = false;
  std::vector<std::vector<std::string>> commands_;
};

struct CommandContext {
  std::span<const std::string_view> argv;  // argv[0] is the command name as the client sent it
  protocol::ReplyWriter& reply;
  Store& store;             // the client's selected database
  ClientSession* client;    // null in unit tests of pure commands
  ServerControl* server;    // null in unit tests of pure commands
  const CommandSpec* spec;  // the row being run (the subcommand's row for subcommands)
  // Where a blocking handler asks to wait. Null when the client cannot block (inside MULTI, or in
  // unit tests) and when its wait timed out: the handler then answers with Redis's reply for
  // that case (see blocking.h).
  BlockRequest* block = nullptr;
  // Where writers report keys made ready or changed (may be null: nobody is listening).
  KeyEvents* ready = nullptr;
  // Publish/subscribe state (null in unit tests that do not need it).
  PubSubHub* pubsub = nullptr;

  // The number of the database `store` is (SELECT's).
  int db = 0;

  // Set when a blocked client's timeout passed (block is then null).
  bool timed_out = false;
  // Set when a blocked client's command runs again (woken by a write to one of its keys, or timed
  // out), so that it can tell what changed since it blocked (XREADGROUP's group gone).
  bool blocked_retry = false;
  // With blocked_retry: the key whose write woke the client (empty when not known). A stream
  // reader is served from that key only, as Redis serves it.
  std::string_view ready_key{};
  // Set when a script called the command (redis.call): XREAD refuses BLOCK there, as in Redis.
  bool from_script = false;
  // Where a write names its effective form for the append-only log (null: nobody logs).
  Propagation* propagation = nullptr;
  // Set on a cluster node that also holds replicas' copies of other nodes' keys: keyspace-wide
  // commands (KEYS, SCAN, DBSIZE, RANDOMKEY, FLUSHALL, FLUSHDB) act on the keys it says are
  // this node's own only.
  const std::function<bool(std::string_view key)>* owned = nullptr;

  // Whether a keyspace-wide command acts on `key` (see owned).
  bool acts_on(std::string_view key) const { return owned == nullptr || (*owned)(key); }

  // Logs `argv` in place of this command (see Propagation). Builds nothing when nobody logs.
  void propagate_as(std::initializer_list<std::string_view> argv) const {
    if (propagation != nullptr)
      propagation->replace(std::vector<std::string>(argv.begin(), argv.end()));
  }
  void propagate_as(std::vector<std::string> argv) const {
    if (propagation != nullptr) propagation->replace(std::move(argv));
  }
  // Whether anything records what this command does (an append-only file, a replica): a handler
  // need not build an effective form nobody reads.
  bool propagating() const { return propagation != nullptr; }

  // Reports that `key` was created or grew (LPUSH, RPUSH, LMOVE's destination, ZADD, ...).
  void key_ready(std::string_view key) const {
    if (ready != nullptr) ready->key_ready(key);
  }
  // Reports that `key` was changed (every write that changed it, as Redis's signalModifiedKey).
  void key_modified(std::string_view key) const {
    if (ready != nullptr) ready->key_modified(key);
  }
  // Reports a change that Redis signals on no key (see KeyEvents::data_changed).
  void data_changed(std::string_view key) const {
    if (ready != nullptr) ready->data_changed(key);
  }
  // Reports that every key is about to be dropped (FLUSHALL/FLUSHDB): call before clearing, so
  // the listener can still see which watched keys exist.
  void keyspace_flushing() const {
    if (ready != nullptr) ready->keyspace_flushing();
  }
  void all_keyspaces_flushing() const {
    if (ready != nullptr) ready->all_keyspaces_flushing();
  }
  // Reports a write to `key` in another database than the command's (see KeyEvents).
  void key_written_in(int other_db, std::string_view key) const {
    if (ready != nullptr) ready->key_written_in(other_db, key);
  }
  // Reports a keyspace event on `key` of this command's database (see KeyEvents::keyspace_event),
  // and on `key` of database `other_db` (MOVE's and COPY ... DB's destination).
  void notify(int type, std::string_view event, std::string_view key) const {
    if (ready != nullptr) ready->keyspace_event(type, event, key, db);
  }
  void notify_in(int other_db, int type, std::string_view event, std::string_view key) const {
    if (ready != nullptr) ready->keyspace_event(type, event, key, other_db);
  }
};

// The whole table (top-level commands, each with its subcommands).
std::span<const CommandSpec> command_table();

// Finds a command by name, case-insensitively; nullptr when unknown.
const CommandSpec* find_command(std::string_view name);

// The row that will run argv: the command itself or, for a container, its subcommand.
// Sets `error` to Redis's exact text (unknown command / unknown subcommand / wrong number of
// arguments) and returns nullptr when argv cannot run.
const CommandSpec* resolve_command(std::span<const std::string_view> argv, std::string& error);

// The subcommand of `parent` named `name` (case-insensitive); nullptr when it has none such.
const CommandSpec* find_subcommand(const CommandSpec& parent, std::string_view name);

// Applies rename-command: each pair maps a command's name to the name clients must use instead
// ("" disables it). Replaces earlier renames. Returns "" or the reason the renames were refused
// (Redis's words: no such command, target name already exists), naming the offending command.
std::string set_command_renames(std::span<const std::pair<std::string, std::string>> renames);

// Finds a top-level command by the name clients use: renamed commands under their new name only,
// disabled ones not at all. nullptr when clients cannot reach it.
const CommandSpec* find_client_command(std::string_view name);

// As resolve_command, but argv[0] is looked up as a client's name (find_client_command).
const CommandSpec* resolve_client_command(std::span<const std::string_view> argv,
                                          std::string& error);

// The table's name of the command clients call `client_name` when rename-command renamed it;
// empty when it is not a new name.
std::string_view original_command_name(std::string_view client_name);

// Whether clients can reach the command `spec` (false once rename-command disabled it or, for a
// subcommand, its parent).
bool command_enabled(const CommandSpec& spec);

// Full name as Redis prints it in errors and COMMAND replies: "get", "config|get".
std::string command_fullname(const CommandSpec& spec);

// Positions of the key arguments of argv for this row (empty for keyless commands).
std::vector<size_t> key_positions(const CommandSpec& spec, std::span<const std::string_view> argv);
// The same into `out` (cleared first), for callers that reuse one vector.
void key_positions(const CommandSpec& spec, std::span<const std::string_view> argv,
                   std::vector<size_t>& out);

// Runs argv: resolves the row, checks arity, calls the handler. Writes an error reply when argv
// cannot run. Returns the row that ran, or nullptr.
const CommandSpec* dispatch(CommandContext& ctx);

}  // namespace ringkv::engine
