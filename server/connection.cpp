// Connection: socket I/O and the parse → dispatch loop of one client.
#include "server/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "protocol/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

constexpr size_t kReadChunk = 16 * 1024;
// Stop reading from a client, and running the requests it already sent, while this much of its
// output is still unsent (back-pressure): a client that never reads its replies holds at most
// this much plus one reply, whatever its output buffer limits say.
constexpr size_t kMaxPendingOutput = 64ull * 1024 * 1024;
// Output buffers at least this big are reported to the server when freed (it gives the memory
// back to the system after a burst of them).
constexpr size_t kLargeOutputBuffer = 256 * 1024;
// Stop reading from a client with this many replies still waiting for peers.
constexpr size_t kMaxPendingReplies = 64 * 1024;

std::string format_address(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = {0};
  int port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    uv_ip4_name(a, host, sizeof(host));
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    uv_ip6_name(a, host, sizeof(host));
    port = ntohs(a->sin6_port);
  } else {
    return "?:0";
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

struct Connection::WriteRequest {
  uv_write_t req;
  std::string data;
  Connection* conn;
};

Connection::Connection(Server& server, uint64_t id, bool unix_socket)
    : server_(server),
      unix_socket_(unix_socket),
      id_(id),
      created_ms_(uv_now(server.loop())),
      last_interaction_ms_(created_ms_),
      writer_(out_) {
  set_default_auth();
  if (unix_socket_) {
    uv_pipe_init(server.loop(), &socket_.pipe, 0);
  } else {
    uv_tcp_init(server.loop(), &socket_.tcp);
  }
  handle()->data = this;
  writer_.set_error_observer(&server);
  apply_limits();
}

Connection::~Connection() { *alive_ = false; }

Connection::ReplySlot Connection::reserve_reply() {
  pending_.push_back(PendingReply{false, {}, dropping_});
  update_reading();
  return ReplySlot(this, alive_, pending_seq_ + pending_.size() - 1);
}

void Connection::ReplySlot::fill(std::string_view reply_bytes, bool unblock) const {
  if (!*alive_) return;
  conn_->fill_slot(seq_, reply_bytes);
  if (unblock) conn_->unblock();
}

void Connection::fill_slot(uint64_t seq, std::string_view bytes) {
  assert(seq >= pending_seq_ && seq - pending_seq_ < pending_.size());
  PendingReply& slot = pending_[seq - pending_seq_];
  if (!slot.discard) slot.data.assign(bytes);
  slot.ready = true;
  if (seq != pending_seq_ || closing_ || protected_) return;
  drain_pending();
  if (!enforce_output_limits()) return;
  // Replies from peers arrive many per read: write them once, at the end of this loop iteration.
  request_flush();
}

void Connection::request_flush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  server_.schedule_flush(this);
}

void Connection::unblock() {
  blocked_ = false;
  request_flush();
}

void Connection::resume() {
  held_ = false;
  request_flush();
}

void Connection::scheduled_flush() {
  flush_scheduled_ = false;
  if (closing_) return;
  // Requests that arrived while the client was blocked.
  if (!blocked_ && !held_) process_input();
  if (ack_asked_) {
    ack_asked_ = false;
    stream_acked_ = stream_offset_;
    reply_writer().integer(static_cast<int64_t>(stream_offset_));
  }
  flush();
  update_reading();
  maybe_finish_close();
}

void Connection::drain_pending() {
  while (!pending_.empty() && pending_.front().ready) {
    if (out_.empty()) {
      out_.swap(pending_.front().data);
    } else {
      out_.append(pending_.front().data);
    }
    pending_.pop_front();
    pending_seq_++;
  }
}

protocol::ReplyWriter& Connection::reply_writer() {
  if (pending_.empty()) {
    writer_.set_buffer(out_);
  } else {
    if (!pending_.back().ready) pending_.push_back(PendingReply{true, {}});
    writer_.set_buffer(pending_.back().data);
  }
  return writer_;
}

protocol::ReplyWriter& Connection::late_reply_writer() {
  if (!reply_off_) return reply_writer();
  discard_.clear();
  writer_.set_buffer(discard_);
  return writer_;
}

std::string& Connection::push_buffer() {
  if (pending_.empty()) return out_;
  if (!pending_.back().ready) pending_.push_back(PendingReply{true, {}});
  return pending_.back().data;
}

void Connection::set_reply_mode(ReplyMode mode) {
  switch (mode) {
    case ReplyMode::kOn:
      reply_off_ = skip_next_ = skip_this_ = false;
      // ON's own reply is sent: the writer of this request leaves the discard buffer.
      if (dropping_) {
        dropping_ = false;
        reply_writer();
      }
      break;
    case ReplyMode::kOff:
      reply_off_ = true;
      break;
    case ReplyMode::kSkip:
      if (!reply_off_) skip_next_ = true;
      break;
  }
}

namespace {

// TCP keepalive as Redis sets it on its clients: probes after `seconds` of silence, then every
// third of that, and the connection is closed once 3 go unanswered (so a client whose host
// vanished is gone after about twice `seconds`).
void keep_alive(uv_tcp_t& tcp, int64_t seconds) {
  if (seconds <= 0) return;
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp), &fd) != 0) return;
  const int on = 1;
  const int idle = static_cast<int>(seconds);
  const int interval = std::max(1, idle / 3);
  const int probes = 3;
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval)) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes)) != 0) {
    spdlog::debug("could not set TCP keepalive on a client: {}", std::strerror(errno));
  }
}

}  // namespace

bool Connection::start() {
  if (unix_socket_) {
    // As Redis names a Unix socket client: the socket's path, port 0, at both ends.
    peer_addr_ = local_addr_ = server_.config().server.unixsocket + ":0";
    update_reading();
    return reading_;
  }
  uv_tcp_nodelay(&socket_.tcp, 1);
  keep_alive(socket_.tcp, server_.config().server.tcp_keepalive);
  sockaddr_storage ss{};
  int len = sizeof(ss);
  if (uv_tcp_getpeername(&socket_.tcp, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    peer_addr_ = format_address(ss);
  }
  len = sizeof(ss);
  if (uv_tcp_getsockname(&socket_.tcp, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    local_addr_ = format_address(ss);
  }
  update_reading();
  return reading_;
}

bool Connection::from_loopback() const {
  if (unix_socket_) return true;  // a client on this host, as Redis counts it
  // peer_addr_ is "ip:port", IPv6 without brackets (see format_address).
  std::string_view ip(peer_addr_);
  ip = ip.substr(0, ip.rfind(':'));
  return ip.starts_with("127.") || ip == "::1" || ip.starts_with("::ffff:127.");
}

void Connection::reject(std::string_view error_text) {
  // A TLS client can read nothing before its handshake: it is just disconnected.
  if (tls_ != nullptr && !tls_->established()) {
    close();
    return;
  }
  reply_writer().error(error_text);
  close_when_flushed();
}

void Connection::protect() {
  protected_ = true;
  blocked_ = true;
  if (reading_) {
    uv_read_stop(stream());
    reading_ = false;
  }
}

void Connection::unprotect() {
  protected_ = false;
  if (close_deferred_) {
    close();
    return;
  }
  drain_pending();
  unblock();
}

int Connection::socket_fd() const {
  uv_os_fd_t fd = -1;
  if (uv_fileno(handle(), &fd) != 0) return -1;
  return fd;
}

engine::DebugLink* Connection::debug_link() {
  if (peer_ || socket_fd() < 0) return nullptr;
  if (debug_link_ == nullptr) debug_link_ = std::make_unique<DebugLink>(socket_fd(), tls_.get());
  return debug_link_.get();
}

void Connection::close() {
  if (closing_) return;
  if (protected_) {
    close_deferred_ = true;
    return;
  }
  // A TLS session ends with its close_notify, as Redis's SSL_shutdown sends it: the client sees
  // an orderly end rather than a cut (unless a forked copy carries the session on).
  if (tls_ != nullptr && !session_handed_over_ && in_flight_writes_ == 0) {
    tls_->close_notify();
    std::string alert;
    tls_->take_output(alert);
    uv_buf_t b = uv_buf_init(alert.data(), static_cast<unsigned>(alert.size()));
    if (!alert.empty()) uv_try_write(stream(), &b, 1);
  }
  closing_ = true;
  reading_ = false;
  uv_close(handle(), on_close);
}

void Connection::close_when_flushed() {
  close_when_flushed_ = true;
  update_reading();
  flush();
  maybe_finish_close();
}

void Connection::maybe_finish_close() {
  if (close_when_flushed_ && out_.empty() && tls_wire_.empty() && pending_.empty() &&
      in_flight_writes_ == 0) {
    close();
  }
}

bool Connection::output_backlogged() const { return pending_output() >= kMaxPendingOutput; }

void Connection::defer_input() {
  input_deferred_ = true;
  update_reading();
  server_.defer_input(*this);
}

void Connection::continue_input() {
  input_deferred_ = false;
  if (closing_) return;
  if (!blocked_ && !held_ && !protected_) process_input();
  if (server_.aof_pending()) {
    request_flush();
  } else {
    flush();
  }
  update_reading();
  maybe_finish_close();
}

void Connection::update_reading() {
  if (closing_ || protected_) return;
  bool want = !close_when_flushed_ && !output_backlogged() && !input_deferred_ &&
              pending_.size() < kMaxPendingReplies;
  if (want == reading_) return;
  if (want) {
    reading_ = uv_read_start(stream(), on_alloc, on_read) == 0;
    if (!reading_) close();
  } else {
    uv_read_stop(stream());
    reading_ = false;
  }
}

void Connection::apply_limits() {
  ahead_.clear();  // read under the old limits
  parser_.set_limits(protocol::ParseLimits{
      .max_bulk_len = static_cast<size_t>(server_.config().server.proto_max_bulk_len)});
}

void Connection::reset_state() {
  // RESET leaves every channel and pattern, without confirmations (as Redis), discards a
  // transaction and drops its WATCHes, and ends MONITOR.
  server_.pubsub().remove_client(id_);
  server_.end_monitor(*this);
  transaction_.end();
  server_.unwatch_all(*this);
  name_.clear();
  db_ = 0;
  writer_.set_version(protocol::RespVersion::kResp2);
  // As Redis, RESET turns tracking off and replies on (its own +RESET is sent); NO-EVICT stays.
  if (!tracking_.prefixes.empty()) server_.track_prefixes(id_, tracking_.prefixes, false);
  tracking_ = engine::ClientTracking{};
  set_reply_mode(ReplyMode::kOn);
  // As Redis, RESET logs the client out when a password is required.
  set_default_auth();
}

void Connection::set_default_auth() {
  user_ = server_.acl_users()->default_user();
  authenticated_ = user_->nopass() && user_->enabled();
}

const conf::OutputBufferLimit* Connection::output_limit_class() const {
  // Relay links from peers carry other clients' replies: like Redis's master link, no limit.
  if (peer_) return nullptr;
  const conf::ServerOptions& opts = server_.config().server;
  return server_.pubsub().total_subscriptions(id_) > 0 ? &opts.output_limit_pubsub
                                                       : &opts.output_limit_normal;
}

bool Connection::enforce_output_limits() {
  const conf::OutputBufferLimit* limit = output_limit_class();
  if (limit == nullptr || closing_) return !closing_;
  const auto used = static_cast<int64_t>(pending_output());
  bool over = limit->hard > 0 && used >= limit->hard;
  if (limit->soft > 0 && used >= limit->soft) {
    const uint64_t now = uv_now(server_.loop());
    if (soft_limit_since_ms_ == 0) {
      soft_limit_since_ms_ = now;
    } else if (now - soft_limit_since_ms_ > static_cast<uint64_t>(limit->soft_seconds) * 1000) {
      over = true;
    }
  } else {
    soft_limit_since_ms_ = 0;
  }
  if (!over) return true;
  spdlog::warn("Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
               info_line());
  close();
  return false;
}

void Connection::use_tls(std::shared_ptr<const common::TlsContext> context) {
  tls_ =
      std::make_unique<common::TlsChannel>(std::move(context), common::TlsChannel::Role::kAccept);
}

void Connection::append_input(const char* data, size_t n) {
  if (rstart_ == rend_) rstart_ = rend_ = 0;
  if (rbuf_.size() - rend_ < n) {
    const size_t pending = rend_ - rstart_;
    if (rstart_ > 0) {
      std::memmove(rbuf_.data(), rbuf_.data() + rstart_, pending);
      rend_ = pending;
      rstart_ = 0;
    }
    if (rbuf_.size() - rend_ < n) rbuf_.resize(rend_ + std::max(n, kReadChunk));
  }
  std::memcpy(rbuf_.data() + rend_, data, n);
  rend_ += n;
}

bool Connection::receive_tls(size_t n) {
  std::string plain;
  const bool ok = tls_->receive(std::string_view(tls_in_.data(), n), plain);
  if (!ok) {
    if (tls_->error().empty()) {
      close();  // the client's close_notify
    } else {
      tls_failed();
    }
    return false;
  }
  if (!plain.empty()) append_input(plain.data(), plain.size());
  // Handshake records (and replies held back until it finished) go out now.
  if (tls_->has_output() || (tls_->established() && !out_.empty())) flush();
  return !closing_;
}

void Connection::tls_failed() {
  spdlog::warn("Error accepting a client connection: {} (addr={} laddr={})", tls_->error(),
               peer_addr_, local_addr_);
  out_.clear();
  tls_->take_output(tls_wire_);  // OpenSSL's alert, if it wrote one
  write_wire(tls_wire_);
  close_when_flushed();
}

void Connection::on_alloc(uv_handle_t* handle, size_t /*suggested*/, uv_buf_t* buf) {
  auto* self = static_cast<Connection*>(handle->data);
  if (self->tls_ != nullptr) {
    self->tls_in_.resize(kReadChunk);
    buf->base = self->tls_in_.data();
    buf->len = self->tls_in_.size();
    return;
  }
  if (self->rstart_ == self->rend_) self->rstart_ = self->rend_ = 0;
  size_t pending = self->rend_ - self->rstart_;
  // A large bulk is on its way: grow towards its size by doubling as its bytes arrive, so a
  // declared length never reserves more than twice what the client really sent.
  size_t want = std::max(kReadChunk, std::min(self->parser_.pending_bulk_hint(), pending));
  if (self->rbuf_.size() - self->rend_ < want) {
    if (self->rstart_ > 0) {
      std::memmove(self->rbuf_.data(), self->rbuf_.data() + self->rstart_, pending);
      self->rend_ = pending;
      self->rstart_ = 0;
    }
    if (self->rbuf_.size() - self->rend_ < want) self->rbuf_.resize(self->rend_ + want);
  }
  buf->base = self->rbuf_.data() + self->rend_;
  buf->len = self->rbuf_.size() - self->rend_;
}

void Connection::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* /*buf*/) {
  auto* self = static_cast<Connection*>(stream->data);
  if (nread < 0) {
    self->close();
    return;
  }
  if (nread == 0) return;
  if (self->tls_ != nullptr) {
    if (!self->receive_tls(static_cast<size_t>(nread))) return;
  } else {
    self->rend_ += static_cast<size_t>(nread);
    // A TLS ClientHello (a handshake record, 0x16 0x03) on the plain-text port: the client
    // meant tls-port. Nothing it sends can be read as requests.
    if (self->first_read_ && self->rend_ - self->rstart_ >= 2 &&
        self->rbuf_[self->rstart_] == 0x16 && self->rbuf_[self->rstart_ + 1] == 0x03) {
      spdlog::warn("closing client addr={}: a TLS handshake arrived on the plain-text port {}",
                   self->peer_addr_, self->local_addr_);
      self->close();
      return;
    }
  }
  self->first_read_ = false;
  self->server_.stats().total_net_input_bytes += static_cast<uint64_t>(nread);
  self->server_.stats().total_reads_processed++;
  self->last_interaction_ms_ = uv_now(self->server_.loop());
  if (self->server_.turn_input_spent()) {
    // This turn has run its share of input already (many peer links each bringing big
    // RESTOREs, one request apiece, made turns of 50-90 ms): go on next turn, in line.
    self->defer_input();
    return;
  }
  self->process_input();
  if (self->server_.aof_pending()) {
    // Replies wait for the append-only file write at the end of this iteration, which then
    // covers the writes of every client read in it (one write and fsync for all).
    self->request_flush();
  } else {
    self->flush();
  }
  self->maybe_finish_close();
}

bool Connection::query_buffer_over_limit() const {
  // Peer links carry many clients' requests: exempt, as Redis exempts its master link.
  if (peer_) return false;
  const auto limit = static_cast<size_t>(server_.config().server.client_query_buffer_limit);
  // A bulk declared bigger than the limit could never be accepted whole: refuse it now.
  return rend_ - rstart_ + parser_.pending_bulk_hint() > limit;
}

void Connection::flush() {
  if (closing_) return;
  if (tls_ != nullptr) {
    if (!out_.empty() && tls_->established()) {
      if (server_.aof_pending()) server_.write_aof();
      server_.stats().total_net_output_bytes += out_.size();
      if (!tls_->send(out_)) {
        tls_failed();
        return;
      }
      out_.clear();
    }
    tls_->take_output(tls_wire_);
    write_wire(tls_wire_);
    return;
  }
  if (out_.empty()) return;
  // No reply leaves before the records of the writes it acknowledges are written.
  if (server_.aof_pending()) server_.write_aof();
  server_.stats().total_net_output_bytes += out_.size();
  write_wire(out_);
}

void Connection::write_wire(std::string& wire) {
  if (wire.empty() || closing_) return;
  size_t offset = 0;
  if (in_flight_writes_ == 0) {
    uv_buf_t b = uv_buf_init(wire.data(), static_cast<unsigned>(wire.size()));
    int n = uv_try_write(stream(), &b, 1);
    if (n > 0) offset = static_cast<size_t>(n);
    server_.stats().total_writes_processed++;
    if (n < 0 && n != UV_EAGAIN) {
      wire.clear();
      close();
      return;
    }
  }
  if (offset == wire.size()) {
    wire.clear();
    return;
  }
  auto* wr = new WriteRequest;
  wr->conn = this;
  // Hand the buffer itself over (no second copy of a large backlog stays behind).
  if (offset > 0) wire.erase(0, offset);
  wr->data.swap(wire);
  wr->req.data = wr;
  uv_buf_t b = uv_buf_init(wr->data.data(), static_cast<unsigned>(wr->data.size()));
  in_flight_bytes_ += wr->data.size();
  in_flight_writes_++;
  int rc = uv_write(&wr->req, stream(), &b, 1, on_write);
  if (rc != 0) {
    in_flight_bytes_ -= wr->data.size();
    in_flight_writes_--;
    delete wr;
    close();
    return;
  }
  update_reading();
}

void Connection::on_write(uv_write_t* req, int status) {
  auto* wr = static_cast<WriteRequest*>(req->data);
  Connection* self = wr->conn;
  self->in_flight_bytes_ -= wr->data.size();
  self->in_flight_writes_--;
  if (wr->data.capacity() >= kLargeOutputBuffer) {
    self->server_.note_released_output(wr->data.capacity());
  }
  delete wr;
  if (status < 0) {
    self->close();
    return;
  }
  self->last_interaction_ms_ = uv_now(self->server_.loop());
  // Requests held back while the output was backlogged run again now.
  if (self->rstart_ < self->rend_ && !self->output_backlogged()) self->request_flush();
  self->update_reading();
  self->maybe_finish_close();
}

void Connection::on_close(uv_handle_t* handle) {
  auto* self = static_cast<Connection*>(handle->data);
  const size_t buffers = self->out_.capacity() + self->tls_wire_.capacity();
  if (buffers >= kLargeOutputBuffer) self->server_.note_released_output(buffers);
  self->server_.on_connection_closed(self);
  delete self;
}

engine::ClientKind Connection::kind() const {
  if (peer_) return engine::ClientKind::kPeer;
  const bool subscribed = server_.pubsub().channel_count(id_) > 0 ||
                          server_.pubsub().pattern_subscription_count(id_) > 0;
  return subscribed ? engine::ClientKind::kPubSub : engine::ClientKind::kNormal;
}

std::string Connection::info_line() const {
  uint64_t now = uv_now(server_.loop());
  std::string line;
  line.reserve(256);
  line += "id=" + std::to_string(id_);
  line += " addr=" + peer_addr_;
  line += " laddr=" + local_addr_;
  uv_os_fd_t fd = -1;
  uv_fileno(handle(), &fd);
  line += " fd=" + std::to_string(fd);
  line += " name=" + name_;
  line += " age=" + std::to_string((now - created_ms_) / 1000);
  line += " idle=" + std::to_string((now - last_interaction_ms_) / 1000);
  const size_t sub = server_.pubsub().channel_count(id_);
  const size_t psub = server_.pubsub().pattern_subscription_count(id_);
  const size_t ssub = server_.pubsub().shard_subscription_count(id_);
  // Flags in Redis's order: O (monitor), P (subscribed), x (in MULTI), b (blocked), d (a
  // watched key changed); N when there is none. A peer's link is flagged L (ringkv's own).
  std::string flags;
  if (peer_) flags += 'L';
  if (monitoring_) flags += 'O';
  if (sub + psub + ssub > 0) flags += 'P';
  if (transaction_.active) flags += 'x';
  if (blocked_) flags += 'b';
  if (tracking_.on) flags += 't';
  if (tracking_.broken_redirect) flags += 'R';
  if (tracking_.bcast) flags += 'B';
  if (transaction_.watched_changed) flags += 'd';
  if (unix_socket_) flags += 'U';
  if (no_evict_) flags += 'e';
  line += " flags=" + (flags.empty() ? std::string("N") : flags);
  line += " db=" + std::to_string(db_) + " sub=" + std::to_string(sub) +
          " psub=" + std::to_string(psub);
  line += " ssub=" + std::to_string(ssub) + " multi=";
  line += transaction_.active ? std::to_string(transaction_.queued.size()) : "-1";
  size_t qbuf = rend_ - rstart_;
  line += " qbuf=" + std::to_string(qbuf);
  line += " qbuf-free=" + std::to_string(rbuf_.size() - rend_);
  line += " argv-mem=0 multi-mem=0";
  line += " rbs=" + std::to_string(rbuf_.size());
  line += " rbp=" + std::to_string(rend_);
  line += " obl=" + std::to_string(out_.size());
  line += " oll=" + std::to_string(in_flight_writes_);
  line += " omem=" + std::to_string(in_flight_bytes_);
  line += " tot-mem=" + std::to_string(buffer_memory());
  line += reading_ ? " events=r" : " events=";
  line += " cmd=" + (last_command_ ? engine::command_fullname(*last_command_) : "NULL");
  line += " user=" + (user_ ? user_->name() : std::string("default")) + " redir=";
  line += tracking_.on ? std::to_string(tracking_.redirect) : "-1";
  line += " resp=";
  line += writer_.version() == protocol::RespVersion::kResp3 ? "3" : "2";
  return line;
}

}  // namespace ringkv::server
