#include "persistence/rdb_snapshots.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/clock.h"
#include "engine/keyspace/store.h"
#include "persistence/file_util.h"
#include "persistence/rdb_file.h"
#include "persistence/rdb_loader.h"

namespace ringkv::persistence {
namespace {

// A failed BGSAVE is retried by the save rules no sooner than this (CONFIG_BGSAVE_RETRY_DELAY).
constexpr int64_t kRetryDelaySec = 5;
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

using common::monotonic_us;

int64_t unix_now_sec() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

RdbSnapshots::RdbSnapshots(engine::Databases& dbs, const conf::PersistenceOptions& options,
                           const conf::MemoryOptions& memory)
    : dbs_(dbs), options_(options), memory_(memory), last_save_unix_(unix_now_sec()) {}

RdbSnapshots::~RdbSnapshots() { kill_child(); }

std::string RdbSnapshots::path() const { return options_.dir + "/" + options_.dbfilename; }

RdbSaveOptions RdbSnapshots::save_options(int64_t now_unix_ms) const {
  RdbSaveOptions o;
  o.checksum = options_.rdbchecksum;
  o.access = rdb_access_for_policy(memory_.maxmemory_policy);
  o.now_ms = now_unix_ms;
  o.used_mem = dbs_.used_memory();
  if (function_codes_) o.functions = function_codes_();
  return o;
}

bool RdbSnapshots::load() {
  const std::string file = path();
  double last_report = 0;
  RdbFileResult r = load_rdb_file(file, dbs_, [&](const RdbLoadProgress& p) {
    if (p.seconds - last_report < 1.0) return;
    last_report = p.seconds;
    spdlog::info("loading the RDB file: {:.1f} of {:.1f} MB ({:.1f} MB/s), {} keys",
                 p.bytes_read / kBytesPerMiB, p.file_bytes / kBytesPerMiB,
                 p.seconds > 0 ? p.bytes_read / kBytesPerMiB / p.seconds : 0.0, p.keys);
  });
  using Status = RdbFileResult::Status;
  if (r.status == Status::kMissing) return true;
  if (r.status == Status::kIoError) {
    spdlog::error("can't read the RDB file {}: {}", file, r.error);
    return false;
  }
  if (r.status == Status::kCorrupt) {
    spdlog::error(
        "can't load the RDB file {}: {}. Nothing was loaded; check it with redis-check-rdb {}",
        file, r.error, file);
    return false;
  }
  for (const std::string& code : r.functions) {
    const std::string error = load_function_ ? load_function_(code) : std::string();
    if (!error.empty()) {
      spdlog::error("can't load a function library of the RDB file {}: {}", file, error);
      return false;
    }
  }
  last_load_keys_loaded_ = dbs_.size();
  last_load_keys_expired_ = r.keys - dbs_.size();
  spdlog::info(
      "DB loaded from the RDB file {}: {} keys ({} already expired), {:.1f} MB in {:.3f} "
      "seconds ({:.1f} MB/s)",
      file, dbs_.size(), last_load_keys_expired_, r.bytes / kBytesPerMiB, r.seconds,
      r.seconds > 0 ? r.bytes / kBytesPerMiB / r.seconds : 0.0);
  return true;
}

std::string RdbSnapshots::save(int64_t now_unix_ms) {
  saves_++;
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  const uint64_t start = monotonic_us();
  RdbWriteStats stats;
  std::string error = save_rdb_file(dbs_.all(), save_options(now_unix_ms), path(), &stats);
  if (!error.empty()) {
    spdlog::error("failed saving the DB: {}", error);
    return error;
  }
  changes_at_save_ = changes_;
  last_save_unix_ = now_unix_ms / 1000;
  last_bgsave_ok_ = true;  // as Redis: writes refused after a failed BGSAVE are let in again
  spdlog::info("DB saved on disk: {} keys, {} bytes in {} us", stats.keys, stats.bytes,
               monotonic_us() - start);
  return {};
}

BgsaveStart RdbSnapshots::bgsave(uint64_t now_ms, int64_t now_unix_ms) {
  if (child_pid_ > 0) return BgsaveStart::kAlreadyRunning;
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  last_try_unix_ = now_unix_ms / 1000;
  const uint64_t start = monotonic_us();
  const int info_fd = child_info_.open(dbs_.size());
  const pid_t pid = fork_rdb_file_child(dbs_.all(), save_options(now_unix_ms), path(), info_fd);
  latest_fork_usec_ = monotonic_us() - start;
  child_info_.forked();
  if (pid < 0) {
    child_info_.finish();
    last_bgsave_ok_ = false;
    spdlog::error("can't save in background: fork: {}", std::strerror(errno));
    return BgsaveStart::kForkFailed;
  }
  forks_++;
  saves_++;
  child_pid_ = pid;
  child_path_ = temp_rdb_path(directory_of(path()), pid);
  child_started_ms_ = now_ms;
  changes_at_fork_ = changes_;
  bgsave_scheduled_ = false;
  spdlog::info("background saving started by pid {} (fork took {} us)", pid, latest_fork_usec_);
  return BgsaveStart::kStarted;
}

bool RdbSnapshots::rule_due(int64_t now_unix_ms) const {
  if (options_.save.empty()) return false;
  std::vector<std::pair<int64_t, int64_t>> rules;
  if (!conf::parse_save_rules(options_.save, rules)) return false;
  const int64_t now = now_unix_ms / 1000;
  const uint64_t dirty = changes_ - changes_at_save_;
  for (const auto& [seconds, changes] : rules) {
    if (dirty >= static_cast<uint64_t>(changes) && now - last_save_unix_ > seconds &&
        (last_bgsave_ok_ || now - last_try_unix_ > kRetryDelaySec)) {
      spdlog::info("{} changes in {} seconds. Saving...", changes, seconds);
      return true;
    }
  }
  return false;
}

void RdbSnapshots::cron(uint64_t now_ms, int64_t now_unix_ms, bool other_child) {
  if (child_pid_ > 0) collect_child(now_ms, now_unix_ms);
  if (child_pid_ > 0 || other_child) return;
  if (bgsave_scheduled_ || rule_due(now_unix_ms)) bgsave(now_ms, now_unix_ms);
}

void RdbSnapshots::collect_child(uint64_t now_ms, int64_t now_unix_ms) {
  const ChildStatus child = poll_child(child_pid_);
  if (child.running) return;
  child_info_.finish();
  const bool ok = child.ok;
  last_bgsave_time_sec_ = static_cast<int64_t>((now_ms - child_started_ms_) / 1000);
  last_bgsave_ok_ = ok;
  if (ok) {
    // The changes made while the child wrote are still unsaved.
    changes_at_save_ = changes_at_fork_;
    last_save_unix_ = now_unix_ms / 1000;
    spdlog::info("background saving terminated with success");
  } else {
    if (child.signal != 0) {
      spdlog::warn("background saving terminated by signal {}", child.signal);
    } else {
      spdlog::warn("background saving error");
    }
    unlink(child_path_.c_str());
  }
  child_pid_ = -1;
}

void RdbSnapshots::kill_child() {
  if (child_pid_ <= 0) return;
  persistence::kill_child(child_pid_);
  child_info_.finish();
  unlink(child_path_.c_str());
  spdlog::info("killed the background saving child {}", child_pid_);
  child_pid_ = -1;
}

bool RdbSnapshots::shutdown(bool force, bool nosave, int64_t now_unix_ms) {
  kill_child();
  std::vector<std::pair<int64_t, int64_t>> rules;
  const bool has_rules = conf::parse_save_rules(options_.save, rules) && !rules.empty();
  if (nosave || (!force && !has_rules)) return true;
  spdlog::info("saving the final RDB snapshot before exiting");
  return save(now_unix_ms).empty();
}

RdbInfo RdbSnapshots::info(uint64_t now_ms) const {
  RdbInfo i;
  i.changes_since_last_save = changes_ - changes_at_save_;
  i.bgsave_in_progress = child_pid_ > 0;
  i.last_save_time = last_save_unix_;
  i.last_bgsave_ok = last_bgsave_ok_;
  i.last_bgsave_time_sec = last_bgsave_time_sec_;
  if (child_pid_ > 0) {
    i.current_bgsave_time_sec = static_cast<int64_t>((now_ms - child_started_ms_) / 1000);
  }
  i.saves = saves_;
  i.last_load_keys_expired = last_load_keys_expired_;
  i.last_load_keys_loaded = last_load_keys_loaded_;
  i.latest_fork_usec = latest_fork_usec_;
  i.forks = forks_;
  i.last_fork_ms = child_started_ms_;
  child_info_.poll();
  i.child = child_info_.figures(common::unix_ms());
  i.last_cow_size = child_info_.last_cow_size();
  return i;
}

}  // namespace ringkv::persistence
