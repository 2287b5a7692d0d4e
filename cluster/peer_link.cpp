// PeerLink: pipelined relay connection to one peer, with FIFO reply matching and timeouts.
#include "cluster/peer_link.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <limits>
#include <utility>

namespace ringkv::cluster {
namespace {

constexpr uint64_t kMinBackoffMs = 100;
constexpr size_t kReadChunk = 64 * 1024;

struct WriteRequest {
  uv_write_t req;
  std::string data;
};

}  // namespace

struct PeerLink::Socket {
  uv_tcp_t tcp;
  uv_connect_t connect;
  PeerLink* link;  // null once the link gave this socket up
};

PeerLink::PeerLink(uv_loop_t* loop, std::string address, LinkOptions options,
                   HandshakeFactory make_handshake)
    : loop_(loop),
      address_(std::move(address)),
      options_(options),
      make_handshake_(std::move(make_handshake)) {
  size_t colon = address_.rfind(':');
  host_ = address_.substr(0, colon);
  if (host_.size() >= 2 && host_.front() == '[' && host_.back() == ']') {
    host_ = host_.substr(1, host_.size() - 2);
  }
  if (host_ == "localhost") host_ = "127.0.0.1";
  port_ = colon == std::string::npos ? 0 : std::atoi(address_.c_str() + colon + 1);
}

PeerLink::~PeerLink() {
  if (socket_ != nullptr) {
    socket_->link = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&socket_->tcp),
             [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
  }
}

void PeerLink::send(std::string_view frame, ReplyCallback on_reply) {
  out_.append(frame);
  commit(std::move(on_reply));
}

void PeerLink::commit(ReplyCallback on_reply) {
  stats_.requests++;
  uint64_t now = uv_now(loop_);
  if (state_ == State::kBackoff && now < backoff_until_ms_) {
    // Known down: answer at once rather than after a timeout.
    out_.clear();
    stats_.errors++;
    on_reply({}, &last_error_);
    return;
  }
  const uint64_t deadline = options_.request_timeout_ms == 0 ? std::numeric_limits<uint64_t>::max()
                                                             : now + options_.request_timeout_ms;
  inflight_.push_back(Request{std::move(on_reply), deadline});
  out_requests_++;
  if (state_ == State::kIdle || state_ == State::kBackoff) connect();
}

void PeerLink::connect() {
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(host_.c_str(), port_, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) rc = uv_ip6_addr(host_.c_str(), port_, reinterpret_cast<sockaddr_in6*>(&addr));
  state_ = State::kConnecting;
  connect_started_ms_ = uv_now(loop_);
  // Made now, not once connected: what it tells the peer (the ring this node routes by) must be
  // what held when the requests queued meanwhile were routed.
  handshake_ = make_handshake_();
  if (rc != 0) {
    fail(LinkErrorKind::kUnreachable, "invalid address");
    return;
  }
  socket_ = new Socket{};
  socket_->link = this;
  uv_tcp_init(loop_, &socket_->tcp);
  socket_->tcp.data = socket_;
  socket_->connect.data = socket_;
  stats_.connects++;
  rc = uv_tcp_connect(&socket_->connect, &socket_->tcp, reinterpret_cast<const sockaddr*>(&addr),
                      [](uv_connect_t* req, int status) {
                        auto* s = static_cast<Socket*>(req->data);
                        if (s->link != nullptr) s->link->on_connected(status);
                      });
  if (rc != 0) fail(LinkErrorKind::kUnreachable, uv_strerror(rc));
}

void PeerLink::on_connected(int status) {
  if (status != 0) {
    fail(LinkErrorKind::kUnreachable, uv_strerror(status));
    return;
  }
  uv_tcp_nodelay(&socket_->tcp, 1);
  int rc = uv_read_start(
      reinterpret_cast<uv_stream_t*>(&socket_->tcp),
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* s = static_cast<Socket*>(h->data);
        PeerLink* self = s->link;
        static char sink[64];
        if (self == nullptr) {
          *buf = uv_buf_init(sink, sizeof(sink));
          return;
        }
        self->reserve_input(kReadChunk);
        *buf = uv_buf_init(self->in_.data() + self->in_end_,
                           static_cast<unsigned>(self->in_.size() - self->in_end_));
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
        auto* s = static_cast<Socket*>(stream->data);
        PeerLink* self = s->link;
        if (self == nullptr || nread == 0) return;
        if (nread < 0) {
          if (nread == UV_EOF) {
            self->fail(LinkErrorKind::kClosed);
          } else {
            self->fail(LinkErrorKind::kUnreachable, uv_strerror(static_cast<int>(nread)));
          }
          return;
        }
        if (self->tls_ != nullptr) {
          if (!self->decrypt_input(static_cast<size_t>(nread))) return;
        } else {
          self->in_end_ += static_cast<size_t>(nread);
        }
        self->on_data();
      });
  if (rc != 0) {
    fail(LinkErrorKind::kUnreachable, uv_strerror(rc));
    return;
  }
  // Requests stay queued in out_ until the peer accepted the link.
  state_ = State::kHandshaking;
  if (options_.tls) {
    if (std::shared_ptr<const common::TlsContext> context = options_.tls()) {
      tls_ = std::make_unique<common::TlsChannel>(std::move(context),
                                                  common::TlsChannel::Role::kConnect);
      if (!tls_->start()) {
        fail(LinkErrorKind::kUnreachable, "TLS handshake failed: " + tls_->error());
        return;
      }
    }
  }
  // On TLS the peer handshake's first frame waits in the channel until TLS is set up.
  write(handshake_->open());
}

void PeerLink::reserve_input(size_t n) {
  if (in_start_ == in_end_) in_start_ = in_end_ = 0;
  if (in_.size() - in_end_ >= n) return;
  if (in_start_ > 0) {
    std::memmove(in_.data(), in_.data() + in_start_, in_end_ - in_start_);
    in_end_ -= in_start_;
    in_start_ = 0;
  }
  if (in_.size() - in_end_ < n) in_.resize(in_end_ + n);
}

void PeerLink::on_data() {
  const uint64_t now_ns = uv_hrtime();
  while (in_start_ < in_end_) {
    std::span<const char> avail(in_.data() + in_start_, in_end_ - in_start_);
    protocol::ReplyScanner::Result r = scanner_.scan(avail);
    if (r.status == protocol::ReplyScanner::Status::kIncomplete) break;
    if (r.status == protocol::ReplyScanner::Status::kError) {
      fail(LinkErrorKind::kProtocol, "malformed reply");
      return;
    }
    std::string_view reply(in_.data() + in_start_, r.length);
    in_start_ += r.length;
    last_answer_ms_ = uv_now(loop_);
    if (state_ == State::kHandshaking) {
      if (!on_handshake_reply(reply)) return;
      continue;
    }
    if (inflight_.empty()) {
      if (!on_message_) {
        fail(LinkErrorKind::kProtocol, "unexpected reply");
        return;
      }
      on_message_(reply, nullptr);
      if (socket_ == nullptr) return;
      continue;
    }
    Request req = std::move(inflight_.front());
    inflight_.pop_front();
    stats_.replies++;
    stats_.reply_usec += (now_ns - req.sent_ns) / 1000;
    if (req.on_reply) req.on_reply(reply, nullptr);
    // A callback may have failed the link (and cleared the buffers).
    if (socket_ == nullptr) return;
  }
  if (in_start_ == in_end_) in_start_ = in_end_ = 0;
}

bool PeerLink::on_handshake_reply(std::string_view reply) {
  // The peer answers: whatever it says, it is not down.
  backoff_ms_ = 0;
  HandshakeStep step = handshake_->on_reply(reply);
  if (!step.refused.empty()) {
    fail(LinkErrorKind::kRefused, step.refused);
    return false;
  }
  if (!step.next.empty()) {
    write(std::move(step.next));
    return socket_ != nullptr;
  }
  state_ = State::kReady;
  handshake_.reset();
  if (!out_.empty()) start_write();
  return socket_ != nullptr;
}

void PeerLink::flush() {
  if (state_ == State::kReady && !out_.empty()) start_write();
}

void PeerLink::start_write() {
  // The requests whose frames are in out_ are the last out_requests_ ones.
  // One clock reading stamps the batch (each reply reads it once per batch too).
  const uint64_t now_ns = uv_hrtime();
  for (size_t i = inflight_.size() - std::min(out_requests_, inflight_.size());
       i < inflight_.size(); ++i) {
    inflight_[i].written = true;
    inflight_[i].sent_ns = now_ns;
  }
  std::string data = std::move(out_);
  out_ = std::move(spare_);
  out_.clear();
  out_requests_ = 0;
  write(std::move(data));
}

bool PeerLink::decrypt_input(size_t n) {
  const std::string cipher(in_.data() + in_end_, n);
  std::string plain;
  const bool ok = tls_->receive(cipher, plain);
  std::string handshake;
  tls_->take_output(handshake);
  if (!handshake.empty()) write_raw(std::move(handshake));
  if (!ok || socket_ == nullptr) {
    if (socket_ != nullptr) {
      fail(tls_->error().empty() ? LinkErrorKind::kClosed : LinkErrorKind::kUnreachable,
           "TLS: " + tls_->error());
    }
    return false;
  }
  reserve_input(plain.size());
  std::memcpy(in_.data() + in_end_, plain.data(), plain.size());
  in_end_ += plain.size();
  return true;
}

void PeerLink::write(std::string data) {
  if (tls_ == nullptr) {
    write_raw(std::move(data));
    return;
  }
  if (!tls_->send(data)) {
    fail(LinkErrorKind::kUnreachable, "TLS: " + tls_->error());
    return;
  }
  std::string cipher;
  tls_->take_output(cipher);
  if (!cipher.empty()) write_raw(std::move(cipher));
}

void PeerLink::write_raw(std::string data) {
  // A batch usually fits the socket's buffer: written at once it needs no write request, and the
  // poller is not re-armed (each queued write's completion costs an epoll_ctl). uv_try_write
  // writes nothing while earlier writes are queued or the link is connecting, so order holds; on
  // any error the write is queued as before and its callback reports the error.
  auto* tcp = reinterpret_cast<uv_stream_t*>(&socket_->tcp);
  uv_buf_t direct = uv_buf_init(data.data(), static_cast<unsigned>(data.size()));
  const int written = uv_try_write(tcp, &direct, 1);
  if (written > 0) {
    if (static_cast<size_t>(written) == data.size()) {
      keep_spare(std::move(data));
      return;
    }
    data.erase(0, static_cast<size_t>(written));
  }
  auto* wr = new WriteRequest;
  wr->data = std::move(data);
  wr->req.data = socket_;
  uv_buf_t b = uv_buf_init(wr->data.data(), static_cast<unsigned>(wr->data.size()));
  int rc = uv_write(&wr->req, tcp, &b, 1, [](uv_write_t* req, int status) {
    auto* w = reinterpret_cast<WriteRequest*>(req);
    auto* s = static_cast<Socket*>(req->data);
    if (s->link != nullptr) s->link->keep_spare(std::move(w->data));
    delete w;
    if (status < 0 && s->link != nullptr)
      s->link->fail(LinkErrorKind::kUnreachable, uv_strerror(status));
  });
  if (rc != 0) {
    delete wr;
    fail(LinkErrorKind::kUnreachable, uv_strerror(rc));
  }
}

void PeerLink::keep_spare(std::string buffer) {
  // At most the buffer of one ordinary batch stays: one that a burst made large is let go.
  constexpr size_t kMaxSpare = 256 * 1024;
  if (buffer.capacity() > kMaxSpare || buffer.capacity() <= spare_.capacity()) return;
  buffer.clear();
  spare_ = std::move(buffer);
}

void PeerLink::reset_backoff() {
  backoff_ms_ = 0;
  if (state_ == State::kBackoff) state_ = State::kIdle;
  // A connection opened while the peer was hung (its handshake waiting in the peer's socket)
  // gets a fresh window now that the peer answers, instead of timing out at the next check.
  if (state_ == State::kConnecting || state_ == State::kHandshaking) {
    connect_started_ms_ = uv_now(loop_);
  }
}

void PeerLink::check_timeouts(uint64_t now_ms) {
  const bool opening = state_ == State::kConnecting || state_ == State::kHandshaking;
  if (opening && now_ms - connect_started_ms_ >= options_.connect_timeout_ms) {
    fail(state_ == State::kConnecting ? LinkErrorKind::kConnectTimeout
                                      : LinkErrorKind::kHandshakeTimeout);
    return;
  }
  bool head_stuck = false;
  for (size_t i = 0; i < inflight_.size(); ++i) {
    Request& req = inflight_[i];
    if (req.deadline_ms > now_ms) break;
    if (req.on_reply) {
      fail_request(req, LinkError{LinkErrorKind::kTimeout, address_, {}});
    } else if (i == 0 && now_ms >= req.deadline_ms + options_.request_timeout_ms) {
      head_stuck = true;
    }
  }
  // The oldest request has gone unanswered for twice the timeout: the link is wedged.
  if (head_stuck) fail(LinkErrorKind::kTimeout);
}

void PeerLink::fail_request(Request& req, const LinkError& error) {
  stats_.errors++;
  ReplyCallback cb = std::move(req.on_reply);
  req.on_reply = nullptr;
  if (!req.written) {
    cb({}, &error);
    return;
  }
  LinkError sent = error;
  sent.sent = true;
  cb({}, &sent);
}

void PeerLink::fail(LinkErrorKind kind, std::string_view detail) {
  LinkError error{kind, address_, std::string(detail)};
  if (!inflight_.empty() || state_ != State::kReady) {
    if (error.reason() != last_error_.reason() || state_ == State::kReady) {
      spdlog::warn("peer {} unavailable: {}", address_, error.reason());
    }
  }
  last_error_ = error;
  failed_ms_ = uv_now(loop_);
  if (socket_ != nullptr) {
    socket_->link = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&socket_->tcp),
             [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
    socket_ = nullptr;
  }
  if (state_ == State::kReady && inflight_.empty()) {
    // An idle link the peer closed (restart, idle timeout): reconnect on next use, no backoff.
    state_ = State::kIdle;
  } else {
    state_ = State::kBackoff;
    backoff_ms_ = backoff_ms_ == 0 ? std::min(kMinBackoffMs, options_.max_backoff_ms)
                                   : std::min(backoff_ms_ * 2, options_.max_backoff_ms);
    backoff_until_ms_ = uv_now(loop_) + backoff_ms_;
  }
  out_.clear();
  out_requests_ = 0;
  in_start_ = in_end_ = 0;
  scanner_.reset();
  handshake_.reset();
  tls_.reset();
  std::deque<Request> failed;
  failed.swap(inflight_);
  for (Request& req : failed) {
    if (req.on_reply) fail_request(req, error);
  }
  if (on_message_) {
    // Told once: a link that failed carries no stream any more.
    ReplyCallback cb = std::move(on_message_);
    on_message_ = nullptr;
    cb({}, &error);
  }
}

}  // namespace ringkv::cluster
