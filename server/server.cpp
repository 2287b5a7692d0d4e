// Server: listener, client registry, timers and orderly shutdown.
#include "server/server.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/glob.h"
#include "engine/commands/pubsub.h"
#include "engine/commands/string_ops.h"
#include "protocol/errors.h"
#include "server/connection.h"

namespace ringkv::server {
namespace {

int64_t unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Time the shutdown waits for clients to take their last replies before closing them anyway.
constexpr uint64_t kShutdownGraceMs = 5000;

}  // namespace

Server::Server(conf::Config config)
    : config_(std::move(config)),
      loop_(uv_default_loop()),
      start_unix_(unix_ms() / 1000),
      start_ms_(uv_now(uv_default_loop())) {
  store_.set_now(unix_ms());
  // WATCH treats a key deleted by expiry or eviction as changed; the append-only file logs a DEL.
  store_.set_expiry_listener([this](std::string_view key) { key_dropped(key); });
  store_.set_eviction_listener([this](std::string_view key) { key_dropped(key); });
  apply_memory_config();
  if (!config_.cluster.peers.empty()) {
    cluster_ = std::make_unique<cluster::Cluster>(
        loop_, config_.cluster,
        [this](std::span<const std::string_view> argv, protocol::ReplyWriter& out) {
          std::string error;
          const engine::CommandSpec* spec = engine::resolve_command(argv, error);
          if (spec == nullptr) {
            out.error(error);
          } else {
            run_local(*spec, argv, out, nullptr);
          }
        });
  }
}

Server::~Server() = default;

bool Server::listen() {
  const auto& opts = config_.server;
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(opts.bind.c_str(), opts.port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) {
    rc = uv_ip6_addr(opts.bind.c_str(), opts.port, reinterpret_cast<sockaddr_in6*>(&addr));
  }
  if (rc != 0) {
    spdlog::error("invalid bind address {}: {}", opts.bind, uv_strerror(rc));
    return false;
  }
  uv_tcp_init(loop_, &listener_);
  listener_.data = this;
  rc = uv_tcp_bind(&listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 511, on_connection);
  if (rc != 0) {
    spdlog::error("could not listen on {}:{}: {}", opts.bind, opts.port, uv_strerror(rc));
    uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
    return false;
  }
  return true;
}

int Server::run() {
  // The data is back before the first client can see it.
  if (!aof_.load_and_open()) return 1;
  if (!listen()) {
    uv_run(loop_, UV_RUN_DEFAULT);
    return 1;
  }
  std::string mode = "standalone";
  if (cluster_) {
    mode = "cluster, " + std::to_string(cluster_->ring().size()) + " members, self " +
           cluster_->self_address() + ", hash " + cluster_->ring().scheme().name;
    cluster_->start();
  }
  spdlog::info("ringkv {} listening on {}:{} (config: {}, mode: {})", RINGKV_VERSION,
               config_.server.bind, config_.server.port,
               config_.source_file.empty() ? "none" : config_.source_file, mode);

  uv_timer_init(loop_, &cron_timer_);
  cron_timer_.data = this;
  uint64_t period = 1000 / static_cast<uint64_t>(std::max<int64_t>(1, config_.server.hz));
  uv_timer_start(&cron_timer_, on_cron, period, period);

  uv_timer_init(loop_, &block_timer_);
  block_timer_.data = this;

  uv_check_init(loop_, &flush_check_);
  flush_check_.data = this;
  uv_check_start(&flush_check_, [](uv_check_t* h) {
    auto* self = static_cast<Server*>(h->data);
    // One write (and fsync) for every record of this iteration, before any of their replies.
    self->write_aof();
    for (Connection* c : self->dirty_) c->scheduled_flush();
    self->dirty_.clear();
  });

  uv_signal_init(loop_, &sigint_);
  uv_signal_init(loop_, &sigterm_);
  sigint_.data = sigterm_.data = this;
  uv_signal_start(&sigint_, on_signal, SIGINT);
  uv_signal_start(&sigterm_, on_signal, SIGTERM);

  uv_run(loop_, UV_RUN_DEFAULT);
  uv_loop_close(loop_);
  spdlog::info("ringkv is now ready to exit, bye bye");
  return 0;
}

void Server::on_connection(uv_stream_t* listener, int status) {
  auto* self = static_cast<Server*>(listener->data);
  if (status < 0) {
    spdlog::warn("accept failed: {}", uv_strerror(status));
    return;
  }
  auto* conn = new Connection(*self, self->next_client_id_++);
  if (uv_accept(listener, conn->stream()) != 0) {
    conn->close();
    return;
  }
  self->clients_.emplace(conn->id(), conn);
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
  return config_.security.protected_mode && config_.security.requirepass.empty() &&
         !conn.from_loopback();
}

void Server::on_connection_closed(Connection* conn) {
  clients_.erase(conn->id());
  blocked_.remove(conn->id());
  unwatch_all(*conn);
  pubsub_.remove_client(conn->id());
  if (cluster_) cluster_->client_closed(conn->id());
  if (conn->flush_scheduled()) std::erase(dirty_, conn);
  maybe_finish_shutdown();
}

void Server::execute(Connection& conn, std::span<const std::string_view> argv,
                     protocol::ReplyWriter& writer) {
  stats_.total_commands_processed++;
  if (conn.is_peer()) {
    execute_for_peer(conn, argv, writer);
    return;
  }
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_client_command(argv, error);
  if (spec == nullptr) {
    if (cluster_ && (engine::equals_ignore_case(argv[0], cluster::kPeerHandshake) ||
                     engine::equals_ignore_case(argv[0], cluster::kPeerChallenge))) {
      peer_handshake(conn, argv, writer);
      return;
    }
    refuse_command(conn, error, writer);
    return;
  }
  // As Redis, unknown commands and wrong arities are reported before NOAUTH.
  if (!conn.authenticated() && !config_.security.requirepass.empty() &&
      (spec->flags & engine::kNoAuth) == 0) {
    refuse_command(conn, protocol::err::kNoAuth, writer, spec);
    return;
  }
  // A renamed command goes on under its table name: relayed, queued in MULTI or blocked, it is
  // resolved again without the client's names.
  std::vector<std::string_view> renamed;
  if (std::string_view original = engine::original_command_name(argv[0]); !original.empty()) {
    renamed.assign(argv.begin(), argv.end());
    renamed[0] = original;
    argv = renamed;
  }
  conn.set_last_command(spec);
  if (answer_in_pubsub_context(conn, *spec, argv, writer)) return;
  if (cluster_ && transaction_in_cluster(conn, *spec, argv, writer)) return;
  if (queue_in_transaction(conn, *spec, argv, writer)) return;
  if (cluster_) {
    cluster::Route route = cluster_->router().route(*spec, argv);
    switch (route.kind) {
      case cluster::RouteKind::kLocal:
        break;
      case cluster::RouteKind::kCrossSlot:
        writer.error(cluster::kCrossSlotError);
        stats_.total_error_replies++;
        return;
      default: {
        Connection::ReplySlot slot = conn.reserve_reply();
        store_.set_now(unix_ms());
        // A blocking command blocks its client here too: later requests wait for its answer,
        // as they would on the node that holds the key.
        const bool blocking = (spec->flags & engine::kBlocking) != 0;
        if (blocking) conn.block();
        cluster_->execute(route, *spec, argv, conn.id(), writer.version(),
                          [slot, blocking](std::string_view reply) { slot.fill(reply, blocking); });
        return;
      }
    }
  }
  run_local(*spec, argv, writer, &conn);
}

void Server::refuse_command(Connection& conn, std::string_view error, protocol::ReplyWriter& writer,
                            const engine::CommandSpec* spec) {
  static const engine::CommandSpec* const kExec = engine::find_command("exec");
  stats_.total_error_replies++;
  if (spec == kExec) {
    // As Redis: a refused EXEC discards the transaction and says why.
    conn.transaction().end();
    unwatch_all(conn);
    writer.error("EXECABORT Transaction discarded because of: " + std::string(error));
    return;
  }
  writer.error(error);
  transaction_refused(conn);
}

void Server::peer_handshake(Connection& conn, std::span<const std::string_view> argv,
                            protocol::ReplyWriter& writer) {
  const bool may_run = conn.authenticated() || config_.security.requirepass.empty();
  cluster::PeerVerdict verdict = engine::equals_ignore_case(argv[0], cluster::kPeerChallenge)
                                     ? cluster_->challenge_peer(conn.id(), argv.subspan(1))
                                     : cluster_->accept_peer(conn.id(), argv.subspan(1), may_run);
  writer.raw(verdict.reply);
  if (verdict.outcome == cluster::PeerVerdict::kChallenged) return;
  if (verdict.outcome == cluster::PeerVerdict::kAccepted) {
    // From now on everything on this link runs here (and is never routed again).
    conn.set_peer(true);
    conn.set_authenticated(true);
    return;
  }
  // Requests a refused peer pipelined behind its handshake must not run as a client's.
  stats_.total_error_replies++;
  conn.close_after_reply();
}

bool Server::answer_in_pubsub_context(Connection& conn, const engine::CommandSpec& spec,
                                      std::span<const std::string_view> argv,
                                      protocol::ReplyWriter& writer) {
  // RESP3 carries messages as pushes, so a RESP3 subscriber may run anything.
  if (conn.resp() != protocol::RespVersion::kResp2 || pubsub_.subscription_count(conn.id()) == 0) {
    return false;
  }
  if (spec.flags & engine::kSubscribedOk) {
    if (spec.name != "ping") return false;
    engine::CommandContext ctx{argv, writer, store_, &conn, this, &spec};
    engine::cmd_ping_subscribed(ctx);
    return true;
  }
  writer.error(
      "ERR Can't execute '" + engine::command_fullname(spec) +
      "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
      "context");
  stats_.total_error_replies++;
  return true;
}

void Server::deliver(uint64_t client, const std::string* pattern, std::string_view channel,
                     std::string_view message) {
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second->closing()) return;
  Connection& conn = *it->second;
  protocol::ReplyWriter w(conn.reply_writer().buffer(), conn.resp());
  if (pattern == nullptr) {
    w.push(3);
    w.bulk("message");
  } else {
    w.push(4);
    w.bulk("pmessage");
    w.bulk(*pattern);
  }
  w.bulk(channel);
  w.bulk(message);
  conn.output_added();
  conn.enforce_output_limits();
}

void Server::execute_for_peer(Connection& conn, std::span<const std::string_view> argv,
                              protocol::ReplyWriter& writer) {
  protocol::RespVersion version = writer.version();
  if (engine::equals_ignore_case(argv[0], cluster::kResp3Prefix) && argv.size() > 1) {
    argv = argv.subspan(1);
    writer.set_version(protocol::RespVersion::kResp3);
  }
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_command(argv, error);
  if (spec == nullptr) {
    writer.error(error);
    transaction_refused(conn);
  } else {
    conn.set_last_command(spec);
    // A transaction relayed whole (MULTI ... EXEC on a client's own link) is queued here too.
    if (!queue_in_transaction(conn, *spec, argv, writer)) run_local(*spec, argv, writer, &conn);
  }
  writer.set_version(version);
}

void Server::run_local(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                       protocol::ReplyWriter& writer, Connection* conn) {
  store_.set_now(unix_ms());
  if (refused_for_memory(spec, conn, writer)) return;
  run_command(spec, argv, writer, conn, true);
}

void Server::run_command(const engine::CommandSpec& spec, std::span<const std::string_view> argv,
                         protocol::ReplyWriter& writer, Connection* conn, bool can_block) {
  store_.set_now(unix_ms());
  engine::BlockRequest block;
  engine::CommandContext ctx{
      argv, writer,  store_, conn, this, &spec, conn && can_block ? &block : nullptr,
      this, &pubsub_};
  call(spec, ctx);
  if (block.active) block_client(*conn, argv, std::move(block));
  if (!ready_keys_.empty()) serve_ready_keys();
}

void Server::call(const engine::CommandSpec& spec, engine::CommandContext& ctx) {
  if (!aof_.wants_records()) {
    spec.handler(ctx);
    return;
  }
  engine::Propagation propagation;
  ctx.propagation = &propagation;
  const uint64_t changes = changes_;
  spec.handler(ctx);
  ctx.propagation = nullptr;
  if (changes_ == changes) return;
  if (!propagation.replaced()) {
    aof_.feed(ctx.argv);
    return;
  }
  for (const std::vector<std::string>& command : propagation.commands()) aof_.feed(command);
}

void Server::key_dropped(std::string_view key) {
  invalidate_watchers(key);
  if (!aof_.wants_records()) return;
  const std::string_view del[] = {"DEL", key};
  aof_.feed(del);
}

void Server::rewrite_append_only_file(protocol::ReplyWriter& reply) {
  constexpr std::string_view kRunning =
      "ERR Background append only file rewriting already in progress";
  if (aof_.rewrite_in_progress()) {
    reply.error(kRunning);
    return;
  }
  if (in_exec_) {
    // As Redis: not forked in the middle of a transaction, but right after it.
    aof_.schedule_rewrite();
    reply.simple("Background append only file rewriting scheduled");
    return;
  }
  switch (aof_.start_rewrite(uv_now(loop_))) {
    case persistence::RewriteStart::kStarted:
      reply.simple("Background append only file rewriting started");
      break;
    case persistence::RewriteStart::kAlreadyRunning:
      reply.error(kRunning);
      break;
    case persistence::RewriteStart::kForkFailed:
      reply.error(
          "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
          "information.");
      break;
  }
}

void Server::key_ready(std::string_view key) {
  if (blocked_.waited_on(key)) ready_keys_.emplace_back(key);
}

void Server::block_client(Connection& conn, std::span<const std::string_view> argv,
                          engine::BlockRequest request) {
  uint64_t deadline =
      request.timeout_ms > 0 ? uv_now(loop_) + static_cast<uint64_t>(request.timeout_ms) : 0;
  blocked_.add(conn.id(), BlockedClients::Waiter{std::vector<std::string>(argv.begin(), argv.end()),
                                                 std::move(request.keys), deadline,
                                                 conn.resp() == protocol::RespVersion::kResp3});
  conn.block();
  arm_block_timer();
}

void Server::serve_ready_keys() {
  // Serving a client may make more keys ready (BLMOVE pushes into its destination).
  while (!ready_keys_.empty()) {
    std::vector<std::string> keys;
    keys.swap(ready_keys_);
    for (const std::string& key : keys) {
      for (uint64_t id : blocked_.waiters(key)) {
        auto it = clients_.find(id);
        if (it == clients_.end()) {
          blocked_.remove(id);
          continue;
        }
        // The first client that cannot be served means the key has nothing left.
        if (!rerun_blocked(*it->second, false)) break;
      }
    }
  }
}

bool Server::rerun_blocked(Connection& conn, bool timed_out) {
  const BlockedClients::Waiter* waiter = blocked_.find(conn.id());
  if (waiter == nullptr) return true;
  std::vector<std::string> args = waiter->argv;
  std::vector<std::string_view> argv(args.begin(), args.end());
  std::string error;
  const engine::CommandSpec* spec = engine::resolve_command(argv, error);
  if (spec == nullptr) return true;
  protocol::ReplyWriter& writer = conn.reply_writer();
  const protocol::RespVersion version = writer.version();
  if (waiter->resp3) writer.set_version(protocol::RespVersion::kResp3);
  store_.set_now(unix_ms());
  engine::BlockRequest again;
  engine::CommandContext ctx{argv, writer,  store_, &conn, this, spec, timed_out ? nullptr : &again,
                             this, &pubsub_};
  ctx.timed_out = timed_out;
  call(*spec, ctx);
  writer.set_version(version);
  if (again.active) return false;
  blocked_.remove(conn.id());
  conn.unblock();
  arm_block_timer();
  return true;
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
        for (uint64_t id : self->blocked_.expired(uv_now(self->loop_))) {
          auto it = self->clients_.find(id);
          if (it == self->clients_.end()) {
            self->blocked_.remove(id);
          } else {
            self->rerun_blocked(*it->second, true);
          }
        }
        if (!self->ready_keys_.empty()) self->serve_ready_keys();
        self->arm_block_timer();
      },
      next > now ? next - now : 0, 0);
}

std::string Server::cluster_info() { return cluster_ ? cluster_->info_text() : std::string(); }

std::string Server::cluster_nodes() {
  return cluster_ ? cluster_->nodes_text(store_.size()) : std::string();
}

std::string Server::cluster_owner(std::string_view key) {
  return cluster_ ? std::string(cluster_->routing_ring().owner_of(key)) : std::string();
}

void Server::on_cron(uv_timer_t* timer) { static_cast<Server*>(timer->data)->cron(); }

void Server::cron() {
  uint64_t now = uv_now(loop_);
  store_.set_now(unix_ms());
  // Like Redis: active expiry may use up to 25% of each cron period.
  int64_t period_us = 1000000 / std::max<int64_t>(1, config_.server.hz);
  store_.active_expire_cycle(period_us / 4);
  store_.rehash_step(1000);
  aof_.cron(now);

  if (config_.server.timeout > 0) {
    uint64_t limit_ms = static_cast<uint64_t>(config_.server.timeout) * 1000;
    for (auto& [id, conn] : clients_) {
      // As Redis, the idle timeout spares clients that wait by design: relay links from peers
      // (like replication links), clients blocked in a command (they have their own timeout)
      // and subscribers.
      if (conn->closing() || conn->is_peer() || conn->blocked() ||
          pubsub_.subscription_count(id) > 0) {
        continue;
      }
      if (now - conn->last_interaction_ms() > limit_ms) {
        spdlog::warn("closing idle client id={} addr={} after {} s", id, conn->peer_address(),
                     config_.server.timeout);
        conn->close();
      }
    }
  }

  if (now - last_ops_sample_ms_ >= 1000) {
    uint64_t ops = stats_.total_commands_processed - last_ops_sample_count_;
    instantaneous_ops_ =
        last_ops_sample_ms_ == 0
            ? 0
            : static_cast<double>(ops) * 1000.0 / static_cast<double>(now - last_ops_sample_ms_);
    last_ops_sample_ms_ = now;
    last_ops_sample_count_ = stats_.total_commands_processed;
  }
}

void Server::on_signal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<Server*>(handle->data);
  spdlog::warn("received {}, scheduling shutdown", signum == SIGINT ? "SIGINT" : "SIGTERM");
  self->begin_shutdown();
}

void Server::shutdown() { begin_shutdown(); }

void Server::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  spdlog::info("shutting down: no new connections, flushing {} client(s)", clients_.size());
  uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigint_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigterm_), nullptr);
  if (cluster_) cluster_->stop();
  aof_.shutdown(uv_now(loop_));
  for (auto& [id, conn] : clients_) conn->close_when_flushed();
  // Clients that do not take their last replies are closed after a grace period.
  uv_timer_stop(&cron_timer_);
  uv_timer_start(
      &cron_timer_,
      [](uv_timer_t* t) {
        auto* s = static_cast<Server*>(t->data);
        for (auto& [id, conn] : s->clients_) conn->close();
        uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
      },
      kShutdownGraceMs, 0);
  maybe_finish_shutdown();
}

void Server::maybe_finish_shutdown() {
  if (!shutting_down_ || !clients_.empty() || shutdown_finished_) return;
  shutdown_finished_ = true;
  // The last handles: with them closed the loop runs out of work and run() returns.
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_check_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&block_timer_), nullptr);
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&cron_timer_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&cron_timer_), nullptr);
  }
}

std::string Server::client_list(std::span<const uint64_t> ids) {
  std::string out;
  auto add = [&](const Connection* c) {
    out += c->info_line();
    out += '\n';
  };
  if (ids.empty()) {
    // Oldest first, as Redis lists them.
    std::vector<const Connection*> all;
    all.reserve(clients_.size());
    for (auto& [id, c] : clients_) {
      if (!c->closing()) all.push_back(c);
    }
    std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
    for (auto* c : all) add(c);
  } else {
    for (uint64_t id : ids) {
      auto it = clients_.find(id);
      if (it != clients_.end() && !it->second->closing()) add(it->second);
    }
  }
  return out;
}

size_t Server::kill_clients(const engine::ClientKillFilter& filter) {
  std::vector<Connection*> victims;
  for (auto& [id, c] : clients_) {
    if (c->closing()) continue;
    if (filter.skipme && id == filter.self_id) continue;
    if (filter.id && *filter.id != id) continue;
    if (!filter.addr.empty() && c->peer_address() != filter.addr) continue;
    if (!filter.laddr.empty() && c->local_address() != filter.laddr) continue;
    victims.push_back(c);
  }
  for (Connection* c : victims) {
    // A client that kills itself still gets its reply.
    if (c->id() == filter.self_id) {
      c->close_after_reply();
    } else {
      c->close();
    }
  }
  return victims.size();
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
  std::string err = conf::set_parameters(config_, pairs);
  if (!err.empty()) return err;
  apply_runtime_config();
  std::string aof_error = aof_.apply_options(uv_now(loop_));
  if (!aof_error.empty()) {
    config_.persistence.appendonly = appendonly;
    return "ERR CONFIG SET failed (possibly related to argument 'appendonly') - " + aof_error;
  }
  return {};
}

void Server::apply_runtime_config() {
  spdlog::set_level(spdlog::level::from_str(config_.log.level));
  apply_memory_config();
  for (auto& [id, conn] : clients_) conn->apply_limits();
}

void Server::apply_memory_config() {
  const conf::MemoryOptions& opts = config_.memory;
  const engine::EvictionPolicy policy = engine::parse_eviction_policy(opts.maxmemory_policy)
                                            .value_or(engine::EvictionPolicy::kNoEviction);
  // Pooled candidates were scored under the old policy.
  if (policy != eviction_limits_.policy) evictor_.reset();
  eviction_limits_ = engine::EvictionLimits{static_cast<size_t>(opts.maxmemory), policy,
                                            static_cast<size_t>(opts.maxmemory_samples)};
  store_.set_access_policy(
      engine::AccessPolicy{engine::is_lfu(policy), opts.lfu_log_factor, opts.lfu_decay_time});
}

void Server::config_resetstat() {
  stats_ = ServerStats{};
  store_.reset_stats();
}

}  // namespace ringkv::server
