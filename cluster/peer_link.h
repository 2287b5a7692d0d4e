// PeerLink: one long-lived, pipelined connection to a peer node.
//
// Requests are RESP frames written back to back; replies are matched to requests first in,
// first out. The link opens itself on first use, then runs the peer handshake (see
// PeerHandshake) and carries requests only once the peer accepted it (so the peer runs what
// arrives here locally and never relays it again); requests queued meanwhile wait, as they do
// while connecting. It reconnects with backoff after failures, and fails requests promptly with
// "-ERR peer HOST:PORT unavailable: <reason>" instead of leaving clients waiting.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/link_error.h"
#include "common/tls.h"
#include "protocol/reply_reader.h"

namespace ringkv::cluster {

struct LinkOptions {
  uint64_t connect_timeout_ms = 1000;
  uint64_t request_timeout_ms = 5000;  // 0 = requests wait for their reply however long it takes
  uint64_t max_backoff_ms = 5000;      // longest wait before reconnecting after a failure
  // tls-cluster: the TLS context a new connection uses (the current one when it connects); a
  // null function or context means plain text.
  std::function<std::shared_ptr<const common::TlsContext>()> tls = nullptr;
};

// Per-link counters for INFO cluster and CLUSTER NODES.
struct LinkStats {
  uint64_t requests = 0;
  uint64_t errors = 0;  // requests failed by the link (not error replies from the peer)
  uint64_t connects = 0;
  uint64_t replies = 0;     // requests the peer answered
  uint64_t reply_usec = 0;  // their round trips added up (from write to reply, microseconds)
};

// What the handshake wants next after one of its replies.
struct HandshakeStep {
  std::string refused;  // why the link must not be used ("" if it may go on)
  std::string next;     // the next handshake frame to send; "" (and not refused): link usable
};

// One connection's side of the handshake, made afresh for each connection (it may hold that
// connection's nonces).
class PeerHandshake {
 public:
  virtual ~PeerHandshake() = default;
  // The first handshake frame.
  virtual std::string open() = 0;
  // Judges the reply to the last handshake frame sent.
  virtual HandshakeStep on_reply(std::string_view reply) = 0;
};

class PeerLink {
 public:
  // kHandshaking: connected, the handshake not finished; requests wait as in kConnecting.
  enum class State { kIdle, kConnecting, kHandshaking, kReady, kBackoff };

  // Called with the peer's reply bytes (and a null error), or with the reason the link failed the
  // request (and an empty reply).
  using ReplyCallback = std::function<void(std::string_view reply, const LinkError* error)>;
  // Makes the handshake for a new connection. A refusal fails everything the link carried with
  // that reason.
  using HandshakeFactory = std::function<std::unique_ptr<PeerHandshake>()>;

  PeerLink(uv_loop_t* loop, std::string address, LinkOptions options,
           HandshakeFactory make_handshake);
  ~PeerLink();
  PeerLink(const PeerLink&) = delete;
  PeerLink& operator=(const PeerLink&) = delete;

  // Queues one request (a complete RESP frame). The frame is written at the end of this loop
  // iteration together with the others (see flush); `on_reply` runs exactly once.
  void send(std::string_view frame, ReplyCallback on_reply);
  // Appends a request whose frame the caller writes into frame_buffer() right before.
  std::string& frame_buffer() { return out_; }
  void commit(ReplyCallback on_reply);
  // For a stream of frames the peer does not answer one by one (a replication stream: frames
  // written into frame_buffer() without commit()): the peer's messages that answer no request
  // go to `on_message`, which also learns once why the link failed. Without it such a message
  // is a protocol error.
  void set_message_handler(ReplyCallback on_message) { on_message_ = std::move(on_message); }

  // Writes the frames queued since the last flush (one write per loop iteration).
  void flush();
  // Forgets the reconnect delay after failures, and restarts the connect timeout of a
  // connection being opened (the peer is known to answer again).
  void reset_backoff();
  // Closes the link, failing everything queued or in flight with `kind`.
  void close(LinkErrorKind kind) { fail(kind); }
  // Fails requests older than the request timeout; gives up a connect (handshake included) that
  // takes too long.
  void check_timeouts(uint64_t now_ms);

  State state() const { return state_; }
  // Connected or connecting: a frame queued now goes out on the connection the queued requests
  // use (an idle or backed-off link opens a new one, with a new handshake, when next used).
  bool has_connection() const {
    return state_ == State::kConnecting || state_ == State::kHandshaking || state_ == State::kReady;
  }
  const std::string& address() const { return address_; }
  const LinkStats& stats() const { return stats_; }
  size_t in_flight() const { return inflight_.size(); }
  bool needs_flush() const { return !out_.empty() && state_ == State::kReady; }
  // Why the link last failed (meaningful once it has failed).
  const LinkError& last_error() const { return last_error_; }
  // Loop times (ms) of the last reply read (handshake included) and of the last failure.
  uint64_t last_answer_ms() const { return last_answer_ms_; }
  uint64_t failed_ms() const { return failed_ms_; }

 private:
  struct Socket;
  struct Request {
    ReplyCallback on_reply;  // empty once the request timed out (its reply is then dropped)
    uint64_t deadline_ms;
    uint64_t sent_ns = 0;  // uv_hrtime() when written: the round trip INFO cluster reports
    bool written = false;  // its frame went to the socket (the peer may have run it)
  };

  void connect();
  void on_connected(int status);
  void on_data();
  // Passes a reply to the handshake; returns false if the link failed.
  bool on_handshake_reply(std::string_view reply);
  // Makes room for n more bytes of input after in_end_.
  void reserve_input(size_t n);
  // Closes the socket and fails everything queued or in flight with that error.
  void fail(LinkErrorKind kind, std::string_view detail = {});
  void fail_request(Request& req, const LinkError& error);
  // Writes the queued frames (out_).
  void start_write();
  // Writes `data` now (a handshake frame; queued requests stay queued), encrypted on TLS links.
  void write(std::string data);
  // Hands bytes to the socket as they are.
  void write_raw(std::string data);
  // Keeps a written batch's buffer as spare_ (see there).
  void keep_spare(std::string buffer);
  // On a TLS link: decrypts the `n` bytes just read at in_end_ in place of them; false when the
  // link failed.
  bool decrypt_input(size_t n);

  uv_loop_t* loop_;
  std::string address_;
  std::string host_;
  int port_ = 0;
  LinkOptions options_;
  HandshakeFactory make_handshake_;
  std::unique_ptr<PeerHandshake> handshake_;  // this connection's, while kHandshaking

  State state_ = State::kIdle;
  Socket* socket_ = nullptr;
  std::unique_ptr<common::TlsChannel> tls_;  // this connection's TLS, on tls-cluster links
  uint64_t connect_started_ms_ = 0;
  uint64_t backoff_until_ms_ = 0;
  uint64_t last_answer_ms_ = 0;
  uint64_t failed_ms_ = 0;
  uint64_t backoff_ms_ = 0;
  LinkError last_error_{LinkErrorKind::kUnreachable, {}, {}};  // reason "" until a failure

  std::string out_;  // frames not yet written
  // The buffer of the last completed write, kept (cleared) to become out_ at the next write: a
  // batch's frames are appended into memory that is already there.
  std::string spare_;
  size_t out_requests_ = 0;       // requests whose frames are in out_
  std::deque<Request> inflight_;  // requests written or queued, oldest first
  std::vector<char> in_;          // input buffer; [in_start_, in_end_) not yet matched
  size_t in_start_ = 0;
  size_t in_end_ = 0;
  protocol::ReplyScanner scanner_;
  ReplyCallback on_message_;
  LinkStats stats_;
};

}  // namespace ringkv::cluster
