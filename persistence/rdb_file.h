// RDB files on disk: SAVE writes one in the server's process, BGSAVE in a forked child (its view
// of the store frozen at the fork by copy-on-write), both into dir/temp-<pid>.rdb, fsynced, then
// renamed over the target so a crash never leaves half a file under the real name.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>

#include "persistence/child_info.h"
#include "persistence/rdb_writer.h"

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

// dir/temp-<pid>.rdb: where process `pid` writes before the rename (Redis's name).
std::string temp_rdb_path(const std::string& dir, pid_t pid);

// A sink that writes each chunk to `fd`, first reporting to `reporter` (when there is one) the
// keys `keys` counts as written so far: a forked child's file output.
RdbSink reporting_sink(int fd, ChildReporter* reporter, const uint64_t& keys);

// Writes the databases `dbs` to temp_rdb_path(dir of `path`, this process), fsyncs it and renames
// it to `path`. Returns an empty string or the error (the temporary file is then removed). A
// forked child reports its progress to `reporter`.
std::string save_rdb_file(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
                          const std::string& path, RdbWriteStats* stats = nullptr,
                          ChildReporter* reporter = nullptr);
// The same for one store, saved as database 0.
inline std::string save_rdb_file(engine::Store& store, const RdbSaveOptions& options,
                                 const std::string& path, RdbWriteStats* stats = nullptr) {
  engine::Store* const one[] = {&store};
  return save_rdb_file(one, options, path, stats);
}

// Forks a child that runs save_rdb_file and exits with status 0 on success, reporting its
// progress on `info_fd` (ChildInfo::open; -1 for none). Returns the child's pid, or -1 when fork
// failed (errno set).
pid_t fork_rdb_file_child(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
                          const std::string& path, int info_fd = -1);

// Forks a child that writes the databases `dbs` as an RDB stream into `fd` (a pipe's write end) and
// exits with status 0 once all of it was written. The parent keeps `fd` open: close it after the
// fork.
pid_t fork_rdb_stream_child(std::span<engine::Store* const> dbs, const RdbSaveOptions& options,
                            int fd);

}  // namespace ringkv::persistence
