#include "persistence/aof_rewrite.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/commands/key_commands.h"
#include "engine/keyspace/store.h"
#include "persistence/file_util.h"
#include "persistence/rdb_file.h"
#include "protocol/request_writer.h"

namespace ringkv::persistence {
namespace {

// The child writes in chunks of this size: few syscalls, bounded memory.
constexpr size_t kRewriteChunkBytes = 1 << 20;

}  // namespace

std::string temp_rewrite_path(const std::string& dir, pid_t pid) {
  return dir + "/temp-rewrite-" + std::to_string(pid) + ".aof";
}

pid_t fork_rewrite_child(std::span<engine::Store* const> dbs, const std::string& dir,
                         const RdbSaveOptions* preamble, std::span<const std::string> functions,
                         int info_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: no event loop, no logger, no destructors; only the snapshot, then _exit.
  detach_forked_child({info_fd});
  ChildReporter reporter(info_fd);
  std::string error =
      write_snapshot(dbs, temp_rewrite_path(dir, getpid()), preamble, functions, &reporter);
  if (!error.empty()) {
    error = "AOF rewrite child: " + error + "\n";
    (void)!::write(STDERR_FILENO, error.data(), error.size());
  }
  _exit(error.empty() ? 0 : 1);
}

std::string write_snapshot(std::span<engine::Store* const> dbs, const std::string& path,
                           const RdbSaveOptions* preamble, std::span<const std::string> functions,
                           ChildReporter* reporter) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_text("can't create", path);
  bool ok = true;
  RdbWriteStats written;
  const RdbSink sink = reporting_sink(fd, reporter, written.keys);
  if (preamble != nullptr) {
    RdbSaveOptions options = *preamble;
    options.aof_preamble = true;
    ok = write_rdb(dbs, options, sink, &written);
  } else {
    std::string buf;
    buf.reserve(kRewriteChunkBytes + kRewriteChunkBytes / 4);
    for (const std::string& code : functions) {
      const std::string_view argv[] = {"FUNCTION", "LOAD", code};
      protocol::append_request(buf, argv);
    }
    for (size_t db = 0; db < dbs.size(); ++db) {
      if (dbs[db]->size() == 0) continue;
      // The file is read from database 0 on: database 0 needs no SELECT.
      if (db != 0) {
        const std::string index = std::to_string(db);
        const std::string_view select[] = {"SELECT", index};
        protocol::append_request(buf, select);
      }
      dbs[db]->for_each([&](const engine::Entry& entry) {
        if (!ok) return;
        engine::append_key_commands(entry, buf);
        written.keys++;
        if (buf.size() >= kRewriteChunkBytes) {
          ok = sink(buf);
          buf.clear();
        }
      });
    }
    if (ok) ok = sink(buf);
  }
  std::string error;
  if (!ok) {
    error = errno_text("can't write", path);
  } else if (fsync(fd) != 0) {
    error = errno_text("can't fsync", path);
  }
  ::close(fd);
  if (error.empty() && reporter != nullptr) reporter->done(written.keys);
  return error;
}

int open_rewritten(const std::string& temp_path, std::string_view tail, std::string& error) {
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    error = errno_text("can't open", temp_path);
    return -1;
  }
  if (!write_fully(fd, tail)) {
    error = errno_text("can't append the rewrite buffer to", temp_path);
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string commit_rewrite(int fd, const std::string& temp_path, const std::string& final_path) {
  if (fdatasync(fd) != 0) return errno_text("can't fsync", temp_path);
  if (std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    return errno_text("can't rename the rewritten file to", final_path);
  }
  // The rename is durable only once the directory entry is.
  fsync_directory_of(final_path);
  return {};
}

}  // namespace ringkv::persistence
