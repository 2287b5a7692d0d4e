// CLUSTER IMPORT's record on disk, so that an import outlives its node: `import.state` in `dir`
// (one line per source: address, password, running or stopped, the replication ID and offset
// applied, whether resuming needs a new snapshot), rewritten atomically, and one key log per
// source, `import-<host>-<port>.keys`, the names of the keys it brought (a later full resync
// deletes those the source no longer has). Both are written before the commands they cover are
// sent to their owners, so a node killed at any moment resumes without losing or doubling a
// write.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace ringkv::server {

struct ImportRecord {
  std::string source;  // host:port
  std::string password;
  bool running = false;
  std::string replid;   // empty: resuming needs a new snapshot
  uint64_t offset = 0;  // every stream command up to here was answered by its owner
  bool resync = false;  // resuming must not replay from `offset` (a snapshot or a write that is
                        // not safe to apply twice was in flight): it takes a new snapshot
  bool operator==(const ImportRecord&) const = default;
};

std::string import_state_path(const std::string& dir);
// Writes every record to `path` (temporary file, fsync, rename). Returns the error or "".
std::string write_import_state(const std::string& path, const std::vector<ImportRecord>& records);
// The records of `path` (none when it does not exist); `error` names a malformed file.
std::vector<ImportRecord> read_import_state(const std::string& path, std::string& error);

// Whether a stream command may be applied a second time after it already was without changing
// the result (each one sets what it touches: SET, DEL, HSET, SADD, ZADD without INCR,
// PEXPIREAT...). Replaying from the last recorded offset is exact only over such commands.
bool replay_safe(std::span<const std::string_view> argv);

// The names of the keys one source brought, appended to a file in `dir`.
class ImportKeyLog {
 public:
  ImportKeyLog(const std::string& dir, std::string_view source);
  ~ImportKeyLog();
  ImportKeyLog(const ImportKeyLog&) = delete;
  ImportKeyLog& operator=(const ImportKeyLog&) = delete;

  // Reads the names logged earlier into `keys`.
  void load(std::unordered_set<std::string>& keys);
  // A new import of the source: what an earlier one logged is forgotten.
  void clear();
  // Queues a name; flush() writes the queued names (one write). Returns the error or "".
  void add(std::string_view key);
  bool pending() const { return !buffer_.empty(); }
  std::string flush();

 private:
  std::string path_;
  std::string buffer_;
  int fd_ = -1;
};

}  // namespace ringkv::server
