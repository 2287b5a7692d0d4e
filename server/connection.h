// Connection: one client socket. Owns its socket (TCP or Unix domain), read buffer and pending
// output; runs the parse → dispatch loop and batches every reply produced by one read into one
// write. The network layer knows no commands: it hands each parsed request to the Server.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/replication.h"
#include "common/tls.h"
#include "conf/options.h"
#include "engine/command.h"
#include "engine/commands/client_control.h"
#include "protocol/reply_writer.h"
#include "protocol/resp_parser.h"
#include "server/debug_link.h"
#include "server/transaction.h"

namespace ringkv::server {

class Server;

class Connection final : public engine::ClientSession {
 public:
  // `unix_socket`: accepted on the Unix domain socket (unixsocket) rather than over TCP.
  Connection(Server& server, uint64_t id, bool unix_socket = false);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The handle to pass to uv_accept.
  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&socket_); }
  // Whether the client connected over the Unix domain socket.
  bool unix_socket() const { return unix_socket_; }
  // Makes this connection TLS (it was accepted on tls-port); call before start().
  void use_tls(std::shared_ptr<const common::TlsContext> context);
  bool tls() const { return tls_ != nullptr; }
  // Whether the TLS handshake is done (always true for plain-text connections).
  bool tls_established() const { return tls_ == nullptr || tls_->established(); }
  // Whether the client presented a certificate the CAs verified.
  bool tls_peer_verified() const { return tls_ != nullptr && tls_->peer_verified(); }
  // Starts reading after a successful accept. Returns false if the socket is unusable.
  bool start();
  // Whether the client connected from a loopback address (127.0.0.0/8 or ::1).
  bool from_loopback() const;
  // Writes `text` as an error reply and closes once it is flushed (refused connections); a TLS
  // client still in its handshake is closed at once.
  void reject(std::string_view error_text);
  // Closes now, dropping pending output. The object deletes itself in the close callback.
  void close();
  // Stops reading; closes as soon as pending output is written (shutdown, QUIT, errors).
  void close_when_flushed();
  bool closing() const { return closing_; }

  // A place in this client's reply stream for a reply that completes later (a relayed request).
  // Replies written after it wait until it is filled, so replies leave in request order.
  class ReplySlot {
   public:
    // Stores the reply; a no-op when the connection has closed meanwhile. With `unblock`, the
    // client was blocked waiting for this reply (a relayed blocking command) and resumes.
    void fill(std::string_view reply_bytes, bool unblock = false) const;

   private:
    friend class Connection;
    ReplySlot(Connection* conn, std::shared_ptr<bool> alive, uint64_t seq)
        : conn_(conn), alive_(std::move(alive)), seq_(seq) {}
    Connection* conn_;
    std::shared_ptr<bool> alive_;
    uint64_t seq_;
  };
  ReplySlot reserve_reply();

  // The writer for the next request's reply, pointed at the right place in the reply stream.
  protocol::ReplyWriter& reply_writer();
  // The writer for a reply that completes a request later (a blocked client served): it writes
  // nothing while CLIENT REPLY is OFF.
  protocol::ReplyWriter& late_reply_writer();
  // Where a push (an invalidation) goes: after every reply written so far. Not for the client
  // whose command is running (its reply is being written).
  std::string& push_buffer();

  // Writes what fill() made ready (called by the Server once per loop iteration), and resumes
  // reading requests after the client was unblocked.
  void scheduled_flush();
  // Goes on with input left over when the last loop turn's share ran out (the server calls it
  // in the next turn).
  void continue_input();

  // A blocking command is waiting: requests after it are read but not run until unblock().
  void block() { blocked_ = true; }
  // The blocking command was answered: its reply goes out, and pending requests run, at the end
  // of this loop iteration.
  void unblock();
  bool blocked() const { return blocked_; }
  // The ring is switching: the request at the head of the input was not run; it runs (and
  // reading goes on) after resume().
  void hold() { held_ = true; }
  void resume();
  bool flush_scheduled() const { return flush_scheduled_; }

  // A script of this client is busy and the loop serves other clients meanwhile (see
  // server/scripting.cpp): nothing is read from the client, replies of its earlier requests
  // stay where they are (its current reply is being written behind them), and a close is put
  // off until unprotect().
  void protect();
  void unprotect();

  // MULTI/EXEC/WATCH state.
  Transaction& transaction() { return transaction_; }
  const Transaction& transaction() const { return transaction_; }

  // Which kind of connection CLIENT LIST/KILL TYPE sees: a peer's link, a subscriber or a
  // normal client.
  engine::ClientKind kind() const;
  // MONITOR was run on this connection: it receives the commands the node runs.
  bool monitoring() const { return monitoring_; }
  void set_monitoring(bool on) { monitoring_ = on; }

  // Marks this connection as a link from a peer node (see Server: peer handshake).
  void set_peer(bool peer) { peer_ = peer; }
  bool is_peer() const { return peer_; }
  // A peer's control link: it may carry ring-change frames only.
  void set_control_link(bool control) { control_link_ = control; }
  bool control_link() const { return control_link_; }
  // On a peer's link: the primary whose replication stream it carries ("" for none), set by
  // the stream's RINGKV.REPL HELLO.
  std::string& replication_source() { return replication_source_; }
  // On a stream's link: its frames ran here up to `offset` (the stream's first offset, from
  // HELLO, with `acknowledged`).
  void stream_ran(uint64_t offset, bool acknowledged = false) {
    stream_offset_ = offset;
    if (acknowledged) stream_acked_ = offset;
  }
  // The primary asked (RINGKV.REPL GETACK): the offset is acknowledged (":<offset>") before this
  // iteration's output goes out, once however many GETACKs the batch carried.
  void ack_stream() {
    if (stream_offset_ == stream_acked_) return;
    ack_asked_ = true;
    request_flush();
  }
  // On a peer's link: who it is and the ring its handshake was accepted with.
  void set_peer_identity(std::string address, uint64_t fingerprint) {
    peer_name_ = std::move(address);
    link_fingerprint_ = fingerprint;
  }
  const std::string& peer_name() const { return peer_name_; }
  // The ring the peer routes by from now on (RINGKV.VIEW).
  void set_link_fingerprint(uint64_t fingerprint) { link_fingerprint_ = fingerprint; }
  uint64_t link_fingerprint() const { return link_fingerprint_; }

  // Where this client's last write went, for WAIT: this node (address empty) with the offsets
  // its replicas must acknowledge, or a peer and one key it wrote there.
  struct LastWrite {
    std::string address;
    std::string key;
    cluster::ReplTicket ticket;
  };
  std::vector<LastWrite>& last_writes() { return last_writes_; }
  // Makes the client's last write the one write given (reusing the memory of the one before).
  void set_last_write(std::string_view address, std::string_view key,
                      const cluster::ReplTicket& ticket) {
    last_writes_.resize(1);
    LastWrite& w = last_writes_.front();
    w.address.assign(address);
    w.key.assign(key);
    w.ticket.parts.assign(ticket.parts.begin(), ticket.parts.end());
    w.ticket.mixed = ticket.mixed;
  }

  // What a tool announced with REPLCONF before SYNC/PSYNC (see server/snapshot_sync.h).
  struct ReplicaHandshake {
    bool capa_eof = false;        // takes a snapshot of unknown length, ended by a marker
    bool rdb_only = false;        // wants the snapshot only, no command stream after it
    bool listening_port = false;  // announced itself as a replica (REPLICAOF)
  };
  ReplicaHandshake& replica_handshake() { return replica_; }

  // Re-reads the per-client limits from the server's configuration (after CONFIG SET).
  void apply_limits();

  // Milliseconds (loop time) of the last request or reply.
  uint64_t last_interaction_ms() const { return last_interaction_ms_; }
  uint64_t created_ms() const { return created_ms_; }
  const std::string& peer_address() const { return peer_addr_; }
  const std::string& local_address() const { return local_addr_; }
  size_t pending_output() const { return out_.size() + tls_wire_.size() + in_flight_bytes_; }
  // Bytes of its input buffer, and of every buffer it holds (CLIENT LIST's tot-mem).
  size_t input_buffer_size() const { return rbuf_.size(); }
  size_t buffer_memory() const {
    return rbuf_.capacity() + out_.capacity() + tls_wire_.capacity() + in_flight_bytes_ +
           sizeof(Connection);
  }

  // Output was written through reply_writer() outside a request of this client (a published
  // message): it goes out at the end of this loop iteration.
  void output_added() { request_flush(); }
  // Applies the client's class of client-output-buffer-limit (normal, or pubsub for a
  // subscriber) to its unsent output: closes the connection, with Redis's warning, when it
  // reaches the hard limit or has stayed at or over the soft limit for longer than its period.
  // Returns false when the connection is closed.
  bool enforce_output_limits();

  // engine::ClientSession
  uint64_t id() const override { return id_; }
  std::string_view name() const override { return name_; }
  void set_name(std::string_view name) override { name_ = name; }
  protocol::RespVersion resp() const override { return writer_.version(); }
  void set_resp(protocol::RespVersion v) override { writer_.set_version(v); }
  int db() const override { return db_; }
  void set_db(int db) override { db_ = db; }
  void close_after_reply() override { close_after_reply_ = true; }
  void reset_state() override;
  std::string info_line() const override;
  bool authenticated() const override { return authenticated_; }
  void set_authenticated(bool yes) override { authenticated_ = yes; }
  const engine::acl::User* user() const override { return user_.get(); }
  void set_user(std::shared_ptr<engine::acl::User> user) override { user_ = std::move(user); }
  bool in_transaction() const override { return transaction_.active; }
  void set_reply_mode(ReplyMode mode) override;
  void set_no_evict(bool on) override { no_evict_ = on; }
  engine::ClientTracking* tracking() override { return &tracking_; }
  ScriptDebug script_debug() const override { return script_debug_; }
  void set_script_debug(ScriptDebug mode) override { script_debug_ = mode; }
  engine::DebugLink* debug_link() override;
  // A forked debugging copy carries the connection on (SCRIPT DEBUG YES): this node closes its
  // copy without ending the TLS session.
  void hand_over_session() { session_handed_over_ = true; }
  // The connection's socket descriptor; -1 when it has none.
  int socket_fd() const;
  bool has_pending_replies() const override { return !out_.empty() || !pending_.empty(); }
  const engine::ClientTracking& tracking_state() const { return tracking_; }

  // Records the command that ran last (CLIENT LIST's cmd=).
  void set_last_command(const engine::CommandSpec* spec) { last_command_ = spec; }
  const engine::CommandSpec* last_command() const { return last_command_; }

 private:
  struct WriteRequest;

  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void on_write(uv_write_t* req, int status);
  static void on_close(uv_handle_t* handle);

  struct PendingReply {
    bool ready;  // filled (or a run of local replies written after a pending one)
    std::string data;
    bool discard = false;  // reserved while CLIENT REPLY dropped its request's reply
  };
  void fill_slot(uint64_t seq, std::string_view bytes);
  void request_flush();
  // Moves filled replies at the head of pending_ into out_.
  void drain_pending();

  void process_input();
  // Stops reading and leaves the buffered input for the server's input task (next loop turn).
  void defer_input();
  // Reads the complete plain requests after the one just parsed (its `parsed` bytes at rstart_,
  // its arguments in argv_) — a pipelined batch, read once into ahead_ — and prefetches the keys
  // of them all (not of a lone request).
  void prefetch_ahead(size_t parsed);
  // The next request of the batch: its length, with `argv` its arguments (views into ahead_args_,
  // valid until the next prefetch_ahead), or 0 when the batch is used up or no longer read as
  // the parser would now (the client is no longer authenticated).
  size_t take_ahead(std::span<const std::string_view>& argv);
  // Unsent output is over the back-pressure threshold: read and run nothing more for now.
  bool output_backlogged() const;
  // The unparsed input, with the rest of a bulk it declares, exceeds client-query-buffer-limit.
  bool query_buffer_over_limit() const;
  // The output buffer limits that apply to this client; null for none (peer links).
  const conf::OutputBufferLimit* output_limit_class() const;
  void flush();
  // Hands `wire` (out_, or the TLS records) to libuv: at once if the socket takes it, else as a
  // write request that owns the bytes.
  void write_wire(std::string& wire);
  // Appends bytes to the unparsed input, growing the read buffer as needed.
  void append_input(const char* data, size_t n);
  // Decrypts `n` bytes just read into tls_in_; false when the connection closed.
  bool receive_tls(size_t n);
  // A TLS error: logs it, sends OpenSSL's alert and closes.
  void tls_failed();
  void maybe_finish_close();
  void update_reading();
  // Redis's clientSetDefaultAuth: the default user, logged in when it needs no password.
  void set_default_auth();

  // The handle, cast to uv_handle_t for the calls every kind of stream takes.
  uv_handle_t* handle() { return reinterpret_cast<uv_handle_t*>(&socket_); }
  const uv_handle_t* handle() const { return reinterpret_cast<const uv_handle_t*>(&socket_); }

  Server& server_;
  // A TCP or a Unix domain socket: both are libuv streams, started the same way.
  union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } socket_;
  const bool unix_socket_;
  const uint64_t id_;
  std::string name_;
  std::string peer_addr_;
  std::string local_addr_;
  uint64_t created_ms_;
  uint64_t last_interaction_ms_;
  const engine::CommandSpec* last_command_ = nullptr;

  std::vector<char> rbuf_;
  size_t rstart_ = 0;  // first unparsed byte
  size_t rend_ = 0;    // end of received bytes
  // The batch prefetch_ahead() read: each request's length and the end of its arguments in
  // ahead_args_ (views into rbuf_, dropped when process_input() returns or the limits change).
  std::vector<std::pair<size_t, size_t>> ahead_;
  std::vector<std::string_view> ahead_args_;
  size_t ahead_next_ = 0;  // the next request of ahead_ to run
  protocol::RespParser parser_;
  std::vector<std::string_view> argv_;

  std::string out_;                          // replies not yet handed to libuv (plain text)
  std::unique_ptr<common::TlsChannel> tls_;  // TLS connections only
  std::unique_ptr<DebugLink> debug_link_;    // made by debug_link(), for SCRIPT DEBUG
  bool session_handed_over_ = false;         // hand_over_session()
  std::vector<char> tls_in_;                 // ciphertext being read
  std::string tls_wire_;                     // TLS records not yet handed to libuv
  bool first_read_ = true;
  protocol::ReplyWriter writer_;
  size_t in_flight_bytes_ = 0;
  size_t in_flight_writes_ = 0;

  // Replies behind a reply that is not complete yet; pending_.front() has sequence pending_seq_.
  std::deque<PendingReply> pending_;
  uint64_t pending_seq_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool peer_ = false;
  bool control_link_ = false;
  int db_ = 0;  // SELECTed database
  bool monitoring_ = false;
  std::string replication_source_;
  uint64_t stream_offset_ = 0;  // see stream_ran()
  uint64_t stream_acked_ = 0;
  bool ack_asked_ = false;
  std::string peer_name_;
  uint64_t link_fingerprint_ = 0;
  std::vector<LastWrite> last_writes_;
  // The ACL user commands run as (default until AUTH or HELLO ... AUTH).
  std::shared_ptr<engine::acl::User> user_;
  // Logged in: by AUTH, or at connection when the default user is on and takes no password.
  bool authenticated_ = false;
  Transaction transaction_;
  ReplicaHandshake replica_;
  // Loop time the output first reached the soft limit; 0 while it is under it.
  uint64_t soft_limit_since_ms_ = 0;
  bool flush_scheduled_ = false;
  bool blocked_ = false;
  bool held_ = false;
  bool input_deferred_ = false;  // input left for the next loop turn (see continue_input)
  bool protected_ = false;
  bool close_deferred_ = false;

  bool reading_ = false;
  bool closing_ = false;  // uv_close called
  bool close_when_flushed_ = false;
  bool close_after_reply_ = false;  // set by a command (QUIT)

  // CLIENT REPLY: OFF drops every reply until ON; SKIP drops the next request's (skip_next_
  // becomes skip_this_ when the SKIP request is done). While a dropped request runs its writer
  // writes into discard_.
  bool reply_off_ = false;
  bool skip_next_ = false;
  bool skip_this_ = false;
  bool dropping_ = false;
  std::string discard_;
  bool no_evict_ = false;  // CLIENT NO-EVICT ON
  ScriptDebug script_debug_ = ScriptDebug::kOff;
  engine::ClientTracking tracking_;
};

// The connection a command runs for (every command's client is one).
inline Connection& connection_of(engine::CommandContext& ctx) {
  return *static_cast<Connection*>(ctx.client);
}

}  // namespace ringkv::server
