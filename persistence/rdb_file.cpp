#include "persistence/rdb_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "engine/keyspace/store.h"
#include "persistence/file_util.h"

namespace ringkv::persistence {
namespace {

// Reports a child's failure on stderr (the child has no logger) and exits.
[[noreturn]] void exit_child(const std::string& error, std::string_view what) {
  if (!error.empty()) {
    const std::string line = std::string(what) + ": " + error + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  _exit(error.empty() ? 0 : 1);
}

}  // namespace

std::string temp_rdb_path(const std::string& dir, pid_t pid) {
  return dir + "/temp-" + std::to_string(pid) + ".rdb";
}

RdbSink reporting_sink(int fd, ChildReporter* reporter, const uint64_t& keys) {
  return [fd, reporter, &keys](std::string_view chunk) {
    if (reporter != nullptr) reporter->progress(keys);
    return write_fully(fd, chunk);
  };
}

std::string save_rdb_file(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
                          const std::string& path, RdbWriteStats* stats, ChildReporter* reporter) {
  const std::string temp = temp_rdb_path(directory_of(path), getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_text("can't create", temp);
  std::string error;
  RdbWriteStats written;
  if (!write_rdb(dbs, options, reporting_sink(fd, reporter, written.keys), &written)) {
    error = errno_text("can't write", temp);
  } else if (fsync(fd) != 0) {
    error = errno_text("can't fsync", temp);
  }
  ::close(fd);
  if (error.empty() && std::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno_text("can't rename the temporary file to", path);
  }
  if (!error.empty()) {
    unlink(temp.c_str());
    return error;
  }
  fsync_directory_of(path);
  if (stats != nullptr) *stats = written;
  if (reporter != nullptr) reporter->done(written.keys);
  return {};
}

pid_t fork_rdb_file_child(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
                          const std::string& path, int info_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: no event loop, no logger, no destructors; only the snapshot, then _exit.
  detach_forked_child({info_fd});
  ChildReporter reporter(info_fd);
  exit_child(save_rdb_file(dbs, options, path, nullptr, &reporter), "RDB background save child");
}

pid_t fork_rdb_stream_child(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
                            int fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  detach_forked_child({fd});
  const bool ok =
      write_rdb(dbs, options, [fd](std::string_view chunk) { return write_fully(fd, chunk); });
  exit_child(ok ? std::string() : errno_text("can't write to", "the snapshot pipe"),
             "RDB snapshot child");
}

}  // namespace ringkv::persistence
