// CLUSTER IMPORT: one source's replication link (see import.h).
#include "server/import.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "engine/commands/string_ops.h"
#include "engine/rdb/crc64.h"
#include "engine/rdb/rdb_format.h"
#include "protocol/errors.h"
#include "protocol/request_writer.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Reading from the source pauses while this many commands wait for their owners' answers.
constexpr uint64_t kImportMaxInFlight = 20000;
constexpr uint64_t kRetryMs = 1000;
// Commands whose owner was unavailable: a new snapshot after 1 s, then 2, 4... up to this.
constexpr uint64_t kMaxOwnerRetryMs = 30000;
// A node started again waits this long before resuming its imports.
constexpr uint64_t kResumeDelayMs = 3000;
constexpr size_t kImportReadChunk = 256 * 1024;
constexpr size_t kMarkBytes = 40;
// Errors logged one by one before they are only counted.
constexpr uint64_t kLoggedErrors = 10;

std::string_view first_line(std::string_view reply) {
  const size_t end = reply.find("\r\n");
  return reply.substr(0, std::min<size_t>(end, 200));
}

}  // namespace

struct ImportSource::Socket {
  uv_tcp_t tcp;
  uv_connect_t connect;
  ImportSource* owner;
  char buf[kImportReadChunk];
};

ImportSource::ImportSource(Server& server, std::string host, int port, std::string password,
                           uint64_t client_id)
    : server_(server),
      host_(std::move(host)),
      port_(port),
      password_(std::move(password)),
      client_id_(client_id),
      key_log_(server.config().persistence.dir, host_ + ":" + std::to_string(port_)),
      failovers_seen_(server.cluster()->failovers_seen()) {}

ImportSource::~ImportSource() {
  *alive_ = false;
  close_socket();
}

std::string_view ImportSource::state_name(State s) {
  switch (s) {
    case State::kConnecting:
      return "connecting";
    case State::kHandshake:
      return "handshake";
    case State::kSnapshot:
      return "loading";
    case State::kStreaming:
      return "streaming";
    case State::kRetrying:
      return "reconnecting";
    case State::kStopped:
      return "stopped";
  }
  return "?";
}

void ImportSource::start() {
  key_log_.clear();
  connect();
  save();
}

void ImportSource::resume(const ImportRecord& record) {
  password_ = record.password;
  key_log_.load(known_);
  offset_ = applied_offset_ = record.offset;
  // A snapshot or a write unsafe to apply twice may have been in flight: a new snapshot, which
  // replaces every key and deletes those gone, is the exact way back.
  replid_ = record.resync ? std::string() : record.replid;
  recorded_unsafe_ = record.resync;
  if (!record.running) {
    state_ = State::kStopped;
    return;
  }
  spdlog::info("import from {}: resuming after a restart ({}) in {} s", address(),
               replid_.empty() ? "with a new snapshot"
                               : "at offset " + std::to_string(offset_ + 1) + " of " + replid_,
               kResumeDelayMs / 1000);
  // First the members hear of it (announced each second): a CLUSTER IMPORT STOP given elsewhere
  // while this node was down arrives before it applies anything.
  state_ = State::kRetrying;
  next_connect_ms_ = uv_now(server_.loop()) + kResumeDelayMs;
}

ImportRecord ImportSource::record() {
  ImportRecord r;
  r.source = address();
  r.password = password_;
  r.running = state_ != State::kStopped;
  r.replid = replid_;
  r.offset = applied_offset_;
  r.resync = needs_resync();
  recorded_unsafe_ = r.resync;
  return r;
}

bool ImportSource::needs_resync() const {
  // A snapshot's key sent is past the recorded offset (the snapshot is).
  return replid_.empty() || state_ == State::kSnapshot || snapshot_in_flight_ > 0 ||
         last_unsafe_offset_ > applied_offset_ ||
         std::any_of(held_.begin(), held_.end(),
                     [](const Held& h) { return h.kind == Kind::kSnapshotKey; });
}

void ImportSource::save() { server_.save_imports(); }

void ImportSource::restart(std::string password) {
  password_ = std::move(password);
  if (errors_ > 0) {
    spdlog::info("import from {}: {} commands failed before it stopped: asking for a new snapshot",
                 address(), errors_);
    replid_.clear();
    errors_ = 0;
  }
  connect();
  save();
}

void ImportSource::stop(bool record) {
  // Half a snapshot can't be continued by a later restart().
  if (state_ == State::kSnapshot) replid_.clear();
  close_socket();
  state_ = State::kStopped;
  loader_.reset();
  if (record) save();
  spdlog::info(
      "import from {} stopped: {} keys loaded, {} commands applied, offset {}, {} errors{}",
      address(), keys_loaded_, commands_, applied_offset_, errors_,
      last_error_.empty() ? "" : " (last: " + last_error_ + ")");
}

void ImportSource::close_socket() {
  if (socket_ == nullptr) return;
  socket_->owner = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&socket_->tcp),
           [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
  socket_ = nullptr;
  reading_ = false;
}

void ImportSource::connect() {
  sockaddr_storage addr{};
  const std::string host = host_ == "localhost" ? "127.0.0.1" : host_;
  int rc = uv_ip4_addr(host.c_str(), port_, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) rc = uv_ip6_addr(host.c_str(), port_, reinterpret_cast<sockaddr_in6*>(&addr));
  state_ = State::kConnecting;
  if (rc != 0) {
    disconnect("invalid address");
    return;
  }
  socket_ = new Socket;
  socket_->owner = this;
  uv_tcp_init(server_.loop(), &socket_->tcp);
  socket_->tcp.data = socket_;
  socket_->connect.data = socket_;
  rc = uv_tcp_connect(&socket_->connect, &socket_->tcp, reinterpret_cast<const sockaddr*>(&addr),
                      [](uv_connect_t* req, int status) {
                        auto* s = static_cast<Socket*>(req->data);
                        if (s->owner != nullptr) s->owner->on_connected(status);
                      });
  if (rc != 0) disconnect(uv_strerror(rc));
}

void ImportSource::on_connected(int status) {
  if (status != 0) {
    disconnect(uv_strerror(status));
    return;
  }
  uv_tcp_nodelay(&socket_->tcp, 1);
  state_ = State::kHandshake;
  in_.clear();
  in_pos_ = 0;
  expected_.clear();
  // One at a time: Redis refuses PSYNC while replies to earlier commands are unsent.
  if (!password_.empty()) expected_.push_back({"AUTH", password_});
  expected_.push_back({"REPLCONF", "listening-port", std::to_string(server_.config().server.port)});
  expected_.push_back({"REPLCONF", "capa", "eof", "capa", "psync2"});
  // Resumes after the last command read (those still in flight complete on their own) when the
  // source still has that part of its stream.
  expected_.push_back({"PSYNC", replid_.empty() ? "?" : replid_,
                       replid_.empty() ? "-1" : std::to_string(offset_ + 1)});
  send_command(expected_.front());
  update_reading();
}

void ImportSource::update_reading() {
  if (socket_ == nullptr || state_ == State::kConnecting) return;
  const bool want = in_flight_ < kImportMaxInFlight;
  if (want == reading_) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&socket_->tcp);
  if (!want) {
    uv_read_stop(stream);
    reading_ = false;
    return;
  }
  reading_ = true;
  uv_read_start(
      stream,
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* s = static_cast<Socket*>(h->data);
        *buf = uv_buf_init(s->buf, sizeof(s->buf));
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        auto* s = static_cast<Socket*>(stream->data);
        ImportSource* self = s->owner;
        if (self == nullptr || nread == 0) return;
        if (nread < 0) {
          self->disconnect(nread == UV_EOF ? "connection closed by the source"
                                           : uv_strerror(static_cast<int>(nread)));
          return;
        }
        self->on_read(std::string_view(buf->base, static_cast<size_t>(nread)));
      });
}

void ImportSource::send(std::string_view bytes) {
  if (socket_ == nullptr) return;
  struct Write {
    uv_write_t req;
    std::string data;
  };
  auto* w = new Write{{}, std::string(bytes)};
  w->req.data = w;
  uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&socket_->tcp), &buf, 1,
                          [](uv_write_t* req, int) { delete static_cast<Write*>(req->data); });
  if (rc != 0) delete w;
}

void ImportSource::send_command(const std::vector<std::string>& argv) {
  std::string out;
  protocol::append_request(out, std::vector<std::string_view>(argv.begin(), argv.end()));
  send(out);
}

void ImportSource::disconnect(const std::string& why) {
  if (state_ == State::kStopped) return;
  close_socket();
  disconnects_++;
  last_error_ = why;
  if (state_ == State::kSnapshot) {
    // Half a snapshot can't be continued: the next link asks for a whole one.
    loader_.reset();
    replid_.clear();
  }
  state_ = State::kRetrying;
  next_connect_ms_ = uv_now(server_.loop()) + kRetryMs;
  spdlog::warn("import from {}: {}; reconnecting", address(), why);
}

void ImportSource::on_read(std::string_view data) {
  in_.append(data);
  holding_ = true;
  const bool open = process();
  holding_ = false;
  dispatch_held();
  if (!open) return;
  if (in_pos_ > 0 && (in_pos_ == in_.size() || in_pos_ >= (1u << 20))) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
  }
}

bool ImportSource::process() {
  while (socket_ != nullptr) {
    if (state_ == State::kHandshake) {
      // While a source prepares a full resync it sends newlines to keep the link alive.
      while (in_pos_ < in_.size() && in_[in_pos_] == '\n') in_pos_++;
      const size_t eol = in_.find("\r\n", in_pos_);
      if (eol == std::string::npos) return true;
      const std::string line = in_.substr(in_pos_, eol - in_pos_);
      in_pos_ = eol + 2;
      if (!handshake_reply(line)) return socket_ != nullptr;
      continue;
    }
    if (state_ == State::kSnapshot) {
      if (!snapshot_bytes()) return socket_ != nullptr;
      continue;
    }
    if (state_ == State::kStreaming) {
      stream_commands();
      return socket_ != nullptr;
    }
    return true;
  }
  return false;
}

bool ImportSource::handshake_reply(std::string_view line) {
  // Before a full resync's payload the source sends newlines to keep the link alive.
  if (expected_.empty()) {
    if (line.empty()) return true;
    disconnect("unexpected reply: " + std::string(line.substr(0, 200)));
    return false;
  }
  const std::string what = expected_.front()[0];
  if (what != "PSYNC") {
    // REPLCONF options an older source does not know are not fatal (as for a Redis replica).
    if (what == "AUTH" && line != "+OK") {
      disconnect("AUTH refused: " + std::string(line));
      return false;
    }
    expected_.pop_front();
    send_command(expected_.front());
    return true;
  }
  if (line.empty()) return true;
  if (line.rfind("+FULLRESYNC ", 0) == 0) {
    expected_.clear();
    const std::string_view rest = std::string_view(line).substr(12);
    const size_t space = rest.find(' ');
    replid_ = std::string(rest.substr(0, space));
    int64_t offset = 0;
    engine::parse_int64(space == std::string_view::npos ? "0" : rest.substr(space + 1), offset);
    offset_ = applied_offset_ = static_cast<uint64_t>(offset);
    pending_.clear();
    pending_base_ = next_seq_;
    // Keys imported before (by this node before a restart too) are replaced, and those gone
    // deleted.
    resync_ = full_syncs_ > 0 || !known_.empty();
    sync_number_++;
    unavailable_ = 0;
    last_unsafe_offset_ = 0;
    fresh_.clear();
    full_syncs_++;
    state_ = State::kSnapshot;
    loader_.reset();
    payload_left_ = 0;
    mark_.clear();
    snapshot_started_ms_ = uv_now(server_.loop());
    spdlog::info("import from {}: full resync ({} {}), loading its snapshot", address(), replid_,
                 offset);
    return true;
  }
  if (line.rfind("+CONTINUE", 0) == 0) {
    expected_.clear();
    if (line.size() > 10) replid_ = line.substr(10);
    partial_syncs_++;
    state_ = State::kStreaming;
    parser_.reset();
    save();
    spdlog::info("import from {}: the stream continues at offset {}", address(), offset_ + 1);
    return true;
  }
  disconnect("PSYNC refused: " + std::string(line.substr(0, 200)));
  return false;
}

bool ImportSource::snapshot_bytes() {
  if (loader_ == nullptr) {
    // The payload's header: $<len> or $EOF:<mark>, after keep-alive newlines.
    while (in_pos_ < in_.size() && in_[in_pos_] == '\n') in_pos_++;
    const size_t eol = in_.find("\r\n", in_pos_);
    if (eol == std::string::npos) return false;
    const std::string_view header = std::string_view(in_).substr(in_pos_, eol - in_pos_);
    if (header.rfind("$EOF:", 0) == 0 && header.size() == 5 + kMarkBytes) {
      eof_mark_ = true;
      mark_ = header.substr(5);
    } else {
      int64_t len = 0;
      if (header.empty() || header[0] != '$' || !engine::parse_int64(header.substr(1), len) ||
          len < 0) {
        disconnect("bad snapshot header: " + std::string(header.substr(0, 100)));
        return false;
      }
      eof_mark_ = false;
      payload_left_ = static_cast<uint64_t>(len);
    }
    in_pos_ = eol + 2;
    mark_tail_.clear();
    loader_ = std::make_unique<persistence::RdbLoader>([this](persistence::RdbKey& key) {
      // A cluster serves database 0 only (as Redis Cluster).
      if (key.db != 0) {
        return "key '" + std::string(key.key) + "' in database " + std::to_string(key.db) +
               ": a cluster has database 0 only";
      }
      snapshot_key(key);
      return std::string();
    });
  }
  using LoaderState = persistence::RdbLoader::State;
  if (loader_->state() == LoaderState::kLoading) {
    if (in_pos_ == in_.size()) return false;
    std::string_view chunk = std::string_view(in_).substr(in_pos_);
    if (!eof_mark_) chunk = chunk.substr(0, std::min<uint64_t>(chunk.size(), payload_left_));
    // The end of the transfer is here (all of $<len>, or its marker arrived): the loader parses
    // what it holds at once instead of waiting for more bytes.
    bool end = false;
    if (eof_mark_) {
      std::string window = mark_tail_;
      window.append(chunk.substr(0, std::min(chunk.size(), kMarkBytes)));
      end = chunk.find(mark_) != std::string_view::npos || window.find(mark_) != std::string::npos;
      mark_tail_.append(chunk.substr(chunk.size() - std::min(chunk.size(), kMarkBytes)));
      if (mark_tail_.size() > kMarkBytes) mark_tail_.erase(0, mark_tail_.size() - kMarkBytes);
    } else {
      end = chunk.size() == payload_left_;
      payload_left_ -= chunk.size();
    }
    in_pos_ += chunk.size();
    loader_->feed(chunk);
    if (end) loader_->parse_now();
    if (loader_->state() == LoaderState::kFailed) {
      disconnect("the snapshot is not a valid RDB: " + loader_->error());
      return false;
    }
    if (socket_ == nullptr || loader_->state() != LoaderState::kDone) return false;
    // The loader was fed past the RDB's end (the marker, perhaps commands): those come first.
    if (eof_mark_) {
      in_ = std::string(loader_->unconsumed()) + in_.substr(in_pos_);
      in_pos_ = 0;
    }
  }
  if (eof_mark_) {
    if (in_.size() - in_pos_ < kMarkBytes) return false;
    if (std::string_view(in_).substr(in_pos_, kMarkBytes) != mark_) {
      disconnect("the snapshot does not end with its mark");
      return false;
    }
    in_pos_ += kMarkBytes;
  } else if (payload_left_ > 0) {
    // $<len> beyond the RDB's end (not written by Redis): skipped.
    const uint64_t skip = std::min<uint64_t>(payload_left_, in_.size() - in_pos_);
    in_pos_ += skip;
    payload_left_ -= skip;
    if (payload_left_ > 0) return false;
  }
  snapshot_done();
  return true;
}

void ImportSource::snapshot_key(persistence::RdbKey& key) {
  snapshot_keys_++;
  // A DUMP payload of the value as it came: RESTORE decodes it on the owner.
  std::string payload;
  payload.reserve(key.raw_value.size() + 11);
  payload.push_back(static_cast<char>(key.type));
  payload.append(key.raw_value);
  payload.push_back(static_cast<char>(engine::rdb::kVersion & 0xff));
  payload.push_back(static_cast<char>(engine::rdb::kVersion >> 8));
  const uint64_t crc = engine::crc64(0, payload);
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  remember(key.key, true);
  std::vector<std::string> argv = {"RESTORE", std::string(key.key),
                                   std::to_string(key.expire_ms < 0 ? 0 : key.expire_ms),
                                   std::move(payload), "ABSTTL"};
  if (resync_) argv.emplace_back("REPLACE");
  if (key.idle_seconds >= 0) {
    argv.emplace_back("IDLETIME");
    argv.emplace_back(std::to_string(key.idle_seconds));
  } else if (key.freq >= 0) {
    argv.emplace_back("FREQ");
    argv.emplace_back(std::to_string(key.freq));
  }
  apply(std::move(argv), Kind::kSnapshotKey, 0);
}

void ImportSource::remember(std::string_view key, bool snapshot) {
  // During a new snapshot the keys it has are set apart; the log holds every key either had.
  if (snapshot && resync_) {
    if (fresh_.emplace(key).second && known_.count(std::string(key)) == 0) key_log_.add(key);
    return;
  }
  if (known_.emplace(key).second) key_log_.add(key);
}

void ImportSource::snapshot_done() {
  snapshot_ms_ = uv_now(server_.loop()) - snapshot_started_ms_;
  spdlog::info("import from {}: snapshot of {} keys read in {} ms; streaming from offset {}",
               address(), loader_->keys(), snapshot_ms_, offset_);
  loader_.reset();
  if (resync_) {
    // Keys imported before that the new snapshot does not have were deleted on the source
    // meanwhile (its stream could not be resumed).
    uint64_t deleted = 0;
    for (const std::string& k : known_) {
      if (fresh_.count(k) != 0) continue;
      apply({"DEL", k}, Kind::kSnapshotKey, 0);
      deleted++;
    }
    // They stay known: a DEL whose owner was unavailable is sent again at the next resync (as
    // the key log, which a restarted node reads, keeps every name too).
    known_.merge(fresh_);
    fresh_.clear();
    if (deleted > 0) {
      spdlog::info("import from {}: {} keys the source does not have (any more) deleted", address(),
                   deleted);
    }
  }
  state_ = State::kStreaming;
  parser_.reset();
  db_ = 0;
}

void ImportSource::stream_commands() {
  while (in_pos_ < in_.size() && socket_ != nullptr) {
    auto r =
        parser_.parse(std::span<const char>(in_.data() + in_pos_, in_.size() - in_pos_), argv_);
    if (r.status == protocol::ParseStatus::kIncomplete) return;
    if (r.status == protocol::ParseStatus::kError) {
      disconnect("bad replication stream: " + std::string(r.error));
      return;
    }
    in_pos_ += r.consumed;
    offset_ += r.consumed;
    if (argv_.empty()) continue;
    const std::string_view name = argv_[0];
    if (engine::equals_ignore_case(name, "ping") || engine::equals_ignore_case(name, "multi") ||
        engine::equals_ignore_case(name, "exec")) {
      // Nothing to apply: a transaction's commands run one by one on their owners.
      apply({}, Kind::kNoop, offset_);
      continue;
    }
    if (engine::equals_ignore_case(name, "replconf")) {
      if (argv_.size() > 1 && engine::equals_ignore_case(argv_[1], "getack")) {
        send_command({"REPLCONF", "ACK", std::to_string(applied_offset_)});
      }
      apply({}, Kind::kNoop, offset_);
      continue;
    }
    if (engine::equals_ignore_case(name, "select")) {
      int64_t db = 0;
      engine::parse_int64(argv_.size() > 1 ? argv_[1] : "0", db);
      db_ = db;
      apply({}, Kind::kNoop, offset_);
      continue;
    }
    // Another database's commands have nowhere to go; a source's FLUSHALL must not empty the
    // cluster, which holds other sources' keys too.
    if (db_ != 0 || engine::equals_ignore_case(name, "flushall") ||
        engine::equals_ignore_case(name, "flushdb")) {
      if (skipped_++ == 0) {
        spdlog::warn(
            "import from {}: skipping {} (commands for other databases and flushes are "
            "not applied; counted in skipped)",
            address(), std::string(name));
      }
      apply({}, Kind::kNoop, offset_);
      continue;
    }
    // The keys a source's writes touch, so that a later full resync can delete those it no
    // longer has.
    std::string unknown;
    if (const engine::CommandSpec* spec = engine::resolve_command(argv_, unknown);
        spec != nullptr && (spec->flags & engine::kWrite) != 0) {
      for (size_t pos : engine::key_positions(*spec, argv_)) remember(argv_[pos], false);
    }
    if (!replay_safe(argv_)) last_unsafe_offset_ = offset_;
    apply(std::vector<std::string>(argv_.begin(), argv_.end()), Kind::kCommand, offset_);
  }
}

void ImportSource::apply(std::vector<std::string> argv, Kind kind, uint64_t offset_after) {
  uint64_t seq = 0;
  if (kind != Kind::kSnapshotKey) {
    seq = next_seq_++;
    pending_.push_back(Pending{offset_after, uv_now(server_.loop()), false});
  }
  if (argv.empty()) {
    finished(seq, kind, "+OK\r\n", {});
    return;
  }
  if (holding_) {
    held_.push_back(Held{std::move(argv), kind, seq});
    return;
  }
  dispatch(std::move(argv), kind, seq);
}

void ImportSource::dispatch_held() {
  if (held_.empty() && !key_log_.pending()) return;
  if (std::string error = key_log_.flush(); !error.empty()) {
    spdlog::warn("import from {}: {} (a restart of this node may leave deleted keys)", address(),
                 error);
  }
  // import.state must say that resuming cannot replay from its offset before a command that
  // makes it so leaves (record() notes what it said).
  if (!recorded_unsafe_ && needs_resync()) save();
  std::vector<Held> held = std::move(held_);
  held_.clear();
  for (Held& h : held) dispatch(std::move(h.argv), h.kind, h.seq);
}

void ImportSource::dispatch(std::vector<std::string> argv, Kind kind, uint64_t seq) {
  in_flight_++;
  if (kind == Kind::kSnapshotKey) snapshot_in_flight_++;
  const std::vector<std::string_view> args(argv.begin(), argv.end());
  // A RESTORE refused because the key is already here (another source had it) is sent again
  // with REPLACE: the later write wins.
  std::vector<std::string> retry;
  if (kind == Kind::kSnapshotKey && !resync_ && argv.back() != "REPLACE") retry = std::move(argv);
  server_.run_routed(client_id_, args,
                     [this, alive = alive_, seq, kind, retry = std::move(retry),
                      sync = sync_number_](std::string_view reply) mutable {
                       if (!*alive) return;
                       in_flight_--;
                       if (kind == Kind::kSnapshotKey) snapshot_in_flight_--;
                       // Its owner could not be reached: the write is not lost, a new snapshot
                       // brings it once the owner answers again (the retry in cron).
                       if (sync == sync_number_ && (reply.rfind("-ERR peer ", 0) == 0 ||
                                                    reply.rfind("-CLUSTERDOWN", 0) == 0 ||
                                                    reply.rfind("-TRYAGAIN", 0) == 0)) {
                         unavailable_++;
                       }
                       finished(seq, kind, reply, std::move(retry));
                       update_reading();
                     });
  update_reading();
}

void ImportSource::finished(uint64_t seq, Kind kind, std::string_view reply,
                            std::vector<std::string> retry) {
  if (kind == Kind::kSnapshotKey) {
    if (!retry.empty() && reply.rfind("-BUSYKEY", 0) == 0) {
      duplicates_++;
      retry.emplace_back("REPLACE");
      apply(std::move(retry), Kind::kSnapshotKey, 0);
      return;
    }
    if (protocol::err::is_error_reply(reply)) {
      failed(reply, "RESTORE");
    } else if (reply[0] == '+') {
      keys_loaded_++;
    }
    return;
  }
  if (kind == Kind::kCommand) {
    if (protocol::err::is_error_reply(reply)) {
      failed(reply, "a command");
    } else {
      commands_++;
    }
  }
  // A command of a link that was since replaced by a full resync: its offsets are gone.
  if (seq < pending_base_ || seq - pending_base_ >= pending_.size()) return;
  pending_[seq - pending_base_].done = true;
  while (!pending_.empty() && pending_.front().done) {
    applied_offset_ = pending_.front().offset;
    pending_.pop_front();
    pending_base_++;
  }
}

void ImportSource::failed(std::string_view reply, std::string_view what) {
  errors_++;
  last_error_ = std::string(first_line(reply));
  if (errors_ <= kLoggedErrors) {
    spdlog::warn("import from {}: {} failed: {}{}", address(), what, last_error_,
                 errors_ == kLoggedErrors ? " (further errors are only counted)" : "");
  }
}

void ImportSource::take_new_snapshot() {
  owner_resyncs_++;
  close_socket();
  replid_.clear();
  connect();
}

void ImportSource::cron(uint64_t now_ms) {
  // A member failed over with replica-acks 0 may have acknowledged commands of this import that
  // its replicas never got: a new snapshot (at once, not after the owner backoff: a failover is
  // one event, not an owner that keeps failing) brings back whatever was lost.
  if (const cluster::Cluster& cluster = *server_.cluster();
      cluster.failovers_seen() != failovers_seen_) {
    failovers_seen_ = cluster.failovers_seen();
    if (cluster.failover_may_lose_writes() && state_ != State::kStopped) {
      failovers_++;
      spdlog::warn(
          "import from {}: a member was failed over and may have lost writes it had "
          "acknowledged; taking a new snapshot",
          address());
      take_new_snapshot();
      return;
    }
  }
  if (state_ == State::kRetrying && now_ms >= next_connect_ms_) {
    connect();
    return;
  }
  if (state_ == State::kStreaming && unavailable_ > 0 && now_ms >= next_owner_retry_ms_) {
    owner_retry_ms_ =
        owner_retry_ms_ == 0 ? kRetryMs : std::min(owner_retry_ms_ * 2, kMaxOwnerRetryMs);
    next_owner_retry_ms_ = now_ms + owner_retry_ms_;
    spdlog::warn(
        "import from {}: {} commands found their owner unavailable; taking a new snapshot (next "
        "try in {} s if it still fails)",
        address(), unavailable_, owner_retry_ms_ / 1000);
    take_new_snapshot();
    return;
  }
  if (state_ == State::kStreaming && unavailable_ == 0 && snapshot_in_flight_ == 0) {
    owner_retry_ms_ = 0;
  }
  if (state_ == State::kStreaming && socket_ != nullptr) {
    // As a replica: the offset applied, once a second, so the source keeps the link and INFO
    // replication on the source shows how far behind the import is.
    send_command({"REPLCONF", "ACK", std::to_string(applied_offset_)});
  }
  if (state_ == State::kSnapshot && now_ms - last_log_ms_ >= 1000) {
    last_log_ms_ = now_ms;
    spdlog::info("import from {}: {} keys loaded of {} read", address(), keys_loaded_,
                 snapshot_keys_);
  }
}

std::string ImportSource::info_fields(uint64_t now_ms) const {
  const uint64_t lag = pending_.empty() ? 0 : now_ms - pending_.front().read_ms;
  std::string out =
      "source=" + address() + ",state=" + std::string(state_name(state_)) +
      ",keys=" + std::to_string(keys_loaded_) + ",snapshot_keys=" + std::to_string(snapshot_keys_) +
      ",commands=" + std::to_string(commands_) + ",offset=" + std::to_string(applied_offset_) +
      ",lag_ms=" + std::to_string(lag) + ",in_flight=" + std::to_string(in_flight_) +
      ",duplicates=" + std::to_string(duplicates_) + ",errors=" + std::to_string(errors_) +
      ",skipped=" + std::to_string(skipped_) + ",full_syncs=" + std::to_string(full_syncs_) +
      ",partial_syncs=" + std::to_string(partial_syncs_) +
      ",disconnects=" + std::to_string(disconnects_) +
      ",unavailable=" + std::to_string(unavailable_) +
      ",owner_resyncs=" + std::to_string(owner_resyncs_) +
      ",failovers=" + std::to_string(failovers_);
  return out;
}

}  // namespace ringkv::server
