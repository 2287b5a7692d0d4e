// Server: the process's event loop. Owns the listener, the clients, the store and the timers
// (expiry, incremental rehash, idle clients), runs commands for connections, and implements the
// process-wide services commands need (INFO, CLIENT LIST/KILL, CONFIG, SHUTDOWN) and the
// delivery of published messages to subscribers.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/cluster.h"
#include "common/tls.h"
#include "conf/config.h"
#include "engine/acl/acl_users.h"
#include "engine/command.h"
#include "engine/keyspace/databases.h"
#include "engine/keyspace/evict.h"
#include "engine/keyspace/store.h"
#include "engine/scripting/script_engine.h"
#include "engine/stats/observability.h"
#include "persistence/aof.h"
#include "persistence/rdb_snapshots.h"
#include "protocol/reply_writer.h"
#include "server/blocked_clients.h"
#include "server/client_registry.h"
#include "server/idle_task.h"
#include "server/import.h"
#include "server/key_locks.h"
#include "server/migrate_links.h"
#include "server/migration.h"
#include "server/pipeline.h"
#include "server/pubsub.h"
#include "server/replica_sync.h"
#include "server/shard_interests.h"
#include "server/shutdown_wait.h"
#include "server/snapshot_sync.h"
#include "server/string_map.h"
#include "server/tracking_table.h"

namespace ringkv::server {

class Connection;

// Counters shown by INFO stats (reset by CONFIG RESETSTAT).
struct ServerStats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t rejected_connections = 0;
  uint64_t total_error_replies = 0;
  uint64_t total_reads_processed = 0;
  uint64_t total_writes_processed = 0;
  // Redis's estimate of the keys with a TTL that expired but are not deleted yet: each active
  // expiry cycle's share of expired keys among those it sampled, weighing 5% (0 to 1).
  double expired_stale_perc = 0;
  uint64_t expired_time_cap_reached_count = 0;  // active expiry cycles stopped by their budget
  // While eviction cannot bring used memory under maxmemory: since when (monotonic µs; 0 = it
  // is under), and how long the earlier such spans lasted.
  int64_t eviction_exceeded_since_us = 0;
  uint64_t eviction_exceeded_total_us = 0;
};

// What became of a command: answered (or handed to a peer, or queued), or waiting for its keys.
enum class Outcome { kDone, kWaiting };

class Server final : public engine::ServerControl,
                     public engine::KeyEvents,
                     public engine::ScriptHost,
                     public cluster::TxnHost,
                     public protocol::ErrorObserver {
 public:
  explicit Server(conf::Config config);
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and runs the loop until shutdown. Returns the process exit code.
  int serve();

  // Runs one parsed request read from `conn` (a client's, or a frame on a peer's relay link),
  // writing its reply through `writer`. Returns false when the request must wait (the ring is
  // switching): it was not run, and the connection is resumed later.
  bool execute(Connection& conn, std::span<const std::string_view> argv,
               protocol::ReplyWriter& writer);
  // execute() for a frame on a peer's link, read by cluster::parse_peer_frame.
  bool execute_frame(Connection& conn, std::span<const std::string_view> argv,
                     protocol::ReplyWriter& writer);
  // A relayed command (a kCommand frame): in RESP3 or as its script's user if the frame says so.
  void run_relayed(Connection& conn, const cluster::PeerFrame& frame,
                   protocol::ReplyWriter& writer);

  // The command pipeline (pipeline.cpp): runs argv, which came from `origin`, through every step
  // that applies to that origin, writing its reply (or reserving its place) through `writer`.
  Outcome run(const Origin& origin, std::span<const std::string_view> argv,
              protocol::ReplyWriter& writer);
  // The same for a command already resolved to its row `spec` (and arity-checked).
  Outcome run(const Origin& origin, const engine::CommandSpec& spec,
              std::span<const std::string_view> argv, protocol::ReplyWriter& writer);

  uv_loop_t* loop() { return loop_; }
  cluster::Cluster* cluster() { return cluster_.get(); }
  Connection* find_client(uint64_t id) const { return clients_.find(id); }
  // Unix time in milliseconds, and in microseconds.
  static int64_t unix_now_ms();
  static uint64_t unix_now_us();
  const conf::Config& config() const { return config_; }
  ServerStats& stats() { return stats_; }
  // Database 0: the only one a cluster node serves (cluster/ring changes and replication use it).
  engine::Store& store() { return store_; }
  engine::Databases& dbs() { return dbs_; }
  PubSubRegistry& pubsub() { return pubsub_; }
  const PubSubRegistry& pubsub() const { return pubsub_; }

  // Asks for conn->scheduled_flush() at the end of this loop iteration.
  void schedule_flush(Connection* conn) { dirty_.push_back(conn); }
  // Asks for conn.continue_input() in the next loop turn (its share of this one ran out).
  void defer_input(Connection& conn);
  // Microseconds of input run in this loop turn, all connections together (reset when the turn
  // ends): a connection defers the rest of its input once the turn has run enough, whatever its
  // own share, so that three peers copying keys here cannot make one turn 3 × a share long.
  int64_t& turn_input_us() { return turn_input_us_; }
  static constexpr int64_t kTurnInputBudgetUs = 3000;
  // A connection's input starts or ends (or is put off): the next command's start is read from
  // the clock again (see command_start_us).
  void forget_command_end() { last_end_us_ = 0; }
  bool turn_input_spent() const { return turn_input_us_ > kTurnInputBudgetUs; }

  // Append-only file records wait to be written: replies of this iteration must not leave
  // before write_aof() (a connection then schedules its flush instead of writing at once).
  bool aof_pending() const { return aof_.has_pending(); }
  // Writes (fsyncs under appendfsync always) the pending records, before any reply leaves.
  void write_aof() { aof_.flush_before_replies(uv_now(loop_)); }

  // Called by a Connection from its close callback.
  void on_connection_closed(Connection* conn);
  // A connection let go of a large output buffer (see trim_freed_memory).
  void note_released_output(size_t bytes) { released_output_bytes_ += bytes; }

  // engine::ServerControl
  std::string info(std::span<const std::string_view> sections) override;
  std::string client_list(std::span<const uint64_t> ids,
                          std::optional<engine::ClientKind> kind) override;
  size_t kill_clients(const engine::ClientKillFilter& filter) override;
  void config_get(std::string_view pattern,
                  std::vector<std::pair<std::string, std::string>>& out) override;
  std::string config_set(
      std::span<const std::pair<std::string_view, std::string_view>> pairs) override;
  void config_resetstat() override;
  engine::acl::Users* acl_users() override { return &users_; }
  engine::Databases* databases() override { return &dbs_; }
  void swap_databases(int a, int b) override;
  std::string_view acl_file() const override { return config_.security.aclfile; }
  size_t acl_log_max_len() const override {
    return static_cast<size_t>(config_.security.acllog_max_len);
  }
  void disconnect_users(std::span<const engine::acl::User* const> users,
                        engine::ClientSession* self) override;
  void user_channels_changed(const engine::acl::User& user) override;
  // Whether `conn` must authenticate before running commands (Redis's authRequired: the default
  // user has passwords or is off, and the client has not logged in).
  bool auth_required(const Connection& conn) const;
  void shutdown() override;
  void rewrite_append_only_file(protocol::ReplyWriter& reply) override;
  int64_t last_save_unix() const override { return rdb_.last_save_unix(); }
  void save_snapshot(protocol::ReplyWriter& reply) override;
  void background_save(bool schedule, protocol::ReplyWriter& reply) override;
  bool save_before_shutdown(bool save, bool nosave) override;
  void shutdown_command(engine::CommandContext& ctx, const ShutdownFlags& flags) override;
  // snapshot_sync.cpp
  void replconf(engine::CommandContext& ctx) override;
  void sync(engine::CommandContext& ctx, bool psync) override;
  std::string cluster_info() override;
  bool clustered() const override { return cluster_ != nullptr; }
  std::string cluster_nodes() override;
  std::string cluster_owner(std::string_view key) override;
  std::vector<std::string> cluster_copies(std::string_view key) override;
  bool cluster_change(engine::CommandContext& ctx) override;
  bool cluster_import(engine::CommandContext& ctx) override;

  // Client controls (client_control.cpp): CLIENT PAUSE/UNPAUSE, UNBLOCK and TRACKING.
  void pause_clients(int64_t until_ms, bool all) override;
  void unpause_clients() override;
  bool unblock_client(uint64_t id, bool error) override;
  bool client_exists(uint64_t id) const override { return clients_.find(id) != nullptr; }
  void track_prefixes(uint64_t id, std::span<const std::string> prefixes, bool add) override;
  bool clients_paused() const { return pause_until_ms_ != 0; }

  // Runs argv on the node that owns its keys (here, or relayed to a peer on the links of client
  // `client_id`, so one caller's commands reach each peer in order) and hands its reply to `done`
  // (at once when it ran here). For imports, which have no client connection.
  void run_routed(uint64_t client_id, std::span<const std::string_view> argv,
                  std::function<void(std::string_view reply)> done);
  // Records every import of this node in import.state (import_control.cpp).
  void save_imports();

  engine::ScriptEngine* script_engine() override { return scripts_.get(); }

  // engine::ServerControl: observability (observe.cpp)
  engine::Observability* observability() override { return &observed_; }
  void monitor(engine::CommandContext& ctx) override;
  // Ends a client's MONITOR (RESET, or the connection closing).
  void end_monitor(Connection& conn);
  void latency_settings(engine::LatencyDoctorSettings& out) const override;
  void memory_stats(protocol::ReplyWriter& reply) override;
  std::string memory_doctor() override;
  void set_active_expire(bool on) override;
  bool debug_allowed(const engine::ClientSession* client) const override;
  engine::MigrateLink* migrate_link(std::string_view host, std::string_view port,
                                    int64_t timeout_ms) override;
  void migrate_close(std::string_view host, std::string_view port) override;
  std::string config_rewrite() override;

  // protocol::ErrorObserver: an error reply written to a connection (errorstats).
  void on_error_reply(std::string_view msg) override;
  // The same for an encoded reply that reached a client otherwise (a relayed one): counted
  // when it is an error.
  void count_error_reply(std::string_view reply);

  // Replication (replication.cpp).
  void wait_replicas(engine::CommandContext& ctx, int64_t numreplicas, int64_t timeout_ms) override;
  void role(engine::CommandContext& ctx) override;
  // INFO's replication section.
  std::string replication_info() const;

  // engine::ScriptHost (scripting.cpp)
  void script_begin(engine::ClientSession* client) override;
  void script_call(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                   protocol::ReplyWriter& reply) override;
  void script_busy(bool first) override;
  void script_end(bool was_busy) override;
  std::string writes_refused(const engine::CommandSpec& spec,
                             std::span<const std::string_view> argv) override;
  int debug_fork(engine::ClientSession* client) override;
  // Waits for the SCRIPT DEBUG copies that ended (or kills them all, at shutdown).
  void reap_debug_sessions(bool kill_them);

  // engine::KeyEvents
  void key_ready(std::string_view key) override;
  void key_modified(std::string_view key) override;
  void data_changed(std::string_view key) override;
  void keyspace_flushing() override;
  void all_keyspaces_flushing() override;
  void key_written_in(int db, std::string_view key) override;
  void keyspace_event(int type, std::string_view event, std::string_view key, int db) override;
  // A key the server deleted by itself: its TTL passed (lazily, during a command, or by active
  // expiry) or maxmemory evicted it. Its WATCHers fail and the append-only file logs a DEL at
  // once; the command running meanwhile does not count it as its change (key_changed, dropped).
  void key_dropped(std::string_view key) { key_dropped(events_db_, key); }
  void key_dropped(int db, std::string_view key);
  // Listens to database `db`'s expiries, evictions and new keys (notifications.cpp).
  void watch_store(int db);

  // engine::ServerControl: transactions (transaction.cpp)
  void multi(engine::CommandContext& ctx) override;
  void exec(engine::CommandContext& ctx) override;
  void discard(engine::CommandContext& ctx) override;
  void watch(engine::CommandContext& ctx) override;
  void unwatch(engine::CommandContext& ctx) override;
  // Drops every WATCH of a client (EXEC, DISCARD, UNWATCH, RESET, disconnect).
  void unwatch_all(Connection& conn);
  // Drops the client's WATCHes of keys on this node only (its WATCHes on peers stay).
  void unwatch_here(Connection& conn);
  // Runs a transaction's commands for `conn` as one block (recorded as MULTI ... EXEC), writing
  // their array reply.
  // The database a block of `commands` leaves its client in when it runs (the last SELECT of a
  // valid index), or -1 when it has no SELECT.
  int db_after_block(std::span<const std::vector<std::string>> commands) const;
  void run_block(Connection& conn, const std::vector<std::vector<std::string>>& commands,
                 protocol::ReplyWriter& reply);

  // cluster::TxnHost (cross_transaction.cpp): this node's part of a cross-node transaction it
  // coordinates.
  void lock_here(uint64_t client_id, std::vector<std::string> keys, bool watches, unsigned checks,
                 uint64_t wait_ms, std::function<void(std::string_view reply)> done) override;
  std::string run_here(uint64_t client_id, const std::vector<std::vector<std::string>>& commands,
                       protocol::RespVersion resp) override;
  void release_here(uint64_t client_id) override;
  // After a ring change: clients of this node blocked on keys it no longer owns wait on the
  // keys' new owner instead (their command is relayed there).
  void reroute_blocked();
  // What any change of `key` tells the rest of the server, whoever made it (a command, expiry,
  // eviction): its WATCHers fail, a ring change copies it again, its blocked clients look again.
  void key_changed(int db, std::string_view key, bool dropped = false);
  // Running a replication or migration frame from a peer (its changes are copies).
  bool applying_copy() const { return applying_copy_; }
  // The ring changes' side of this node (with a cluster).
  Migration* migration() { return migration_.get(); }
  // Deleting a key whose time to live ran out (every copy of it expires at the same moment).
  bool expiring() const { return expiring_; }
  // Deletes every key (a node restored after a failover drops what it held), recorded as
  // FLUSHALL.
  void discard_keyspace();
  // Makes the transactions watching `key` fail.
  void invalidate_watchers(int db, std::string_view key);
  // Database `db` is flushed (replaced_with < 0) or swapped with `replaced_with`: transactions
  // watching a key that exists in either fail, and clients blocked on its keys look again.
  void database_replaced(int db, int replaced_with);

 private:
  static void on_connection(uv_stream_t* listener, int status);
  static void on_cron(uv_timer_t* timer);
  static void on_signal(uv_signal_t* handle, int signum);

  bool listen();
  // Binds and listens on `port` with `handle` (the plain-text or the TLS listener).
  bool listen_on(uv_tcp_t& handle, int port);
  // Listens on the unixsocket path, if one is configured.
  bool listen_unix();
  // Closes every listener that is open (and removes the unixsocket file): at shutdown, or when
  // one of them cannot listen at start-up.
  void close_listeners();
  // Builds the TLS context from the tls-* options; false (with OpenSSL's reason logged or in
  // `error`) when they do not work.
  bool load_tls(std::string& error);
  // Closes TLS connections whose handshake has not finished within tls-handshake-timeout.
  void close_stalled_handshakes(uint64_t now);
  // Loads the ACL file (aclfile) at start-up; false, with the reason logged, when it fails.
  bool load_acl_file();
  // Whether a client's command passes the ACL; answers the refusal (NOPERM, logged) otherwise.
  bool refused_by_acl(const Origin& origin, const engine::CommandSpec& spec,
                      std::span<const std::string_view> argv, protocol::ReplyWriter& writer);
  // After loading at start-up in a cluster: logs how many keys belong to other members.
  void warn_foreign_keys();
  // Writes the process id to the pidfile, if one is configured (removed again at a clean exit).
  void write_pidfile();
  // Protected mode turns this new client away.
  bool protected_from(const Connection& conn) const;
  // Answers a command (the row `spec`, if it resolved) that cannot run with `error`: a
  // transaction it was sent in will abort; a refused EXEC aborts it now.
  void refuse(const Origin& origin, std::string_view error, protocol::ReplyWriter& writer,
              const engine::CommandSpec* spec);
  // In a cluster, for a keyed command that needs the lease: whether this node serves its keys —
  // it is on its ring and, for a peer's request on a link of another view of the ring (routed
  // by a ring this node no longer has), it owns each of them.
  bool serves_keys(const Origin& origin, const engine::CommandSpec& spec,
                   std::span<const std::string_view> argv);
  // In a cluster: hands a client's command whose route involves peers to the cluster, its reply
  // filling a slot reserved in the client's replies. Returns false when it runs here.
  bool relay(Connection& conn, const engine::CommandSpec& spec,
             std::span<const std::string_view> argv, protocol::ReplyWriter& writer);
  // While the ring switches: whether a client's request must wait (it touches keys, or is EXEC).
  // Peers' frames never wait: a peer relays only by a ring every node agrees on for its keys
  // (a paused node relays nothing; one that committed sends keys to owners that have them).
  bool must_wait_for_ring(std::span<const std::string_view> argv);
  // Whether a frame a peer relayed is a command that names keys.
  static bool relayed_keyed(const cluster::PeerFrame& frame);
  // RINGKV.CHALLENGE / RINGKV.PEER, a step of a peer's handshake: answers a challenge, switches
  // the connection to a peer's relay link if the cluster accepts it, or answers the refusal and
  // closes it.
  void peer_handshake(Connection& conn, std::span<const std::string_view> argv,
                      protocol::ReplyWriter& writer);
  void cron();
  void trim_freed_memory();
  // Sharded pub/sub in a cluster (shard_pubsub.cpp): tells the owners of shard channels how many
  // subscribers this node has, forwards SPUBLISH to the nodes with subscribers, and answers the
  // peers' RINGKV.SHARDSUB and RINGKV.SHARDMSG frames.
  void setup_shard_pubsub();
  void refresh_shard_interests();
  void shard_frame(const cluster::PeerFrame& frame, protocol::ReplyWriter& writer);
  // Runs a RINGKV.KEYSPACEMSG frame (a keyspace event or a script's or transaction's PUBLISH
  // that another node forwards; its arguments).
  void keyspace_frame(std::span<const std::string_view> args, protocol::ReplyWriter& writer);
  // Sends a RINGKV.KEYSPACEMSG frame (its (channel, message) pairs after the frame's name) to
  // every other member, whose keyspace_frame publishes them to its subscribers.
  void forward_messages(std::span<const std::string_view> frame);
  // Snapshots for tools (snapshot_sync.cpp): a chunk for client `id`, the snapshot's end, the
  // timer that resumes transfers whose clients took their output, and the end of all of them.
  void sync_data(uint64_t id, std::string_view chunk);
  void sync_ended(uint64_t id, bool ok, const std::string& error);
  void resume_syncs();
  void end_syncs();
  void begin_shutdown();
  // shutdown-timeout (see ShutdownWait): starts waiting (false when nothing is to be waited for);
  // the cron's check; the shutdown going on with the wait's flags; the wait's end.
  bool start_shutdown_wait(const ShutdownFlags& flags);
  void check_shutdown_wait();
  void finish_shutdown_wait();
  void end_shutdown_wait(bool exiting);
  // Closes the last handles once shutdown has begun and every client is gone.
  void maybe_finish_shutdown();
  void apply_runtime_config();
  // acl-pubsub-default, for the users and selectors made from now on.
  void apply_acl_config();
  // Derives the eviction limits and the store's access tracking from the memory options.
  void apply_memory_config();
  // Redis's maxmemory check before a command: evicts keys while over maxmemory; when still
  // over, refuses (with -OOM) a denyoom command, any command queued in MULTI and an EXEC whose
  // queue holds a denyoom command (-EXECABORT). Returns whether it answered.
  bool refused_for_memory(const engine::CommandSpec& spec, Connection* conn,
                          protocol::ReplyWriter& writer);
  // Why writes are refused now (Redis's MISCONF text), or "": save rules are set, the last
  // BGSAVE failed and stop-writes-on-bgsave-error is on; or the append-only file's last write
  // failed.
  std::string disk_error() const;
  // Why this node takes no write now whatever its keys: disk_error(), else a shutdown waiting for
  // its replicas (kShuttingDownError). "" when writes go on.
  std::string writes_stopped() const;
  // Answers `error` for a command refused before it ran (counted as a rejected call): in MULTI
  // the transaction is flagged, and a refused EXEC (`exec`) discards it with -EXECABORT.
  bool refuse_before_run(const engine::CommandSpec& spec, Connection* conn, bool exec,
                         std::string_view error, protocol::ReplyWriter& writer);
  // min-replicas-to-write is on (both it and min-replicas-max-lag non-zero, as Redis reads them).
  bool min_replicas_on() const {
    return config_.cluster.min_replicas_to_write != 0 && config_.cluster.min_replicas_max_lag != 0;
  }
  // The good replicas of `keys` (Replication::good_replicas; none without replication).
  size_t good_replicas(std::span<const std::string_view> keys) const;
  // Why a write of `argv` is refused for want of replicas (Redis's NOREPLICAS text), or "":
  // min-replicas-to-write and min-replicas-max-lag are set and fewer good replicas have its keys
  // (Replication::good_replicas; none on a node without replicas).
  std::string replicas_refusal(const engine::CommandSpec& spec,
                               std::span<const std::string_view> argv) const;
  std::string replicas_refusal(std::span<const std::string_view> keys) const;
  // This node's part of a cross-node transaction (its keys), refused as its commands would be
  // here (cluster::TxnPart::refusal_checks): over maxmemory (-OOM) when it may grow memory; when
  // it writes, while disk_error() is set or replicas_refusal() refuses its keys. "" to go on.
  std::string part_refusal(unsigned checks, std::span<const std::string> keys);
  // Redis's checks before a command: while disk_error() is set, refuses a write command or a
  // client's PING (a peer's health check is answered); then a write replicas_refusal() refuses. In
  // MULTI, what it queues is checked so; an EXEC whose queue holds a write is refused (-EXECABORT).
  // Returns whether it answered.
  bool refused_writes(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                      Connection* conn, protocol::ReplyWriter& writer);
  // In MULTI: queues the command (+QUEUED) unless it runs at once (EXEC, DISCARD, MULTI, WATCH,
  // QUIT, RESET). Returns whether it was queued (or refused). Refused as Redis refuses it: over
  // maxmemory, and with `runs_here` (its keys are this node's, or it has none) as a write this
  // node cannot persist or replicate (refused_writes; another member's write is refused there).
  bool queue_in_transaction(Connection& conn, const engine::CommandSpec& spec,
                            std::span<const std::string_view> argv, protocol::ReplyWriter& writer,
                            bool runs_here = true);
  // A command was refused before it could be queued: the transaction will abort.
  void transaction_refused(Connection& conn);
  // In a cluster: pins a transaction (and its WATCHes) to the one node its keys live on,
  // refusing commands for another node with CROSSSLOT, and runs WATCH and EXEC of a transaction
  // pinned to a peer there. Returns whether the request was answered here.
  bool transaction_in_cluster(Connection& conn, const engine::CommandSpec& spec,
                              std::span<const std::string_view> argv,
                              protocol::ReplyWriter& writer);
  // A WATCH in a cluster whose keys live on several nodes: watched on each (peers on the
  // client's transaction links), one reply. Returns false when all are here (WATCH runs).
  bool watch_in_cluster(Connection& conn, std::span<const std::string_view> argv,
                        protocol::ReplyWriter& writer);
  // With [cluster] atomic-multikey: runs a multi-key command whose keys live on several nodes
  // as one cross-node transaction (atomic_multikey.cpp). Returns false for other routes.
  bool relay_atomic(Connection& conn, const engine::CommandSpec& spec,
                    std::span<const std::string_view> argv, const cluster::Route& route,
                    protocol::ReplyWriter& writer);
  // WATCHes the keys here for `conn`.
  void watch_keys(Connection& conn, int db, std::span<const std::string_view> keys);
  // EXEC of a transaction whose commands and WATCHes touch several nodes: one part per node,
  // run by a cluster::TxnSession, the replies merged in the client's order.
  void exec_across(Connection& conn, protocol::ReplyWriter& writer);
  // A RINGKV.TXN frame from a coordinator (LOCK, RUN, RELEASE; its arguments). Returns false
  // when a LOCK waits for keys other transactions hold (the connection runs it again later).
  bool txn_frame(Connection& conn, std::span<const std::string_view> args,
                 protocol::ReplyWriter& writer);
  // Whether a request may run now: kHeld while a key it touches (an EXEC: the keys of its
  // queued commands) is locked by another transaction, kAnswered once that wait passed
  // request-timeout (it was answered with an error). `command` is what the request runs (a
  // peer's frame: its command without prefixes; empty for the members' own frames).
  enum class LockCheck { kRun, kHeld, kAnswered };
  LockCheck check_locks(Connection& conn, std::span<const std::string_view> command,
                        protocol::ReplyWriter& writer);
  // check_locks() where it applies (not on control links or replication streams), counting an
  // answered request as processed.
  LockCheck lock_check(Connection& conn, std::span<const std::string_view> command,
                       protocol::ReplyWriter& writer);
  // The answer to a part whose keys were just locked for `conn`: kTxnLocked, or, with
  // `watches`, kTxnWatched when a WATCHed key changed (the locks are released); its WATCHes here
  // are dropped either way.
  std::string locked_here(Connection& conn, bool watches);
  // Releases the locks of `owner` and lets whoever waits for them try again.
  void release_locks(uint64_t owner);
  void retry_local_lock_waits();
  // A connection closed: its locks, waits and lease go.
  void locks_closed(uint64_t conn_id);
  void arm_lock_timer();
  void lock_timer_fired();
  // Over maxmemory even after evicting what the policy allows.
  bool over_maxmemory();
  // Blocked clients: registering, serving them when their keys are written, timing them out.
  void block_client(Connection& conn, std::span<const std::string_view> argv,
                    engine::BlockRequest request);
  void serve_ready_keys();
  // Runs a blocked client's command again (as timed out when `timed_out`). Returns whether it
  // was answered (else it keeps waiting where it was).
  bool rerun_blocked(Connection& conn, bool timed_out, std::string_view ready_key = {});
  void arm_block_timer();
  // CLIENT PAUSE: whether a client's request waits for the pause to end (every request under
  // ALL; under WRITE those that may write: write commands, scripts, PUBLISH, an EXEC of writes).
  // A waiting connection is resumed by unpause_clients().
  bool paused_request(Connection& conn, std::span<const std::string_view> argv);
  void arm_pause_timer();
  // Client-side caching (client_control.cpp): remembers the keys a tracking client read, sends
  // invalidations when keys change (to the client running the command after its reply),
  // broadcasts the changes under BCAST prefixes at the end of the loop iteration.
  void track_reads(const Origin& origin, const engine::CommandSpec& spec,
                   std::span<const std::string_view> argv);
  void tracking_key_changed(std::string_view key);
  // The invalidations of this node's own readers of `key` (default mode).
  void invalidate_readers(std::string_view key);
  // tracking-table-max-keys, checked before each client command and by the cron, as Redis does:
  // past it keys are invalidated as if written, 100 per call, 100 more each call still over it.
  void limit_tracking_table();
  // In a cluster: a tracking client's reads on peers (a relayed command's keys, a script's
  // declared keys, the keys of a transaction's read-only commands) are remembered here, and each
  // peer owner is told ahead of them, on the client's link, to report their next change
  // (RINGKV.TRACK); an owner reports it with RINGKV.INVALIDATE (tracking_frame() answers both).
  // A block relayed whole to peer `whole` gets its frame back, to send ahead on its own link.
  void track_remote_reads(Connection& conn, const engine::CommandSpec& spec,
                          std::span<const std::string_view> argv, const cluster::Route& route);
  std::vector<std::string> track_block_reads(Connection& conn,
                                             const std::vector<std::vector<std::string>>& block,
                                             size_t whole);
  void tracking_frame(const cluster::PeerFrame& frame, protocol::ReplyWriter& writer);
  void tracking_flushed();
  void tracking_closed(Connection& conn);
  // Sends `tracker` an invalidation of `keys` (or, null, of everything), where its mode says.
  void send_invalidation(Connection& tracker, const std::vector<std::string>* keys);
  // After a client's request: the invalidations of keys it changed itself follow its reply, and
  // CLIENT CACHING's word applied to that request only (unless it was a CLIENT command, or it
  // is in MULTI), as in Redis.
  void tracking_after_request(Connection& conn);
  void broadcast_invalidations();
  // Calls spec's handler and, with `records`, hands the append-only file the command's record
  // when it changed data (it reported a modified key or a flush): argv as it arrived, or the
  // effective form the handler named.
  void call(const engine::CommandSpec& spec, engine::CommandContext& ctx, bool records);
  // call() for a request when this node replicates: collects the offsets its writes reached on
  // the replicas' streams (for WAIT) and, with replica-acks, holds its reply in the client's
  // place until that many replicas acknowledged them.
  void call_replicated(const Origin& origin, const engine::CommandSpec& spec,
                       engine::CommandContext& ctx);
  // Remembers where a client's relayed write went (WAIT asks there).
  void note_relayed_write(Connection& conn, const engine::CommandSpec& spec,
                          std::span<const std::string_view> argv, const cluster::Route& route);
  // The same for a transaction that runs on peers (relayed whole or across nodes): the keys of
  // its writing commands.
  void note_transaction_writes(Connection& conn,
                               std::span<const std::vector<std::string>> commands);
  // The client's last write reached `keys`: WAIT waits for each of their replica sets.
  void note_written_keys(Connection& conn, std::span<const std::string_view> keys);
  // On a peer's link: RINGKV.REPL and RINGKV.WAIT frames, and the writes of a primary's stream.
  // Returns false for any other frame.
  bool replica_frame(Connection& conn, const cluster::PeerFrame& frame,
                     protocol::ReplyWriter& writer);
  // Runs one frame of the stream `conn` carries after its HELLO; returns its source (null when
  // the connection no longer carries the primary's current stream). Writes a reply only when
  // it refuses the frame; other replies are the caller's to drop.
  cluster::Replication::Source* stream_frame(Connection& conn, const cluster::PeerFrame& frame,
                                             protocol::ReplyWriter& writer);
  void wait_frame(Connection& conn, std::span<const std::string_view> args,
                  protocol::ReplyWriter& writer);
  // Hands one command's record to the append-only file, or, while a script runs, to its effects
  // (recorded at its end, in MULTI/EXEC as in Redis). `spec`: the command `argv` names, if known.
  void record(std::span<const std::string_view> argv, const engine::CommandSpec* spec = nullptr);
  void record(const std::vector<std::string>& argv);
  // The one place records go: the append-only file and the replicas of the keys written.
  // `db` is the database the command ran in: the file gets a SELECT first when it changes.
  void feed_record(int db, std::span<const std::string_view> argv,
                   const engine::CommandSpec* spec = nullptr);
  // The records fed between these calls form one MULTI/EXEC block in the file and on replicas.
  void begin_record_block();
  void end_record_block();
  // Whether this node sends its writes to replicas (a cluster with replication-factor > 1).
  bool replicating() const { return cluster_ && cluster_->replication().enabled(); }
  // While a script is busy only commands flagged allow_busy run (SCRIPT KILL, SHUTDOWN, ...):
  // answers the others with -BUSY. Returns whether it answered.
  bool refused_while_busy(const Origin& origin, const engine::CommandSpec& spec,
                          protocol::ReplyWriter& writer);
  // The end of a loop iteration: the append-only file is written, then the replies waiting.
  void flush_dirty();
  // What the pipeline records of a command that ran here, started at `start_us` (unix µs): its
  // command stats, a slow log entry and a latency sample when slow. Nothing for a replayed record
  // or a part of a client's split command (the whole command was recorded where it arrived).
  void observe(const Origin& origin, const engine::CommandSpec& spec,
               std::span<const std::string_view> argv, uint64_t start_us, bool failed);
  void slow_command(const Origin& origin, const engine::CommandSpec& spec,
                    std::span<const std::string_view> argv, uint64_t usec, uint64_t now_us);
  // Which commands monitors see: scripts (EVAL, EVALSHA, FCALL and their _RO forms) as they start,
  // before the commands they call; other commands once they ran, except admin and
  // skip_monitor ones (as in Redis, EXEC after its body).
  static bool runs_script(const engine::CommandSpec& spec);
  static bool monitored_after_run(const engine::CommandSpec& spec);
  // Sends the command's MONITOR line to every monitor (not for origins monitors do not see).
  void feed_monitors(const Origin& origin, const engine::CommandSpec& spec,
                     std::span<const std::string_view> argv, uint64_t now_us);
  // INFO's memory and stats sections, and what INFO clients counts (info.cpp).
  struct ClientFigures {
    size_t clients = 0;     // connections that are not peers' links
    size_t peer_links = 0;  // links from peers (cluster_connections)
    size_t max_input_buffer = 0;
    size_t max_output_buffer = 0;
    size_t clients_memory = 0;  // buffers of the clients (mem_clients_normal)
    size_t links_memory = 0;    // buffers of the peers' links (mem_cluster_links)
    size_t tracking = 0;        // clients with CLIENT TRACKING on (tracking_clients)
  };
  ClientFigures client_figures() const;
  // What comes on top of the dataset (used_memory_overhead): the clients' and peer links'
  // buffers, the append-only buffer, the replication backlogs.
  struct OverheadFigures {
    ClientFigures clients;
    persistence::AofInfo aof;
    uint64_t backlog = 0;  // mem_replication_backlog
    size_t total() const {
      return clients.clients_memory + clients.links_memory + aof.buffer_length + backlog;
    }
  };
  OverheadFigures overhead_figures() const;
  void info_memory(std::string& out);
  void info_stats(std::string& out, uint64_t now_ms);
  // A RESP2 client with subscriptions may only run (P)(UN)SUBSCRIBE, PING, QUIT and RESET, and
  // gets PING's subscribed-mode reply. Returns true when it answered `spec` that way.
  bool answer_in_pubsub_context(Connection& conn, const engine::CommandSpec& spec,
                                std::span<const std::string_view> argv,
                                protocol::ReplyWriter& writer);

  conf::Config config_;
  uv_loop_t* loop_;
  uv_tcp_t listener_;
  uv_tcp_t tls_listener_;
  bool plain_listening_ = false;
  bool tls_listening_ = false;
  bool pidfile_written_ = false;  // the pidfile is ours to remove at exit
  uv_pipe_t unix_listener_;
  bool unix_listening_ = false;  // the socket file is ours to remove
  // The TLS context new TLS connections and peer links use; rebuilt by CONFIG SET of tls-*.
  std::shared_ptr<const common::TlsContext> tls_context_;
  uv_timer_t cron_timer_;
  // The cron's period: 1000 / hz ms.
  uint64_t cron_period_ms() const {
    return 1000 / static_cast<uint64_t>(std::max<int64_t>(1, config_.server.hz));
  }
  uv_signal_t sigint_;
  uv_signal_t sigterm_;
  uv_check_t flush_check_;
  std::vector<Connection*> dirty_;        // connections with replies to write this iteration
  std::vector<uint64_t> deferred_input_;  // connections whose input goes on next turn
  int64_t turn_input_us_ = 0;
  // The clock reading that ended the last command of a connection's input (0: none since the
  // input ended): the next command read from that input starts then, so that a pipeline of
  // commands reads the clock once per command rather than twice.
  uint64_t last_end_us_ = 0;
  uint64_t command_start_us() {
    const uint64_t start = last_end_us_ != 0 ? last_end_us_ : unix_now_us();
    last_end_us_ = 0;
    return start;
  }
  std::unique_ptr<IdleTask> input_task_;
  bool shutting_down_ = false;
  // The copies of the node running forked SCRIPT DEBUG sessions: reaped by the cron, killed at
  // shutdown.
  std::vector<int> debug_sessions_;
  bool shutdown_finished_ = false;

  engine::Databases dbs_{static_cast<int>(config_.server.databases)};
  engine::Store& store_ = dbs_[0];
  // The database of the command running (its key events, WATCH, blocked clients and records
  // are that database's).
  int events_db_ = 0;
  uint32_t expire_db_ = 0;    // the database active expiry visits first next time
  int script_caller_db_ = 0;  // the database of the client running a script, when it began
  // The ACL users; requirepass is the default user's password.
  engine::acl::Users users_;
  engine::Evictor evictor_;
  engine::EvictionLimits eviction_limits_;
  persistence::AppendOnlyFile aof_{dbs_, config_.persistence};
  persistence::RdbSnapshots rdb_{dbs_, config_.persistence, config_.memory};
  // SHUTDOWN decided whether to save (save_before_shutdown): the shutdown itself does not again.
  bool shutdown_save_done_ = false;
  std::optional<ShutdownWait> shutdown_wait_;
  // Snapshots on their way to tools, by client id (snapshot_sync.cpp).
  std::unordered_map<uint64_t, std::unique_ptr<SyncTransfer>> syncs_;
  uv_timer_t sync_timer_;
  bool sync_timer_ready_ = false;
  std::string replid_;  // PSYNC's +FULLRESYNC replication id, new at each start as in Redis
  uint64_t sync_forks_ = 0;
  // Snapshots SYNC and PSYNC were answered with, and PSYNCs naming a replication ID that
  // could not continue (INFO's sync_full, sync_partial_err; ringkv never continues one).
  uint64_t sync_full_ = 0;
  uint64_t sync_partial_err_ = 0;
  // CLUSTER IMPORT sources, running or stopped (import.cpp).
  std::vector<std::unique_ptr<ImportSource>> imports_;
  uint64_t last_import_cron_ms_ = 0;
  // Imports that other members run, as they announce them once a second (RINGKV.IMPORT), and the
  // STOPs to pass on to such a member (when it is back, if it is down).
  struct RemoteImport {
    std::string node;
    std::string fields;
    uint64_t heard_ms;
    bool stop_requested;
  };
  std::map<std::string, RemoteImport> remote_imports_;  // by node and source
  std::vector<ImportRecord> saved_imports_;             // what import.state holds
  // Resumes the imports recorded in import.state (at start); announces this node's to the
  // members; answers RINGKV.IMPORT frames (their arguments); CLUSTER IMPORT STOP of an import
  // another member runs.
  void load_imports();
  void import_cron(uint64_t now);
  void announce_imports();
  void import_frame(std::span<const std::string_view> args, protocol::ReplyWriter& writer);
  bool stop_remote_import(std::string_view source);
  size_t released_output_bytes_ = 0;
  uint64_t latest_sync_fork_usec_ = 0;
  // Reports of changed keys and flushes so far: a handler that moved it changed data.
  uint64_t changes_ = 0;
  bool in_exec_ = false;        // running EXEC's commands
  bool applying_copy_ = false;  // running a replication or migration frame from a peer
  bool expiring_ = false;       // see expiring()
  std::vector<size_t> key_scratch_;
  std::unique_ptr<cluster::Cluster> cluster_;  // null for a standalone node
  std::unique_ptr<Migration> migration_;       // with cluster_
  std::unique_ptr<ReplicaSync> replica_sync_;  // with cluster_
  // Whether this node owns a key by its routing ring: is its primary (see CommandContext::owned).
  std::function<bool(std::string_view)> owned_ = [this](std::string_view key) {
    return (replicating() ? cluster_->replication().primary_of(key)
                          : cluster_->routing_ring().owner_of(key)) == cluster_->self_address();
  };
  std::unique_ptr<engine::ScriptEngine> scripts_;
  // The script running now: its client, whether it is past the busy threshold (other clients
  // get -BUSY), and the records of its writes.
  Connection* script_conn_ = nullptr;
  bool script_busy_ = false;
  std::vector<std::pair<int, std::vector<std::string>>> script_effects_;  // (database, command)
  BlockedClients blocked_;
  // CLIENT PAUSE: the unix time it ends (0 = no pause), whether it pauses every command, and the
  // clients waiting for its end.
  int64_t pause_until_ms_ = 0;
  bool pause_all_ = false;
  std::vector<uint64_t> paused_;
  uv_timer_t pause_timer_;
  // CLIENT TRACKING: the keys read and the prefixes listened to; the client whose request is
  // running (its own invalidations wait for its reply: the keys, or nullopt for a flush).
  TrackingTable tracking_;
  uint64_t tracking_effort_ = 0;  // calls of limit_tracking_table() that ended over the limit
  // Keys peers' tracking clients read here, with the addresses of those peers.
  StringMap<std::set<std::string>> peer_readers_;
  uint64_t running_client_ = 0;
  std::vector<std::optional<std::string>> self_invalidations_;
  // WATCHed keys by database: the clients watching each.
  std::vector<StringMap<std::vector<uint64_t>>> watchers_;
  // Cross-node transactions (cross_transaction.cpp): the keys they lock here; the connections
  // whose request waits for a locked key (id → loop time the wait ends); the locks held for
  // coordinators elsewhere (connection id → lease); this node's own parts waiting for keys.
  KeyLocks locks_;
  std::unordered_map<uint64_t, uint64_t> lock_waits_;
  struct TxnLease {
    uint64_t until;  // loop time
    uint64_t epoch;  // the routing epoch when it locked: a RUN under another is refused
    bool expired;    // released when the lease ran out; a late RUN is refused
  };
  std::unordered_map<uint64_t, TxnLease> txn_leases_;
  struct LocalLockWait {
    uint64_t client_id;
    std::vector<std::string> keys;
    bool watches;
    uint64_t deadline;
    uint64_t wait_ms;
    std::function<void(std::string_view reply)> done;
  };
  std::vector<LocalLockWait> local_lock_waits_;
  uv_timer_t lock_timer_;
  ClientRegistry clients_;
  PubSubRegistry pubsub_{clients_};
  ShardInterests shard_interests_;
  uint64_t last_shard_refresh_ms_ = 0;
  // Keys (database, key) written since blocked clients were last served.
  std::vector<std::pair<int, std::string>> ready_keys_;
  uv_timer_t block_timer_;
  ServerStats stats_;
  engine::Observability observed_;
  uint64_t errors_written_ = 0;     // error replies ever written (never reset: failed calls)
  std::vector<uint64_t> monitors_;  // clients that ran MONITOR
  bool active_expire_ = true;       // DEBUG SET-ACTIVE-EXPIRE
  MigrateLinks migrate_links_;      // MIGRATE's connections to its targets
  int64_t start_unix_;
  uint64_t start_ms_;

  // INFO stats: commands and network bytes per second over the last cron samples.
  uint64_t last_ops_sample_ms_ = 0;
  uint64_t last_ops_sample_count_ = 0;
  uint64_t last_input_sample_ = 0;
  uint64_t last_output_sample_ = 0;
  double instantaneous_ops_ = 0;
  double instantaneous_input_kbps_ = 0;
  double instantaneous_output_kbps_ = 0;
  size_t used_memory_peak_ = 0;
  std::string run_id_;  // 40 random hex digits, new at each start (INFO run_id)
};

}  // namespace ringkv::server
