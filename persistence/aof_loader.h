// Loading an append-only file: loads its RDB preamble when it starts with one
// (aof-use-rdb-preamble), then replays its commands (RESP requests, MULTI/EXEC blocks) into a
// store at start-up, and says how much of the file was whole, so that a crash in the middle of a
// write can be told apart from corruption.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "engine/command.h"
#include "engine/keyspace/databases.h"
#include "protocol/reply_writer.h"

namespace ringkv::persistence {

struct LoadProgress {
  uint64_t bytes_read, file_bytes, commands, keys;
  double seconds;
};

struct LoadResult {
  enum class Status { kOk, kTruncated, kCorrupt, kIoError } status = Status::kOk;
  uint64_t commands = 0;       // commands replayed
  uint64_t preamble_keys = 0;  // keys loaded from the RDB preamble (aof-use-rdb-preamble)
  uint64_t valid_bytes =
      0;  // length of the prefix made of whole records and whole MULTI…EXEC blocks
  uint64_t file_bytes = 0;
  double seconds = 0;
  std::string error;  // kCorrupt / kIoError / kTruncated: what, and at which byte offset
};

// Applies one replayed write (resolved and arity-checked) to database `db` (the file's last
// SELECT); its reply is discarded. The server runs it through its command pipeline; empty, the
// loader calls the handler itself.
using ReplayRunner =
    std::function<void(int db, const engine::CommandSpec& spec,
                       std::span<const std::string_view> argv, protocol::ReplyWriter& reply)>;

// Replays the append-only file at `path` into `dbs` (which the caller has just created; records
// go to database 0 until a SELECT, and a SELECT of a database `dbs` lacks is kCorrupt). A
// missing file is kOk with nothing loaded. `progress`, when set, is called about once a second.
// kTruncated: the file ends inside a record (or inside a MULTI block without EXEC): everything up
// to valid_bytes was applied; the caller decides whether to truncate the file there
// (aof-load-truncated) or refuse to start. kCorrupt: bytes that are not a valid command request in
// the middle (or a command that fails to run: unknown command, wrong arity — Redis refuses those
// too): nothing after that offset is applied; `error` names the offset and the problem.
// While loading nothing expires (see Store::set_loading); the store's clock follows the real time
// and the store is out of loading mode when this returns.
LoadResult load_aof(const std::string& path, engine::Databases& dbs,
                    const std::function<void(const LoadProgress&)>& progress = {},
                    const ReplayRunner& runner = {});

}  // namespace ringkv::persistence
