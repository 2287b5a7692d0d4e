// The append-only file loader: reads the file in big chunks, parses each record with the client
// request parser (multibulk only), resolves it against the command table and runs the row's
// handler with no client and no server, as Redis's loadSingleAppendOnlyFile runs a fake client.
// MULTI…EXEC blocks are queued and applied only once their EXEC is read, so a block cut off by a
// crash is never half applied.
#include "persistence/aof_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "engine/command.h"
#include "engine/commands/string_ops.h"
#include "persistence/rdb_loader.h"
#include "protocol/reply_writer.h"
#include "protocol/resp_parser.h"

namespace ringkv::persistence {

namespace {

using engine::CommandSpec;
using Status = LoadResult::Status;

// Bytes read from the file at a time (a record larger than this grows the buffer).
constexpr size_t kChunkBytes = 8u << 20;
// Commands between two looks at the clocks (the store's time, the progress callback).
constexpr uint64_t kClockEveryCommands = 4096;

using common::unix_ms;

// Closes the file and takes the store out of loading mode however loading ends.
class LoadScope {
 public:
  explicit LoadScope(engine::Databases& dbs) : dbs_(dbs) { dbs_.set_loading(true); }
  ~LoadScope() {
    dbs_.set_loading(false);
    dbs_.set_now(unix_ms());
    if (fd_ >= 0) ::close(fd_);
  }
  LoadScope(const LoadScope&) = delete;
  LoadScope& operator=(const LoadScope&) = delete;
  void set_fd(int fd) { fd_ = fd; }

 private:
  engine::Databases& dbs_;
  int fd_ = -1;
};

class Loader {
 public:
  Loader(engine::Databases& dbs, const std::function<void(const LoadProgress&)>& progress,
         const ReplayRunner& runner)
      : dbs_(dbs), progress_(progress), runner_(runner), writer_(reply_) {}

  LoadResult run(const std::string& path);

 private:
  // A file that starts with "REDIS" begins with an RDB (aof-use-rdb-preamble): loads it and
  // leaves the file positioned at the commands after it. false when loading must stop.
  bool load_preamble();
  // Reads more of the file after the unparsed bytes [begin_, end_). false on a read error.
  bool refill();
  // Parses and replays every whole record in the buffer. false when loading must stop.
  bool replay_buffered();
  // Replays one record spanning file offsets [start, end). false when loading must stop.
  bool replay(std::span<const std::string_view> argv, uint64_t start, uint64_t end);
  void run_command(const CommandSpec& spec, std::span<const std::string_view> argv);
  void run_queued();
  // Called every kClockEveryCommands commands and after each read.
  void tick();
  bool fail(Status status, uint64_t offset, std::string_view what);
  double elapsed() const;

  engine::Databases& dbs_;
  int db_ = 0;  // the database the records go to (SELECT)
  const std::function<void(const LoadProgress&)>& progress_;
  const ReplayRunner& runner_;
  std::string reply_;  // handlers' replies, discarded
  protocol::ReplyWriter writer_;
  protocol::RespParser parser_;
  std::vector<std::string_view> argv_;
  std::string resolve_error_;
  LoadResult result_;
  int fd_ = -1;
  std::vector<char> buf_;
  size_t begin_ = 0;   // first unparsed byte in buf_
  size_t end_ = 0;     // end of the bytes read into buf_
  uint64_t base_ = 0;  // file offset of buf_[0]
  bool eof_ = false;
  // A MULTI block being read: its file offset and its commands, applied at EXEC.
  bool in_multi_ = false;
  uint64_t multi_offset_ = 0;
  std::vector<std::pair<const CommandSpec*, std::vector<std::string>>> queued_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_progress_ = started_;
  uint64_t since_tick_ = 0;
};

LoadResult Loader::run(const std::string& path) {
  LoadScope scope(dbs_);
  dbs_.set_now(unix_ms());
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    if (errno == ENOENT) return result_;
    fail(Status::kIoError, 0, std::string("cannot open ") + path + ": " + std::strerror(errno));
    return result_;
  }
  scope.set_fd(fd_);
  struct stat st {};
  if (::fstat(fd_, &st) == 0) result_.file_bytes = static_cast<uint64_t>(st.st_size);
  buf_.resize(kChunkBytes);
  if (!load_preamble()) {
    result_.seconds = elapsed();
    return result_;
  }
  while (replay_buffered()) {
    if (eof_) break;
    if (!refill()) break;
  }
  if (result_.status == Status::kOk && (begin_ < end_ || in_multi_)) {
    const uint64_t at = in_multi_ ? multi_offset_ : base_ + begin_;
    fail(Status::kTruncated, at,
         in_multi_ ? "MULTI block without EXEC at the end of the file"
                   : "the last record is cut off at the end of the file");
  }
  result_.seconds = elapsed();
  return result_;
}

bool Loader::load_preamble() {
  ssize_t n = 0;
  do {
    n = ::pread(fd_, buf_.data(), 5, 0);
  } while (n < 0 && errno == EINTR);
  if (n != 5 || std::string_view(buf_.data(), 5) != "REDIS") return true;
  // As Redis loads a preamble: keys whose TTL passed are kept (they expire after loading, like
  // those of the records that follow).
  RdbLoader rdb(databases_consumer(dbs_, false));
  uint64_t offset = 0;
  while (rdb.state() == RdbLoader::State::kLoading) {
    do {
      n = ::pread(fd_, buf_.data(), buf_.size(), static_cast<off_t>(offset));
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      return fail(Status::kIoError, offset, std::string("read error: ") + std::strerror(errno));
    }
    if (n == 0) break;
    offset += static_cast<uint64_t>(n);
    rdb.feed(std::string_view(buf_.data(), static_cast<size_t>(n)));
    tick();
  }
  if (rdb.state() == RdbLoader::State::kLoading) rdb.finish();
  if (rdb.state() != RdbLoader::State::kDone) {
    result_.status = Status::kCorrupt;
    result_.error = "the RDB preamble: " + rdb.error();
    return false;
  }
  result_.preamble_keys = rdb.keys();
  // The preamble's function libraries are loaded as the records FUNCTION LOAD made would be.
  for (const std::string& code : rdb.functions()) {
    const std::string_view argv[] = {"FUNCTION", "LOAD", code};
    const CommandSpec* spec = engine::resolve_command(argv, resolve_error_);
    if (spec == nullptr) return fail(Status::kCorrupt, 0, resolve_error_);
    run_command(*spec, argv);
  }
  base_ = rdb.consumed();
  result_.valid_bytes = base_;
  if (::lseek(fd_, static_cast<off_t>(base_), SEEK_SET) < 0) {
    return fail(Status::kIoError, base_, std::string("seek error: ") + std::strerror(errno));
  }
  return true;
}

bool Loader::refill() {
  // Keep the partial record, at the front of the buffer; grow the buffer only for a record that
  // fills it whole.
  std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
  base_ += begin_;
  end_ -= begin_;
  begin_ = 0;
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2 + parser_.pending_bulk_hint());
  ssize_t n = 0;
  do {
    n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return fail(Status::kIoError, base_ + end_, std::string("read error: ") + std::strerror(errno));
  }
  if (n == 0) eof_ = true;
  end_ += static_cast<size_t>(n);
  tick();
  return true;
}

bool Loader::replay_buffered() {
  while (begin_ < end_) {
    const uint64_t start = base_ + begin_;
    // An inline command is not something ringkv (or Redis) ever writes to the file.
    if (buf_[begin_] != '*') return fail(Status::kCorrupt, start, "expected '*' (a RESP array)");
    auto parsed = parser_.parse(std::span<const char>(buf_.data() + begin_, end_ - begin_), argv_);
    if (parsed.status == protocol::ParseStatus::kError) {
      return fail(Status::kCorrupt, start, parsed.error);
    }
    if (parsed.status == protocol::ParseStatus::kIncomplete) return true;
    if (argv_.empty()) return fail(Status::kCorrupt, start, "empty command");
    if (!replay(argv_, start, start + parsed.consumed)) return false;
    begin_ += parsed.consumed;
  }
  return true;
}

bool Loader::replay(std::span<const std::string_view> argv, uint64_t start, uint64_t end) {
  const CommandSpec* spec = engine::resolve_command(argv, resolve_error_);
  if (spec == nullptr) return fail(Status::kCorrupt, start, resolve_error_);
  if (spec->name == "multi") {
    if (in_multi_) return fail(Status::kCorrupt, start, "MULTI inside a MULTI block");
    in_multi_ = true;
    multi_offset_ = start;
    return true;
  }
  if (spec->name == "select") {
    // The records after it are another database's: one this server must have.
    int64_t index = 0;
    if (argv.size() != 2 || !engine::parse_int64(argv[1], index) || !dbs_.valid(index)) {
      return fail(Status::kCorrupt, start,
                  "SELECT of a database this server does not have (databases " +
                      std::to_string(dbs_.count()) + ")");
    }
  }
  if (spec->name == "exec") {
    if (in_multi_) run_queued();
    in_multi_ = false;
    result_.valid_bytes = end;
    return true;
  }
  if (in_multi_) {
    queued_.emplace_back(spec, std::vector<std::string>(argv.begin(), argv.end()));
    return true;
  }
  run_command(*spec, argv);
  result_.valid_bytes = end;
  return true;
}

void Loader::run_command(const CommandSpec& spec, std::span<const std::string_view> argv) {
  if (spec.name == "select") {
    // Checked when read (replay): an index of a database this server has.
    int64_t index = 0;
    if (engine::parse_int64(argv[1], index)) db_ = static_cast<int>(index);
  }
  // Only writes change the data, and commands that may (PFCOUNT stores the estimate it
  // computed in the sketch); anything else in the file (SELECT, PING) needs no replay and may
  // need a client or a server the loader does not have.
  if ((spec.flags & (engine::kWrite | engine::kMayReplicate)) != 0) {
    if (runner_) {
      runner_(db_, spec, argv, writer_);
    } else {
      engine::CommandContext ctx{argv, writer_, dbs_[db_], nullptr, nullptr, &spec};
      ctx.db = db_;
      spec.handler(ctx);
    }
    reply_.clear();
  }
  ++result_.commands;
  if (++since_tick_ == kClockEveryCommands) tick();
}

void Loader::run_queued() {
  std::vector<std::string_view> argv;
  for (const auto& [spec, args] : queued_) {
    argv.assign(args.begin(), args.end());
    run_command(*spec, argv);
  }
  queued_.clear();
}

void Loader::tick() {
  since_tick_ = 0;
  dbs_.set_now(unix_ms());
  if (!progress_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_progress_ < std::chrono::seconds(1)) return;
  last_progress_ = now;
  progress_(
      LoadProgress{base_ + begin_, result_.file_bytes, result_.commands, dbs_.size(), elapsed()});
}

bool Loader::fail(Status status, uint64_t offset, std::string_view what) {
  result_.status = status;
  result_.error = std::string(what) + " at offset " + std::to_string(offset);
  return false;
}

double Loader::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace

LoadResult load_aof(const std::string& path, engine::Databases& dbs,
                    const std::function<void(const LoadProgress&)>& progress,
                    const ReplayRunner& runner) {
  Loader loader(dbs, progress, runner);
  return loader.run(path);
}

}  // namespace ringkv::persistence
