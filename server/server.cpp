// Server: listener, client registry, timers and orderly shutdown.
#include "server/server.h"

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "cluster/ring_file.h"
#include "common/glob.h"
#include "common/secret.h"
#include "engine/commands/pubsub.h"
#include "engine/commands/string_ops.h"
#include "engine/keyspace/lazy_free.h"
#include "engine/rdb/rdb_format.h"
#include "engine/types/encoding_limits.h"
#include "protocol/errors.h"
#include "server/connection.h"

namespace ringkv::server {
namespace {}  // namespace

int64_t Server::unix_now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Server::Server(conf::Config config)
    : config_(std::move(config)),
      loop_(uv_default_loop()),
      start_unix_(unix_now_ms() / 1000),
      start_ms_(uv_now(uv_default_loop())) {
  dbs_.set_now(unix_now_ms());
  run_id_ = common::random_hex(20);
  for (int db = 0; db < dbs_.count(); ++db) watch_store(db);
  watchers_.resize(static_cast<size_t>(dbs_.count()));
  apply_memory_config();
  users_.set_default_password(config_.security.requirepass);
  apply_acl_config();
  engine::rdb::set_compression(config_.persistence.rdbcompression);
  aof_.set_preamble_options([this] { return rdb_.save_options(unix_now_ms()); });
  scripts_ = std::make_unique<engine::ScriptEngine>(this);
  scripts_->set_busy_threshold_ms(config_.server.busy_reply_threshold);
  scripts_->debugger().set_idle_limit_ms(config_.server.timeout * 1000);
  // Function libraries go into snapshots (and append-only rewrites) and come back from them.
  rdb_.set_functions(
      [this] {
        std::vector<std::string> codes;
        for (const auto& [name, lib] : scripts_->functions().libraries())
          codes.push_back(lib->code);
        return codes;
      },
      [this](const std::string& code) {
        std::string error;
        return scripts_->function_load(code, false, false, error).empty() ? error : std::string();
      });
  // A node is part of a cluster when it has peers, was given its own address (a ring of one
  // that may join a cluster), or has a ring from an earlier run.
  const std::string ring_file = cluster::ring_file_path(config_.persistence.dir);
  if (!config_.cluster.peers.empty() || config_.cluster.self_given ||
      ::access(ring_file.c_str(), F_OK) == 0) {
    cluster_ = std::make_unique<cluster::Cluster>(
        loop_, config_.cluster, config_.persistence.dir,
        [this](const engine::CommandSpec& spec, std::span<const std::string_view> argv, int db,
               protocol::ReplyWriter& out) { run(Origin::part(db), spec, argv, out); });
    migration_ = std::make_unique<Migration>(*this);
    setup_shard_pubsub();
    replica_sync_ = std::make_unique<ReplicaSync>(*this);
    cluster_->replication().set_host(replica_sync_.get());
    cluster_->set_txn_host(this);
    // With replicas, the copies held of other primaries' keys are theirs to evict.
    evictor_.set_filter([this](std::string_view key) { return !replicating() || owned_(key); });
    // Only an append-only file fsynced at every write holds every write this node acknowledged.
    if (!(config_.persistence.appendonly &&
          config_.persistence.appendfsync == conf::kFsyncAlways)) {
      cluster_->check_after_restart();
    }
  }
}

Server::~Server() = default;

bool Server::listen_on(uv_tcp_t& handle, int port) {
  const auto& opts = config_.server;
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(opts.bind.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) {
    rc = uv_ip6_addr(opts.bind.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr));
  }
  if (rc != 0) {
    spdlog::error("invalid bind address {}: {}", opts.bind, uv_strerror(rc));
    return false;
  }
  uv_tcp_init(loop_, &handle);
  handle.data = this;
  rc = uv_tcp_bind(&handle, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&handle),
                   static_cast<int>(config_.server.tcp_backlog), on_connection);
  }
  if (rc != 0) {
    spdlog::error("could not listen on {}:{}: {}", opts.bind, port, uv_strerror(rc));
    uv_close(reinterpret_cast<uv_handle_t*>(&handle), nullptr);
    return false;
  }
  return true;
}

bool Server::listen_unix() {
  const std::string& path = config_.server.unixsocket;
  if (path.empty()) return true;
  // A socket file left by a node that did not exit cleanly would refuse the bind (Redis too
  // removes whatever is there).
  ::unlink(path.c_str());
  uv_pipe_init(loop_, &unix_listener_, 0);
  unix_listener_.data = this;
  int rc = uv_pipe_bind(&unix_listener_, path.c_str());
  if (rc == 0 && config_.server.unixsocketperm != 0 &&
      ::chmod(path.c_str(), static_cast<mode_t>(config_.server.unixsocketperm)) != 0) {
    rc = -errno;
  }
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&unix_listener_),
                   static_cast<int>(config_.server.tcp_backlog), on_connection);
  }
  if (rc != 0) {
    spdlog::error("could not listen on the Unix socket {}: {}", path, uv_strerror(rc));
    uv_close(reinterpret_cast<uv_handle_t*>(&unix_listener_), nullptr);
    return false;
  }
  unix_listening_ = true;
  return true;
}

void Server::close_listeners() {
  if (plain_listening_) uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
  if (tls_listening_) uv_close(reinterpret_cast<uv_handle_t*>(&tls_listener_), nullptr);
  if (unix_listening_) {
    uv_close(reinterpret_cast<uv_handle_t*>(&unix_listener_), nullptr);
    ::unlink(config_.server.unixsocket.c_str());  // as Redis: the socket file goes with it
  }
  plain_listening_ = tls_listening_ = unix_listening_ = false;
}

bool Server::listen() {
  const auto& opts = config_.server;
  if (opts.port == 0 && opts.tls_port == 0 && opts.unixsocket.empty()) {
    spdlog::error("nothing to listen on: port and tls-port are both 0, and no unixsocket");
    return false;
  }
  if (opts.tls_port != 0 || config_.tls.cluster) {
    std::string error;
    if (!load_tls(error)) {
      spdlog::error("Failed to configure TLS: {}", error);
      return false;
    }
  }
  if (opts.port != 0) {
    if (!listen_on(listener_, opts.port)) return false;
    plain_listening_ = true;
  }
  if (opts.tls_port != 0) {
    if (!listen_on(tls_listener_, opts.tls_port)) {
      close_listeners();
      return false;
    }
    tls_listening_ = true;
  }
  if (!listen_unix()) {
    close_listeners();
    return false;
  }
  return true;
}

bool Server::load_tls(std::string& error) {
  const conf::TlsOptions& t = config_.tls;
  const common::TlsSettings settings{
      t.cert_file,      t.key_file,  t.key_file_pass, t.ca_cert_file, t.ca_cert_dir,
      t.auth_clients,   t.protocols, t.ciphers,       t.ciphersuites, t.prefer_server_ciphers,
      t.session_caching};
  std::shared_ptr<common::TlsContext> context = common::TlsContext::create(settings, error);
  if (!context) return false;
  tls_context_ = std::move(context);
  return true;
}

void Server::close_stalled_handshakes(uint64_t now) {
  const auto limit = static_cast<uint64_t>(config_.tls.handshake_timeout_ms);
  clients_.for_each([&](Connection& conn) {
    if (conn.closing() || conn.tls_established() || now - conn.created_ms() <= limit) return;
    spdlog::warn("closing client addr={}: TLS handshake not finished after {} ms",
                 conn.peer_address(), limit);
    conn.close();
  });
}

int Server::serve() {
  // The data is back before the first client can see it: from the append-only file when it is
  // on (it holds the latest writes), else from the RDB file, as Redis chooses.
  if (config_.persistence.appendonly) {
    if (!aof_.load_and_open(
            [this](int db, const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                   protocol::ReplyWriter& reply) { run(Origin::replay(db), spec, argv, reply); })) {
      return 1;
    }
  } else {
    if (!rdb_.load()) return 1;
    if (cluster_ && store_.size() > 0) warn_foreign_keys();
  }
  if (!load_acl_file()) return 1;
  if (!listen()) {
    uv_run(loop_, UV_RUN_DEFAULT);
    return 1;
  }
  write_pidfile();
  // The server's own handles exist before the cluster starts: its first health check may call
  // back (a one-member ring holds its lease at once and releases held clients).
  uv_timer_init(loop_, &cron_timer_);
  cron_timer_.data = this;
  uv_timer_start(&cron_timer_, on_cron, cron_period_ms(), cron_period_ms());

  uv_timer_init(loop_, &block_timer_);
  block_timer_.data = this;
  uv_timer_init(loop_, &pause_timer_);
  pause_timer_.data = this;
  uv_timer_init(loop_, &lock_timer_);
  lock_timer_.data = this;

  input_task_ = std::make_unique<IdleTask>(loop_, [this] {
    // In the order they deferred; once this turn has run its share of input, the rest keep their
    // place at the head of the line (the first always runs, so each gets its turn).
    std::vector<uint64_t> ids;
    ids.swap(deferred_input_);
    size_t next = 0;
    for (; next < ids.size() && (next == 0 || !turn_input_spent()); ++next) {
      if (Connection* c = clients_.find(ids[next])) c->continue_input();
    }
    deferred_input_.insert(deferred_input_.begin(), ids.begin() + static_cast<std::ptrdiff_t>(next),
                           ids.end());
    return !deferred_input_.empty();
  });

  std::string mode = "standalone";
  if (cluster_) {
    mode = "cluster, " + std::to_string(cluster_->ring().size()) + " members, self " +
           cluster_->self_address() + ", hash " + cluster_->ring().scheme().name;
    cluster_->set_host(migration_.get());
    cluster_->set_peer_lost_listener(
        [this](const std::string& address) { tracking_.peer_lost(address); });
    if (config_.tls.cluster) {
      cluster_->set_tls(
          [this]() -> std::shared_ptr<const common::TlsContext> { return tls_context_; });
    }
    cluster_->start();
    load_imports();
  }
  spdlog::info("ringkv {} listening on {}:{}{} (config: {}, mode: {})", RINGKV_VERSION,
               config_.server.bind, config_.server.port,
               config_.server.tls_port != 0
                   ? ", TLS on port " + std::to_string(config_.server.tls_port)
                   : std::string(),
               config_.source_file.empty() ? "none" : config_.source_file, mode);

  // Started after the cluster's check handle, which libuv then runs after this one: replies
  // and frames queued while flushing clients go out in the same iteration.
  uv_check_init(loop_, &flush_check_);
  flush_check_.data = this;
  uv_check_start(&flush_check_, [](uv_check_t* h) {
    auto* self = static_cast<Server*>(h->data);
    self->flush_dirty();
    self->turn_input_us_ = 0;
  });

  uv_signal_init(loop_, &sigint_);
  uv_signal_init(loop_, &sigterm_);
  sigint_.data = sigterm_.data = this;
  uv_signal_start(&sigint_, on_signal, SIGINT);
  uv_signal_start(&sigterm_, on_signal, SIGTERM);

  uv_run(loop_, UV_RUN_DEFAULT);
  uv_loop_close(loop_);
  if (pidfile_written_) ::unlink(config_.server.pidfile.c_str());
  spdlog::info("ringkv is now ready to exit, bye bye");
  return 0;
}

void Server::write_pidfile() {
  // As Redis: a file that cannot be written is worth a warning, not a refusal to serve.
  const std::string& path = config_.server.pidfile;
  if (path.empty()) return;
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool written = f != nullptr && std::fprintf(f, "%d\n", static_cast<int>(::getpid())) > 0;
  if (f != nullptr && std::fclose(f) != 0) written = false;
  if (!written) spdlog::warn("Failed to write PID file {}: {}", path, std::strerror(errno));
  pidfile_written_ = written;
}

void Server::warn_foreign_keys() {
  // A file copied from a redis-server (or from another member) holds keys of other owners: they
  // load, but no client request reaches them here.
  size_t foreign = 0;
  const std::string& self = cluster_->self_address();
  store_.for_each([&](const engine::Entry& e) {
    if (cluster_->routing_ring().owner_of(e.key()) != self) foreign++;
  });
  if (foreign == 0) return;
  spdlog::warn(
      "{} of the {} keys loaded belong to other members of the ring and are not served here: "
      "to bring a whole dataset into a cluster use CLUSTER IMPORT from a redis-server (it "
      "routes each key to its owner)",
      foreign, store_.size());
}

void Server::on_connection(uv_stream_t* listener, int status) {
  auto* self = static_cast<Server*>(listener->data);
  if (status < 0) {
    spdlog::warn("accept failed: {}", uv_strerror(status));
    return;
  }
  const bool unix_socket = listener == reinterpret_cast<uv_stream_t*>(&self->unix_listener_);
  auto* conn = new Connection(*self, self->clients_.next_id(), unix_socket);
  if (listener == reinterpret_cast<uv_stream_t*>(&self->tls_listener_)) {
    conn->use_tls(self->tls_context_);
  }
  if (uv_accept(listener, conn->stream()) != 0) {
    conn->close();
    return;
  }
  self->clients_.add(conn);
  self->stats_.total_connections_received++;
  if (!conn->start()) return;
  if (self->clients_.size() > static_cast<size_t>(self->config_.server.maxclients)) {
    self->stats_.rejected_connections++;
    spdlog::warn("rejecting client {}: max number of clients reached", conn->peer_address());
    conn->reject(protocol::err::kMaxClients);
    return;
  }
  if (self->protected_from(*conn)) {
    self->stats_.rejected_connections++;
    conn->reject(protocol::err::kProtectedMode);
  }
}

bool Server::protected_from(const Connection& conn) const {
  // As Redis: with protected mode on and no password, only loopback clients are served. Peers
  // reach each other over the network, so a cluster on non-loopback addresses needs a password
  // (with a [cluster] secret) or protected-mode off.
  return config_.security.protected_mode && users_.default_user()->nopass() &&
         !conn.from_loopback();
}

bool Server::auth_required(const Connection& conn) const {
  const engine::acl::User& user = *users_.default_user();
  return (!user.nopass() || !user.enabled()) && !conn.authenticated();
}

bool Server::load_acl_file() {
  if (config_.security.aclfile.empty()) return true;
  std::vector<std::shared_ptr<engine::acl::User>> replaced;
  const std::string error = users_.load_file(config_.security.aclfile, replaced);
  if (!error.empty()) {
    spdlog::error("Aborting ringkv startup because of ACL errors: {}", error.substr(4));
    return false;
  }
  for (const auto& [name, user] : users_.all()) {
    if (!user->enabled()) {
      spdlog::info(
          "The user '{}' is disabled (there is no 'on' modifier in the user description). Make "
          "sure this is not a configuration error.",
          name);
    }
  }
  return true;
}

void Server::on_connection_closed(Connection* conn) {
  clients_.remove(conn);
  blocked_.remove(conn->id());
  tracking_closed(*conn);
  if (conn->is_peer() && !conn->peer_name().empty()) tracking_.peer_lost(conn->peer_name());
  // A snapshot's child stops with its client.
  syncs_.erase(conn->id());
  unwatch_all(*conn);
  locks_closed(conn->id());
  pubsub_.remove_client(conn->id());
  end_monitor(*conn);
  if (cluster_) cluster_->client_closed(conn->id());
  // Nulled, not erased: flush_dirty may be walking the list (a busy script runs the loop from
  // inside it).
  if (conn->flush_scheduled())
    std::replace(dirty_.begin(), dirty_.end(), conn, static_cast<Connection*>(nullptr));
  maybe_finish_shutdown();
}

void Server::defer_input(Connection& conn) {
  deferred_input_.push_back(conn.id());
  input_task_->wake();
}

void Server::discard_keyspace() {
  all_keyspaces_flushing();
  for (engine::Store* db : dbs_.all()) db->clear(false);
  const std::string_view flush[] = {"FLUSHALL"};
  feed_record(0, flush);
}

void Server::key_dropped(int db, std::string_view key) {
  key_changed(db, key, true);
  const std::string_view del[] = {"DEL", key};
  feed_record(db, del);
}

void Server::key_ready(std::string_view key) {
  if (blocked_.waited_on(events_db_, key)) ready_keys_.emplace_back(events_db_, key);
}

void Server::block_client(Connection& conn, std::span<const std::string_view> argv,
                          engine::BlockRequest request) {
  uint64_t deadline =
      request.timeout_ms > 0 ? uv_now(loop_) + static_cast<uint64_t>(request.timeout_ms) : 0;
  std::vector<std::string> rerun = request.rerun_argv.empty()
                                       ? std::vector<std::string>(argv.begin(), argv.end())
                                       : std::move(request.rerun_argv);
  blocked_.add(conn.id(),
               BlockedClients::Waiter{std::move(rerun), std::move(request.keys), deadline,
                                      conn.resp() == protocol::RespVersion::kResp3,
                                      request.independent, conn.db()});
  conn.block();
  arm_block_timer();
}

void Server::serve_ready_keys() {
  // Serving a client may make more keys ready (BLMOVE pushes into its destination).
  while (!ready_keys_.empty()) {
    std::vector<std::pair<int, std::string>> keys;
    keys.swap(ready_keys_);
    for (const auto& [db, key] : keys) {
      for (uint64_t id : blocked_.waiters(db, key)) {
        Connection* conn = clients_.find(id);
        if (conn == nullptr) {
          blocked_.remove(id);
          continue;
        }
        // The first client that cannot be served means the key has nothing left, unless the
        // waiters are independent of each other (stream readers).
        const BlockedClients::Waiter* waiter = blocked_.find(id);
        const bool independent = waiter != nullptr && waiter->independent;
        if (!rerun_blocked(*conn, false, key) && !independent) break;
      }
    }
  }
}

bool Server::rerun_blocked(Connection& conn, bool timed_out, std::string_view ready_key) {
  const BlockedClients::Waiter* waiter = blocked_.find(conn.id());
  if (waiter == nullptr) return true;
  const std::vector<std::string> args = waiter->argv;
  const std::vector<std::string_view> argv(args.begin(), args.end());
  protocol::ReplyWriter& writer = conn.late_reply_writer();
  const protocol::RespVersion version = writer.version();
  if (waiter->resp3) writer.set_version(protocol::RespVersion::kResp3);
  const Outcome outcome = run(Origin::blocked_retry(conn, timed_out, ready_key), argv, writer);
  writer.set_version(version);
  if (outcome == Outcome::kWaiting) return false;
  blocked_.remove(conn.id());
  conn.unblock();
  arm_block_timer();
  return true;
}

void Server::reroute_blocked() {
  if (!cluster_) return;
  for (uint64_t id : blocked_.ids()) {
    Connection* conn = clients_.find(id);
    const BlockedClients::Waiter* w = blocked_.find(id);
    // A peer's relayed request is sent again by that peer, which knows its client.
    if (conn == nullptr || conn->is_peer() || w == nullptr || w->argv.empty()) continue;
    const engine::CommandSpec* spec = engine::find_command(w->argv[0]);
    if (spec == nullptr) continue;
    const std::vector<std::string> args = w->argv;
    std::vector<std::string_view> argv(args.begin(), args.end());
    if (cluster_->router().route(*spec, argv).kind == cluster::RouteKind::kLocal) continue;
    blocked_.remove(id);
    run(Origin::client(*conn), *spec, argv, conn->reply_writer());
  }
  arm_block_timer();
}

void Server::arm_block_timer() {
  uint64_t next = blocked_.next_deadline();
  if (next == 0) {
    uv_timer_stop(&block_timer_);
    return;
  }
  uint64_t now = uv_now(loop_);
  uv_timer_start(
      &block_timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<Server*>(t->data);
        // Not in the middle of a busy script (armed again when it ends).
        if (self->script_busy_) return;
        for (uint64_t id : self->blocked_.expired(uv_now(self->loop_))) {
          Connection* conn = self->clients_.find(id);
          if (conn == nullptr) {
            self->blocked_.remove(id);
          } else {
            self->rerun_blocked(*conn, true);
          }
        }
        if (!self->ready_keys_.empty()) self->serve_ready_keys();
        self->arm_block_timer();
      },
      next > now ? next - now : 0, 0);
}

void Server::trim_freed_memory() {
  // Large reply buffers (a client reading big values slowly holds up to 64 MB of them) are
  // freed in chunks of a few MB. Once glibc has freed one such mapping it raises its mmap
  // threshold and serves later ones from the heap, whose freed holes it keeps: after a burst
  // the node's RSS stayed megabytes above where it was. Handing free heap pages back once a
  // burst is over keeps RSS following what is in use, as Redis's allocator does with its decay.
  constexpr size_t kTrimAfterBytes = 8 * 1024 * 1024;
  if (released_output_bytes_ < kTrimAfterBytes) return;
  released_output_bytes_ = 0;
  malloc_trim(0);
}

void Server::on_cron(uv_timer_t* timer) { static_cast<Server*>(timer->data)->cron(); }

void Server::cron() {
  if (shutdown_wait_) {
    check_shutdown_wait();
    // The wait ended in the shutdown: nothing more of the cron runs (the files are closed).
    if (shutting_down_) return;
  }
  // A busy script runs the loop for other clients' sake only: no expiry or rehash under it.
  if (script_busy_) return;
  // Clients whose requests waited request-timeout for the lease or a ring switch are answered.
  if (migration_)
    migration_->wake_expired(static_cast<uint64_t>(config_.cluster.request_timeout_ms));
  uint64_t now = uv_now(loop_);
  dbs_.set_now(unix_now_ms());
  limit_tracking_table();
  if (cluster_) {
    for (const std::string& key : tracking_.orphans(
             cluster_->routing_ring(), cluster_->routing_epoch(), cluster_->self_address())) {
      invalidate_readers(key);
    }
  }
  // Like Redis: active expiry may use up to 25% of each cron period, shared by the databases
  // (taken in turn from where the last cycle stopped).
  int64_t period_us = 1000000 / std::max<int64_t>(1, config_.server.hz);
  // As Redis, no key expires actively while clients are paused.
  if (active_expire_ && !clients_paused()) {
    const uint64_t start_us = unix_now_us();
    const int64_t budget_us = period_us / 4;
    engine::Store::ExpireCycle all;
    for (int i = 0; i < dbs_.count(); ++i) {
      const int db = static_cast<int>(expire_db_++ % static_cast<uint32_t>(dbs_.count()));
      const auto spent = static_cast<int64_t>(unix_now_us() - start_us);
      if (spent >= budget_us) {
        all.time_cap = true;
        break;
      }
      events_db_ = db;
      const engine::Store::ExpireCycle cycle = dbs_[db].active_expire_cycle(budget_us - spent);
      all.expired += cycle.expired;
      all.sampled += cycle.sampled;
      if (cycle.time_cap) {
        all.time_cap = true;
        break;
      }
    }
    events_db_ = 0;
    // Redis's running estimates: the stale share weighs each cycle 5%.
    const double stale =
        all.sampled > 0 ? static_cast<double>(all.expired) / static_cast<double>(all.sampled) : 0.0;
    stats_.expired_stale_perc = stale * 0.05 + stats_.expired_stale_perc * 0.95;
    if (all.time_cap) stats_.expired_time_cap_reached_count++;
    const uint64_t end_us = unix_now_us();
    observed_.latency.add_if_needed(
        "expire-cycle", static_cast<int64_t>((end_us - std::min(start_us, end_us)) / 1000),
        config_.log.latency_monitor_threshold, static_cast<int64_t>(end_us / 1000000));
  }
  migrate_links_.close_idle(static_cast<int64_t>(now));
  if (!debug_sessions_.empty()) reap_debug_sessions(false);
  if (!ready_keys_.empty()) serve_ready_keys();
  if (cluster_ && now - last_shard_refresh_ms_ >= ShardInterests::kRefreshMs) {
    last_shard_refresh_ms_ = now;
    refresh_shard_interests();
  }
  for (engine::Store* db : dbs_.all()) db->rehash_step(1000);
  aof_.cron(now);
  if (tls_listening_) close_stalled_handshakes(now);
  aof_.cron(now, rdb_.bgsave_in_progress());
  rdb_.set_changes(changes_);
  rdb_.cron(now, unix_now_ms(), aof_.rewrite_in_progress());
  trim_freed_memory();
  import_cron(now);

  if (config_.server.timeout > 0) {
    uint64_t limit_ms = static_cast<uint64_t>(config_.server.timeout) * 1000;
    // Closing takes effect in the close callback, so the registry does not change meanwhile.
    clients_.for_each([&](Connection& conn) {
      // As Redis, the idle timeout spares clients that wait by design: relay links from peers
      // (like replication links), clients blocked in a command (they have their own timeout)
      // and subscribers.
      if (conn.closing() || conn.is_peer() || conn.blocked() ||
          pubsub_.total_subscriptions(conn.id()) > 0) {
        return;
      }
      if (now - conn.last_interaction_ms() > limit_ms) {
        spdlog::warn("closing idle client id={} addr={} after {} s", conn.id(), conn.peer_address(),
                     config_.server.timeout);
        conn.close();
      }
    });
  }

  used_memory_peak_ = std::max(used_memory_peak_, dbs_.used_memory());
  if (now - last_ops_sample_ms_ >= 1000) {
    const double seconds = static_cast<double>(now - last_ops_sample_ms_) / 1000.0;
    auto rate = [&](uint64_t total, uint64_t last) {
      return last_ops_sample_ms_ == 0 ? 0.0 : static_cast<double>(total - last) / seconds;
    };
    instantaneous_ops_ = rate(stats_.total_commands_processed, last_ops_sample_count_);
    instantaneous_input_kbps_ = rate(stats_.total_net_input_bytes, last_input_sample_) / 1024;
    instantaneous_output_kbps_ = rate(stats_.total_net_output_bytes, last_output_sample_) / 1024;
    last_ops_sample_ms_ = now;
    last_ops_sample_count_ = stats_.total_commands_processed;
    last_input_sample_ = stats_.total_net_input_bytes;
    last_output_sample_ = stats_.total_net_output_bytes;
  }
}

void Server::config_get(std::string_view pattern,
                        std::vector<std::pair<std::string, std::string>>& out) {
  // An exact name is echoed as the client spelled it, as Redis does.
  if (pattern.find_first_of("*?[\\") == std::string_view::npos) {
    if (const conf::Parameter* p = conf::find_parameter(pattern)) {
      out.emplace_back(pattern, p->get(config_));
    }
    return;
  }
  for (const auto& p : conf::parameters()) {
    if (common::glob_match(pattern, p.name, true)) out.emplace_back(p.name, p.get(config_));
  }
}

std::string Server::config_set(
    std::span<const std::pair<std::string_view, std::string_view>> pairs) {
  const bool appendonly = config_.persistence.appendonly;
  const conf::TlsOptions tls = config_.tls;
  std::string err = conf::set_parameters(config_, pairs);
  if (!err.empty()) return err;
  // New certificates or settings apply to new connections and links, without a restart.
  for (const auto& [name, value] : pairs) {
    if (!engine::equals_ignore_case(name.substr(0, std::min<size_t>(name.size(), 4)), "tls-") ||
        (!tls_listening_ && !config_.tls.cluster)) {
      continue;
    }
    std::string error;
    if (!load_tls(error)) {
      spdlog::warn("Failed to update TLS configuration: {}", error);
      config_.tls = tls;
      return "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) +
             "') - Unable to update TLS configuration. Check server logs.";
    }
    break;
  }
  // As Redis: requirepass sets the default user's password, whatever ACL SETUSER gave it.
  if (std::any_of(pairs.begin(), pairs.end(), [](const auto& p) {
        return engine::equals_ignore_case(p.first, "requirepass");
      })) {
    users_.set_default_password(config_.security.requirepass);
  }
  users_.trim_log(static_cast<size_t>(config_.security.acllog_max_len));
  apply_runtime_config();
  std::string aof_error = aof_.apply_options(uv_now(loop_));
  if (!aof_error.empty()) {
    config_.persistence.appendonly = appendonly;
    return "ERR CONFIG SET failed (possibly related to argument 'appendonly') - " + aof_error;
  }
  return {};
}

std::string Server::config_rewrite() {
  if (config_.source_file.empty()) return "ERR The server is running without a config file";
  conf::Config written = config_;
  // A self address derived from bind:port stays derived: written out, it would make a
  // standalone node a ring of one at its next start.
  if (!written.cluster.self_given) written.cluster.self.clear();
  std::string error = conf::rewrite_file(written, config_.source_file);
  if (error.empty()) {
    spdlog::info("CONFIG REWRITE executed with success.");
  } else {
    spdlog::warn("CONFIG REWRITE failed: {}", error);
  }
  return error;
}

void Server::apply_runtime_config() {
  spdlog::set_level(spdlog::level::from_str(config_.log.level));
  engine::rdb::set_compression(config_.persistence.rdbcompression);
  apply_memory_config();
  apply_acl_config();
  if (cluster_) {
    cluster_->replication().set_backlog_bytes(
        static_cast<size_t>(config_.cluster.repl_backlog_size));
  }
  scripts_->set_busy_threshold_ms(config_.server.busy_reply_threshold);
  scripts_->debugger().set_idle_limit_ms(config_.server.timeout * 1000);
  clients_.for_each([](Connection& conn) { conn.apply_limits(); });
  // hz: the cron runs at the new rate from now on (Redis's next serverCron is due 1000/hz ms
  // after the last).
  if (const uint64_t period = cron_period_ms(); uv_timer_get_repeat(&cron_timer_) != period) {
    uv_timer_start(&cron_timer_, on_cron, period, period);
  }
}

void Server::apply_acl_config() {
  engine::acl::pubsub_default_all() = config_.security.acl_pubsub_default == "allchannels";
}

void Server::apply_memory_config() {
  const conf::MemoryOptions& opts = config_.memory;
  engine::EncodingLimits& limits = engine::encoding_limits();
  limits.hash_max_listpack_entries = static_cast<size_t>(opts.hash_max_listpack_entries);
  limits.hash_max_listpack_value = static_cast<size_t>(opts.hash_max_listpack_value);
  limits.zset_max_listpack_entries = static_cast<size_t>(opts.zset_max_listpack_entries);
  limits.zset_max_listpack_value = static_cast<size_t>(opts.zset_max_listpack_value);
  limits.set_max_intset_entries = static_cast<size_t>(opts.set_max_intset_entries);
  limits.list_max_listpack_size = static_cast<int>(opts.list_max_listpack_size);
  limits.list_compress_depth = static_cast<int>(opts.list_compress_depth);
  limits.hll_sparse_max_bytes = static_cast<size_t>(opts.hll_sparse_max_bytes);
  limits.stream_node_max_bytes = static_cast<size_t>(opts.stream_node_max_bytes);
  limits.stream_node_max_entries = opts.stream_node_max_entries;
  engine::lazy_free_settings() = {opts.lazyfree_lazy_user_del, opts.lazyfree_lazy_user_flush,
                                  opts.lazyfree_lazy_server_del, opts.lazyfree_lazy_expire,
                                  opts.lazyfree_lazy_eviction};
  const engine::EvictionPolicy policy = engine::parse_eviction_policy(opts.maxmemory_policy)
                                            .value_or(engine::EvictionPolicy::kNoEviction);
  // Pooled candidates were scored under the old policy.
  if (policy != eviction_limits_.policy) evictor_.reset();
  eviction_limits_ = engine::EvictionLimits{static_cast<size_t>(opts.maxmemory), policy,
                                            static_cast<size_t>(opts.maxmemory_samples)};
  const bool lru_or_lfu = policy == engine::EvictionPolicy::kAllKeysLru ||
                          policy == engine::EvictionPolicy::kVolatileLru || engine::is_lfu(policy);
  dbs_.set_access_policy(engine::AccessPolicy{engine::is_lfu(policy), opts.lfu_log_factor,
                                              opts.lfu_decay_time,
                                              opts.maxmemory == 0 || !lru_or_lfu});
}

void Server::config_resetstat() {
  stats_ = ServerStats{};
  dbs_.reset_stats();
  // The instantaneous rates start again too (as Redis's): the next sample only takes the
  // counters' values (a rate across the reset would be a wrapped difference).
  instantaneous_ops_ = instantaneous_input_kbps_ = instantaneous_output_kbps_ = 0;
  last_ops_sample_ms_ = 0;
  // As Redis: command and error statistics and the memory peak go too; the slow log and
  // latency samples stay.
  observed_.commands.reset();
  observed_.errors.reset();
  used_memory_peak_ = dbs_.used_memory();
}

}  // namespace ringkv::server
