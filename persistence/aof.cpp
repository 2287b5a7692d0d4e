#include "persistence/aof.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/clock.h"
#include "engine/keyspace/store.h"
#include "persistence/aof_loader.h"
#include "persistence/aof_rewrite.h"
#include "persistence/file_util.h"

namespace ringkv::persistence {
namespace {

// A failed rewrite is tried again no sooner than this (Redis waits as long).
constexpr uint64_t kRewriteRetryMs = 5000;
// Progress of a long load is logged at most this often.
constexpr double kProgressEverySec = 1.0;

using common::monotonic_us;

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

AppendOnlyFile::AppendOnlyFile(engine::Databases& dbs, const conf::PersistenceOptions& options)
    : dbs_(dbs), options_(options) {
  writer_.set_policy(parse_fsync_policy(options_.appendfsync));
}

AppendOnlyFile::~AppendOnlyFile() {
  kill_child();
  complete_commit(true, child_started_ms_);
}

void AppendOnlyFile::create_dir() const {
  // Each node of a cluster on one machine has a dir of its own (conf/node*.toml): created when
  // missing rather than refusing to start.
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
}

std::string AppendOnlyFile::path() const { return options_.dir + "/" + options_.appendfilename; }

bool AppendOnlyFile::open_writer() {
  create_dir();
  std::string error = writer_.open(path());
  if (!error.empty()) {
    spdlog::error("{}", error);
    return false;
  }
  writer_.set_policy(parse_fsync_policy(options_.appendfsync));
  state_ = State::kOn;
  return true;
}

bool AppendOnlyFile::load_and_open(const ReplayRunner& runner) {
  if (!options_.appendonly) return true;
  const std::string file = path();
  std::error_code ec;
  if (std::filesystem::exists(file, ec)) {
    double last_report = 0;
    LoadResult r = load_aof(
        file, dbs_,
        [&](const LoadProgress& p) {
          if (p.seconds - last_report < kProgressEverySec) return;
          last_report = p.seconds;
          spdlog::info("loading the append-only file: {:.1f} of {:.1f} MB ({:.1f} MB/s), {} keys",
                       p.bytes_read / kMiB, p.file_bytes / kMiB,
                       p.seconds > 0 ? p.bytes_read / kMiB / p.seconds : 0.0, p.keys);
        },
        runner);
    using Status = decltype(r.status);
    if (r.status == Status::kTruncated) {
      spdlog::warn(
          "!!! Warning: short read while loading the append-only file {}: the last record, at "
          "offset {} of {}, is incomplete !!!",
          file, r.valid_bytes, r.file_bytes);
      if (!options_.aof_load_truncated) {
        spdlog::error(
            "unexpected end of file reading the append-only file {} at offset {}. Make a backup "
            "of it, then run redis-check-aof --fix {} or set aof-load-truncated yes to start "
            "with the incomplete record dropped",
            file, r.valid_bytes, file);
        return false;
      }
      if (truncate(file.c_str(), static_cast<off_t>(r.valid_bytes)) != 0) {
        spdlog::error("could not truncate the append-only file {} to {} bytes: {}", file,
                      r.valid_bytes, std::strerror(errno));
        return false;
      }
      spdlog::warn(
          "AOF loaded anyway because aof-load-truncated is enabled: {} truncated to {} "
          "bytes",
          file, r.valid_bytes);
    } else if (r.status == Status::kCorrupt) {
      spdlog::error(
          "bad file format reading the append-only file {} at offset {}: {}. Make a backup of "
          "it, then run redis-check-aof --fix {} to fix it",
          file, r.valid_bytes, r.error, file);
      return false;
    } else if (r.status != Status::kOk) {
      spdlog::error("can't read the append-only file {}: {}", file, r.error);
      return false;
    }
    spdlog::info(
        "DB loaded from append-only file {}: {} keys from its RDB preamble, {} commands, {} "
        "keys, {:.1f} MB in {:.3f} seconds ({:.1f} MB/s)",
        file, r.preamble_keys, r.commands, dbs_.size(), r.valid_bytes / kMiB, r.seconds,
        r.seconds > 0 ? r.valid_bytes / kMiB / r.seconds : 0.0);
  }
  if (!open_writer()) return false;
  base_size_ = writer_.current_size();
  return true;
}

void AppendOnlyFile::feed_record(auto&& append) {
  const size_t before = writer_.buffer_length();
  if (in_transaction_ && !transaction_opened_) {
    transaction_opened_ = true;
    static constexpr std::string_view kMulti[] = {"MULTI"};
    writer_.append(kMulti);
  }
  append(writer_);
  if (child_pid_ > 0) rewrite_buffer_.append(writer_.buffered_since(before));
}

void AppendOnlyFile::select(int db) {
  if (db == selected_db_) return;
  selected_db_ = db;
  const std::string index = std::to_string(db);
  const std::string_view argv[] = {"SELECT", index};
  feed(argv);
}

void AppendOnlyFile::feed(std::span<const std::string_view> argv) {
  feed_record([argv](AofWriter& w) { w.append(argv); });
}

void AppendOnlyFile::feed(const std::vector<std::string>& argv) {
  feed_record([&argv](AofWriter& w) { w.append(argv); });
}

void AppendOnlyFile::begin_transaction() {
  in_transaction_ = true;
  transaction_opened_ = false;
}

void AppendOnlyFile::end_transaction() {
  in_transaction_ = false;
  if (!transaction_opened_) return;
  transaction_opened_ = false;
  static constexpr std::string_view kExec[] = {"EXEC"};
  feed(kExec);
}

void AppendOnlyFile::flush_before_replies(uint64_t now_ms) {
  complete_commit(false, now_ms);
  if (writer_.flush(now_ms) || writer_.policy() != FsyncPolicy::kAlways) return;
  spdlog::critical(
      "can't recover from an append-only file write error when the fsync policy is 'always': "
      "exiting");
  _exit(1);
}

void AppendOnlyFile::cron(uint64_t now_ms, bool other_child) {
  if (child_pid_ > 0) collect_child(now_ms);
  complete_commit(false, now_ms);
  if (!rewrite_in_progress() && !other_child && now_ms >= next_retry_ms_ &&
      (rewrite_scheduled_ || should_auto_rewrite())) {
    if (!rewrite_scheduled_) {
      spdlog::info(
          "starting an automatic rewrite of the append-only file ({} bytes, {} after the "
          "last rewrite)",
          writer_.current_size(), base_size_);
    }
    start_rewrite(now_ms);
  }
  // Retries a failed write, and fsyncs (everysec) what an idle second left unsynced.
  if (state_ == State::kOn) writer_.flush(now_ms);
}

bool AppendOnlyFile::should_auto_rewrite() const {
  if (state_ != State::kOn || options_.auto_aof_rewrite_percentage <= 0) return false;
  const uint64_t size = writer_.current_size();
  if (size < static_cast<uint64_t>(options_.auto_aof_rewrite_min_size)) return false;
  const uint64_t base = std::max<uint64_t>(base_size_, 1);
  if (size <= base) return false;
  const uint64_t growth = (size - base) * 100 / base;
  return growth >= static_cast<uint64_t>(options_.auto_aof_rewrite_percentage);
}

RewriteStart AppendOnlyFile::start_rewrite(uint64_t now_ms) {
  if (rewrite_in_progress()) return RewriteStart::kAlreadyRunning;
  // Written first: the child's view and the rewrite buffer then cover every record exactly once.
  if (state_ == State::kOn) writer_.flush(now_ms);
  create_dir();
  const uint64_t start = monotonic_us();
  // The options also carry the function libraries, which the rewrite keeps either way.
  RdbSaveOptions preamble;
  if (preamble_options_) {
    preamble = preamble_options_();
  } else {
    preamble.checksum = options_.rdbchecksum;
    preamble.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  }
  const int info_fd = child_info_.open(dbs_.size());
  pid_t pid = fork_rewrite_child(dbs_.all(), options_.dir,
                                 options_.aof_use_rdb_preamble ? &preamble : nullptr,
                                 preamble.functions, info_fd);
  latest_fork_usec_ = monotonic_us() - start;
  child_started_ms_ = now_ms;
  child_info_.forked();
  if (pid < 0) {
    child_info_.finish();
    spdlog::error("can't rewrite the append-only file in the background: fork: {}",
                  std::strerror(errno));
    rewrite_failed(now_ms);
    return RewriteStart::kForkFailed;
  }
  total_forks_++;
  child_pid_ = pid;
  child_dir_ = options_.dir;
  rewrite_scheduled_ = false;
  rewrite_buffer_.clear();
  // The rewritten file ends in any database: the records after it say which they are in.
  selected_db_ = -1;
  spdlog::info("background append-only file rewriting started by pid {} (fork took {} us)", pid,
               latest_fork_usec_);
  return RewriteStart::kStarted;
}

void AppendOnlyFile::collect_child(uint64_t now_ms) {
  const ChildStatus child = poll_child(child_pid_);
  if (child.running) return;
  child_info_.finish();
  if (!child.ok) {
    if (child.signal != 0) {
      spdlog::warn("background AOF rewrite terminated by signal {}", child.signal);
    } else {
      spdlog::warn("background AOF rewrite failed");
    }
  }
  finish_rewrite(child.ok, now_ms);
}

struct AppendOnlyFile::Commit {
  std::string temp_path;
  uint64_t started_us = 0;
  uint64_t tail_bytes = 0;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> took_us{0};
  std::string error;  // written by the background thread before `done`
};

void AppendOnlyFile::finish_rewrite(bool child_ok, uint64_t now_ms) {
  const std::string temp = temp_rewrite_path(child_dir_, child_pid_);
  child_pid_ = -1;
  std::string tail;
  tail.swap(rewrite_buffer_);
  if (!child_ok) {
    unlink(temp.c_str());
    rewrite_failed(now_ms);
    return;
  }
  const uint64_t start = monotonic_us();
  // Everything fed until now is in `tail`; from here on each flush writes to both files.
  writer_.flush(now_ms);
  std::string error;
  int fd = open_rewritten(temp, tail, error);
  if (fd < 0) {
    spdlog::error("background AOF rewrite could not be installed: {}", error);
    unlink(temp.c_str());
    rewrite_failed(now_ms);
    return;
  }
  writer_.set_mirror(fd);
  commit_ = std::make_shared<Commit>();
  commit_->temp_path = temp;
  commit_->started_us = start;
  commit_->tail_bytes = tail.size();
  writer_.run_in_background([commit = commit_, fd, final_path = path()] {
    const uint64_t begin = monotonic_us();
    commit->error = commit_rewrite(fd, commit->temp_path, final_path);
    commit->took_us.store(monotonic_us() - begin);
    commit->done.store(true, std::memory_order_release);
  });
  spdlog::info("background AOF rewrite: child done, {} bytes written meanwhile appended in {} us",
               tail.size(), monotonic_us() - start);
}

void AppendOnlyFile::complete_commit(bool block, uint64_t now_ms) {
  if (commit_ == nullptr) return;
  if (block) writer_.wait_for_background();
  if (!commit_->done.load(std::memory_order_acquire)) return;
  std::shared_ptr<Commit> commit = std::move(commit_);
  const uint64_t start = monotonic_us();
  // The records still buffered go to both files before the old one is let go.
  writer_.flush(now_ms);
  if (!commit->error.empty()) {
    spdlog::error("background AOF rewrite could not be installed: {}", commit->error);
    writer_.drop_mirror();
    unlink(commit->temp_path.c_str());
    rewrite_failed(now_ms);
    return;
  }
  if (state_ == State::kOff) {
    // Turned off meanwhile: the rewritten file still replaced the old one, as in Redis.
    writer_.drop_mirror();
  } else {
    writer_.promote_mirror(path());
    base_size_ = writer_.current_size();
    if (state_ == State::kWaitRewrite) {
      state_ = State::kOn;
      spdlog::info("append-only file enabled: the base file is written");
    }
  }
  last_rewrite_time_sec_ = static_cast<int64_t>((now_ms - child_started_ms_) / 1000);
  rewrites_++;
  consecutive_failures_ = 0;
  last_rewrite_ok_ = true;
  spdlog::info(
      "background AOF rewrite finished successfully: {} bytes ({} written meanwhile), "
      "committed in the background in {} us, switched in {} us",
      base_size_, commit->tail_bytes, commit->took_us.load(), monotonic_us() - start);
}

void AppendOnlyFile::rewrite_failed(uint64_t now_ms) {
  last_rewrite_time_sec_ = static_cast<int64_t>((now_ms - child_started_ms_) / 1000);
  last_rewrite_ok_ = false;
  consecutive_failures_++;
  next_retry_ms_ = now_ms + kRewriteRetryMs;
  // Turning the file on waits for a base file: try again.
  if (state_ == State::kWaitRewrite) rewrite_scheduled_ = true;
}

void AppendOnlyFile::kill_child() {
  if (child_pid_ <= 0) return;
  persistence::kill_child(child_pid_);
  child_info_.finish();
  unlink(temp_rewrite_path(child_dir_, child_pid_).c_str());
  spdlog::info("killed the AOF rewrite child {}", child_pid_);
  child_pid_ = -1;
  rewrite_buffer_.clear();
}

std::string AppendOnlyFile::apply_options(uint64_t now_ms) {
  writer_.set_policy(parse_fsync_policy(options_.appendfsync));
  if (options_.appendonly && state_ == State::kOff) {
    // The current data must be in the file before new writes are appended to it: a rewrite
    // writes it, and the writes made meanwhile follow in its buffer.
    kill_child();
    complete_commit(true, now_ms);
    state_ = State::kWaitRewrite;
    if (start_rewrite(now_ms) != RewriteStart::kStarted) {
      state_ = State::kOff;
      rewrite_scheduled_ = false;
      return "Unable to turn on AOF. Check server logs.";
    }
    spdlog::info("append-only file turned on: writing its base file");
  } else if (!options_.appendonly && state_ != State::kOff) {
    kill_child();
    complete_commit(true, now_ms);
    writer_.close();
    state_ = State::kOff;
    spdlog::info("append-only file turned off");
  }
  return {};
}

bool AppendOnlyFile::shutdown(uint64_t now_ms) {
  kill_child();
  complete_commit(true, now_ms);
  if (state_ != State::kOn) return true;
  bool ok = writer_.sync_now();
  if (ok) {
    spdlog::info("append-only file written and fsynced");
  } else {
    spdlog::error("the append-only file may miss its last writes");
  }
  return ok;
}

AofInfo AppendOnlyFile::info(uint64_t now_ms) const {
  AofInfo i;
  i.enabled = state_ != State::kOff;
  i.rewrite_in_progress = rewrite_in_progress();
  i.rewrite_scheduled = rewrite_scheduled_;
  i.last_rewrite_time_sec = last_rewrite_time_sec_;
  if (rewrite_in_progress()) {
    i.current_rewrite_time_sec = static_cast<int64_t>((now_ms - child_started_ms_) / 1000);
  }
  i.last_bgrewrite_ok = last_rewrite_ok_;
  i.rewrites = rewrites_;
  i.rewrites_consecutive_failures = consecutive_failures_;
  i.last_write_ok = writer_.last_write_ok();
  i.current_size = writer_.current_size();
  i.base_size = base_size_;
  i.buffer_length = writer_.buffer_length();
  i.pending_bio_fsync = writer_.pending_fsyncs();
  i.delayed_fsync = writer_.delayed_fsyncs();
  i.latest_fork_usec = latest_fork_usec_;
  i.total_forks = total_forks_;
  i.last_fork_ms = child_started_ms_;
  child_info_.poll();
  i.child = child_info_.figures(common::unix_ms());
  i.last_cow_size = child_info_.last_cow_size();
  return i;
}

}  // namespace ringkv::persistence
