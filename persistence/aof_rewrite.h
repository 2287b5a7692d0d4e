// The rewrite of the append-only file into its shortest form: a forked child writes the
// commands that recreate every key (copy-on-write keeps its view of the store frozen at the
// fork) into a temporary file; the parent then appends what was written meanwhile and renames
// the result over the append-only file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "persistence/child_info.h"
#include "persistence/rdb_writer.h"

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

// dir/temp-rewrite-<pid>.aof: where the child `pid` writes.
std::string temp_rewrite_path(const std::string& dir, pid_t pid);

// Forks a child that writes the databases `dbs` into temp_rewrite_path(dir, child pid), fsyncs it
// and exits with status 0 on success. Returns the child's pid, or -1 when fork failed (errno set).
// With `preamble` (aof-use-rdb-preamble) the keys are written as an RDB, else as commands.
// `functions`: the function libraries' code, written as FUNCTION LOAD commands when there is no
// preamble (a preamble carries its options' own).
// Its progress goes to `info_fd` (ChildInfo::open; -1 for none).
pid_t fork_rewrite_child(std::span<engine::Store* const> dbs, const std::string& dir,
                         const RdbSaveOptions* preamble = nullptr,
                         std::span<const std::string> functions = {}, int info_fd = -1);

// Writes every key of the databases `dbs` to `path` (truncated first) and fsyncs it: as an RDB
// preamble with `preamble`, else as the commands recreating them (each database's after a
// SELECT of its number; the libraries of `functions` first). Returns an empty string or the error.
// A forked child reports its progress to `reporter`.
std::string write_snapshot(std::span<engine::Store* const> dbs, const std::string& path,
                           const RdbSaveOptions* preamble = nullptr,
                           std::span<const std::string> functions = {},
                           ChildReporter* reporter = nullptr);
// The same for one store, written as database 0.
inline std::string write_snapshot(engine::Store& store, const std::string& path,
                                  const RdbSaveOptions* preamble = nullptr) {
  engine::Store* const one[] = {&store};
  return write_snapshot(one, path, preamble);
}

// Opens the child's finished `temp_path` for appending and appends `tail` (the records written
// while the child ran). Returns the descriptor, or -1 with `error` set.
int open_rewritten(const std::string& temp_path, std::string_view tail, std::string& error);

// Makes the rewritten file the append-only file: fdatasyncs `fd` (open on `temp_path`), renames
// it to `final_path` and fsyncs the directory, so that a crash at any point leaves either the
// old file or the complete new one. Slow (two disk flushes): runs on a background thread.
// Returns an empty string or the error; on an error the rename has not happened.
std::string commit_rewrite(int fd, const std::string& temp_path, const std::string& final_path);

}  // namespace ringkv::persistence
