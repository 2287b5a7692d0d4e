// Option structs of every module, with their defaults. conf/ fills them from a TOML file and
// command-line flags (see config.h); the modules only read them. The parameter table in
// params.cpp names, describes and validates each field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ringkv::conf {

// One class of Redis's client-output-buffer-limit: a client whose unsent output reaches `hard`
// bytes, or stays at or over `soft` bytes for more than `soft_seconds`, is disconnected.
// 0 turns a limit off.
struct OutputBufferLimit {
  int64_t hard = 0;
  int64_t soft = 0;
  int64_t soft_seconds = 0;

  bool operator==(const OutputBufferLimit&) const = default;
};

// The listener and per-client limits (Redis's own parameter names in TOML and CONFIG).
struct ServerOptions {
  std::string bind = "127.0.0.1";  // IP address the listener binds to
  int port = 7379;                 // TCP port for plain-text clients (0 = none)
  int tls_port = 0;                // TCP port for TLS clients (0 = none)
  int64_t maxclients = 10000;      // clients accepted at once
  int64_t timeout = 0;             // idle client timeout in seconds, 0 = never
  int64_t tcp_keepalive = 300;     // seconds a client's connection idles before keepalive probes
  int64_t tcp_backlog = 511;       // connections the listener queues before they are accepted
  // Keys CLIENT TRACKING remembers readers of; past it, keys are invalidated (0 = no limit).
  int64_t tracking_table_max_keys = 1000000;
  std::string pidfile;  // file the server writes its process id to ("" = none)
  // What SIGTERM and SIGINT do: "default" (shut down as SHUTDOWN does: save when save rules are
  // set, stay up when that fails) or SHUTDOWN's flags among save/nosave, now, force.
  std::string shutdown_on_sigterm = "default";
  int64_t shutdown_timeout = 10;
  std::string shutdown_on_sigint = "default";
  std::string unixsocket;      // path of a Unix domain socket clients may connect to ("" = none)
  int64_t unixsocketperm = 0;  // that socket file's permission bits (0 = as the umask leaves them)
  int64_t proto_max_bulk_len = 512 * 1024 * 1024;  // longest bulk string a client may send (bytes)
  int64_t hz = 10;                                 // background task frequency (1-500 per second)
  int64_t databases = 16;                          // numbered databases clients SELECT
  int64_t busy_reply_threshold = 5000;  // ms a script runs before others get -BUSY (0 = never)
  int64_t client_query_buffer_limit = 1024 * 1024 * 1024;  // unparsed input one client may send
  int notify_keyspace_events = 0;  // notify-keyspace-events classes (common/keyspace_events.h)
  // client-output-buffer-limit, per class of client (Redis's defaults).
  OutputBufferLimit output_limit_normal;
  OutputBufferLimit output_limit_replica{256 * 1024 * 1024, 64 * 1024 * 1024, 60};
  OutputBufferLimit output_limit_pubsub{32 * 1024 * 1024, 8 * 1024 * 1024, 60};
};

// One other node of the cluster.
struct PeerOptions {
  std::string addr;    // "host:port" the peer serves clients on
  int64_t weight = 1;  // share of the ring relative to a weight-1 node

  bool operator==(const PeerOptions&) const = default;
};

// Names accepted by ClusterOptions::hash.
inline constexpr const char* kHashCrc32 = "crc32";
inline constexpr const char* kHashBalanced = "balanced";

// Names accepted by ClusterOptions::on_peer_down.
inline constexpr const char* kPeerDownFail = "fail";
inline constexpr const char* kPeerDownEject = "eject";

// The consistent-hash cluster this node belongs to. No peers means a standalone node.
struct ClusterOptions {
  std::string self;                          // this node's "host:port" on the ring; "" = bind:port
  std::vector<PeerOptions> peers;            // the other nodes of the cluster
  int64_t replicas = 100;                    // virtual nodes per unit of weight on the ring
  std::string hash = kHashBalanced;          // ring hash function: "balanced" or "crc32"
  int64_t pool_size = 2;                     // connections kept open to each peer
  int64_t connect_timeout_ms = 1000;         // give up connecting to a peer after this long
  int64_t request_timeout_ms = 5000;         // fail a relayed request not answered within this long
  int64_t health_interval_ms = 1000;         // ping every peer this often
  int64_t failure_limit = 3;                 // consecutive failed pings that mark a peer down
  std::string on_peer_down = kPeerDownFail;  // "fail" its keys, or "eject" it from the ring
  std::string secret;  // shared by every node; peers prove it when they link; "" = none
  // Copies of each key: its owner (the primary) and the next distinct members clockwise (its
  // replicas). 1 = no replication. From 2 on, a member a majority sees down is failed over.
  int64_t replication_factor = 1;
  int64_t replica_acks = 0;                 // replicas that must have a write before its reply
  int64_t repl_backlog_size = 1024 * 1024;  // bytes kept per replica for a partial resync
  int64_t repl_batch_ms = 0;                // how long frames nothing waits for may queue
  // Writes are refused (-NOREPLICAS) while fewer of their keys' replicas than this are online
  // with a lag of at most min_replicas_max_lag seconds (0 in either: no check), as in Redis.
  int64_t min_replicas_to_write = 0;
  int64_t min_replicas_max_lag = 10;
  // A member whose vote counts twice while the members are even in number, so that one half of
  // an even split (one of two members) is a majority: failover without a third member. The same
  // on every member. "" = none.
  std::string tie_breaker;
  // MGET, MSET, DEL, UNLINK, EXISTS and TOUCH over several owners run as one cross-node
  // transaction (isolated) instead of independent parts; MSETNX, RENAME, RENAMENX and COPY over
  // several owners then work too instead of answering CROSSSLOT.
  bool atomic_multikey = false;
  // Derived: `self` was configured (a node with a self and no peers is a one-member ring that
  // may join a cluster); false when it defaulted to bind:port.
  bool self_given = false;
};

// Names accepted by PersistenceOptions::appendfsync.
inline constexpr const char* kFsyncAlways = "always";
inline constexpr const char* kFsyncEverysec = "everysec";
inline constexpr const char* kFsyncNo = "no";

// The append-only file and RDB snapshots (Redis's parameter names).
struct PersistenceOptions {
  bool appendonly = false;                   // log every write and replay the log at start-up
  std::string appendfsync = kFsyncEverysec;  // always, everysec or no
  std::string dir = ".";                     // directory of the append-only file
  std::string appendfilename = "appendonly.aof";
  int64_t auto_aof_rewrite_percentage = 100;             // rewrite when grown by this % (0 = off)
  int64_t auto_aof_rewrite_min_size = 64 * 1024 * 1024;  // ... and at least this big (bytes)
  bool aof_load_truncated = true;    // start with a truncated last record dropped (else refuse)
  bool aof_use_rdb_preamble = true;  // a rewrite writes the data as an RDB, then commands follow
  std::string save;                  // snapshot rules: "seconds changes ..." pairs; "" = none
  bool stop_writes_on_bgsave_error = true;  // with save rules, a failed BGSAVE refuses writes
  std::string dbfilename = "dump.rdb";      // the RDB file inside dir
  bool rdbcompression = true;               // LZF-compress strings over 20 bytes in RDB and DUMP
  bool rdbchecksum = true;                  // end RDB files with a CRC64 (else 8 zero bytes)
};

// Parses a `save` value ("3600 1 300 100", or "" for none) into (seconds, changes) pairs, as
// Redis reads it: non-negative integers separated by single spaces, an even count. False when
// it is not that.
bool parse_save_rules(std::string_view text, std::vector<std::pair<int64_t, int64_t>>& rules);

// Who may use the node and which commands exist.
struct SecurityOptions {
  std::string requirepass;       // the default user's password; "" = none (nopass)
  bool protected_mode = true;    // without a password, refuse non-loopback clients
  std::string aclfile;           // ACL users file for ACL LOAD/SAVE, loaded at start; "" = none
  int64_t acllog_max_len = 128;  // entries the ACL LOG keeps
  // The channels a new user (or selector, or a user's reset) starts with: "resetchannels" (none)
  // or "allchannels".
  std::string acl_pubsub_default = "resetchannels";
  // rename-command: original name → new name ("" disables the command).
  std::vector<std::pair<std::string, std::string>> rename_command;
  // Who may run DEBUG: "no" (nobody, Redis 7.0's default), "yes", or "local" (loopback clients).
  std::string enable_debug_command = "no";
};

// TLS for clients (tls-port) and, with `cluster`, for peer links (Redis's tls-* parameters).
struct TlsOptions {
  std::string cert_file;             // this node's certificate (PEM), for clients and peers
  std::string key_file;              // its private key (PEM)
  std::string key_file_pass;         // the key's passphrase, when it is encrypted
  std::string ca_cert_file;          // CA certificates that sign clients' and peers' certificates
  std::string ca_cert_dir;           // the same as an OpenSSL hashed directory
  std::string auth_clients = "yes";  // client certificates: yes (required), optional or no
  std::string protocols;             // "TLSv1.2 TLSv1.3" when empty
  std::string ciphers;               // TLSv1.2 cipher list; "" = OpenSSL's default
  std::string ciphersuites;          // TLSv1.3 cipher suites; "" = OpenSSL's default
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  bool cluster = false;                  // peer links over TLS, both sides checking certificates
  int64_t handshake_timeout_ms = 10000;  // close a TLS connection not set up within this long
};

// Names accepted by MemoryOptions::maxmemory_policy, in Redis's order.
inline constexpr const char* kPolicyVolatileLru = "volatile-lru";
inline constexpr const char* kPolicyVolatileLfu = "volatile-lfu";
inline constexpr const char* kPolicyVolatileRandom = "volatile-random";
inline constexpr const char* kPolicyVolatileTtl = "volatile-ttl";
inline constexpr const char* kPolicyAllKeysLru = "allkeys-lru";
inline constexpr const char* kPolicyAllKeysLfu = "allkeys-lfu";
inline constexpr const char* kPolicyAllKeysRandom = "allkeys-random";
inline constexpr const char* kPolicyNoEviction = "noeviction";

// The memory limit and what happens at it.
struct MemoryOptions {
  int64_t maxmemory = 0;  // bytes of data before writes evict or fail; 0 = none
  std::string maxmemory_policy = kPolicyNoEviction;  // which keys go when over maxmemory
  int64_t maxmemory_samples = 5;                     // keys sampled per eviction
  int64_t lfu_log_factor = 10;  // LFU counter: higher = more accesses per increment
  int64_t lfu_decay_time = 1;   // LFU counter: minutes per decrement (0 = never decays)
  // Compact encodings: the sizes up to which hashes and sorted sets stay listpacks and sets of
  // integers stay intsets (Redis 7.0.15's defaults).
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  // Lists: a node's size (negative: -1..-5 = 4..64 KB of listpack) or entry count (positive),
  // and how many nodes at each end stay uncompressed (0 = no compression).
  int64_t list_max_listpack_size = -2;
  int64_t list_compress_depth = 0;
  // A HyperLogLog's sparse form turns dense past this many bytes; a stream node takes no more
  // entries past these bytes (0: 1 GB) or entries (0: no limit).
  int64_t hll_sparse_max_bytes = 3000;
  // Deletions that free big values in the background, as UNLINK does (Redis's lazyfree-lazy-*).
  bool lazyfree_lazy_user_del = false;    // DEL
  bool lazyfree_lazy_user_flush = false;  // FLUSHALL / FLUSHDB without SYNC or ASYNC
  bool lazyfree_lazy_server_del = false;  // values a write replaces (SET over a key, RENAME...)
  bool lazyfree_lazy_expire = false;      // keys whose TTL passed
  bool lazyfree_lazy_eviction = false;    // keys maxmemory evicts
  int64_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
};

// Logging through spdlog, and the logs and measurements of commands (Redis's names).
struct LogOptions {
  std::string level = "info";  // least severe level written: trace, debug, info, warn, error
  std::string file;            // log file path; "" = stderr
  int64_t slowlog_log_slower_than = 10000;  // µs a command runs to enter the slow log (<0: none)
  int64_t slowlog_max_len = 128;            // slow log entries kept
  int64_t latency_monitor_threshold = 0;    // ms an event takes to be sampled (0 = off)
  bool latency_tracking = true;             // per-command latency histograms (latencystats)
  // The percentiles INFO latencystats reports.
  std::vector<double> latency_tracking_info_percentiles{50.0, 99.0, 99.9};
};

// The whole configuration of one ringkv-server process.
struct Config {
  ServerOptions server;
  ClusterOptions cluster;
  PersistenceOptions persistence;
  SecurityOptions security;
  TlsOptions tls;
  MemoryOptions memory;
  LogOptions log;
  std::string source_file;  // path of the TOML file it was loaded from; "" = defaults only
};

}  // namespace ringkv::conf
