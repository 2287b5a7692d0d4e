// Loading an RDB stream (a file, a replication snapshot, an append-only file's preamble): the
// parser takes the stream in chunks of any size, checks the magic, the version, every opcode, each
// value (engine/rdb's decoder, the one RESTORE uses) and the CRC64 trailer, and hands each key to a
// consumer: the store at start-up, the cluster's owners for an import, a replica's store in a full
// resync. A stream that is cut off or corrupt is refused with the byte offset and the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/keyspace/databases.h"
#include "engine/rdb/rdb_value.h"

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

// One key of the stream.
struct RdbKey {
  std::string_view key;
  engine::DecodedValue value;  // the consumer may move it away
  // The RDB type byte and the encoded value as they were in the stream: with them a DUMP payload
  // (type, value, version, CRC64) sends the key on with RESTORE without encoding it again.
  uint8_t type = 0;
  std::string_view raw_value;
  int64_t expire_ms = -1;     // unix ms; -1 without a TTL
  int64_t idle_seconds = -1;  // IDLE opcode; -1 when absent
  int64_t freq = -1;          // FREQ opcode; -1 when absent
  int64_t db = 0;             // the database of the last SELECTDB
};

// Takes one key; returns an empty string, or why the stream must be refused (a duplicate key).
using RdbKeyConsumer = std::function<std::string(RdbKey& key)>;

class RdbLoader {
 public:
  enum class State { kLoading, kDone, kFailed };

  explicit RdbLoader(RdbKeyConsumer consumer);

  // Parses the next bytes of the stream. Returns false once the stream is refused (see error()).
  // Bytes after the end of the RDB (state kDone) are kept aside: see unconsumed().
  bool feed(std::string_view data);
  // An item that ran short is parsed again only once its unparsed bytes have doubled (so a large
  // value arriving in many chunks is not parsed once per chunk): a caller that knows no more bytes
  // come for now (the end of a transfer, its marker seen) asks for the parse at once.
  bool parse_now();
  // The stream ended. Returns true when the RDB was whole; otherwise error() says where it was
  // cut off.
  bool finish();

  State state() const { return state_; }
  // "<reason> at offset <n>" once failed.
  const std::string& error() const { return error_; }
  uint64_t error_offset() const { return error_offset_; }
  // Bytes of the stream consumed so far; once done, the RDB's length (the end of its checksum).
  uint64_t consumed() const { return base_ + pos_; }
  // Once done: the bytes fed after the end of the RDB (a replication stream's marker and
  // commands).
  std::string_view unconsumed() const { return std::string_view(buf_).substr(pos_); }
  uint64_t keys() const { return keys_; }
  int version() const { return version_; }
  // AUX fields as read (redis-ver, ctime, repl-id, repl-offset, aof-base...).
  const std::vector<std::pair<std::string, std::string>>& aux() const { return aux_; }
  std::string aux_value(std::string_view name) const;
  // The code of each function library (FUNCTION2 record) the stream carried, in order: the caller
  // loads them (FUNCTION LOAD) where it keeps functions.
  const std::vector<std::string>& functions() const { return functions_; }

 private:
  enum class Step { kProgress, kNeedMore, kFailed, kEnd };
  // Parses every whole item buffered; returns false once failed.
  bool parse_buffered();
  // Parses one item (the magic, an opcode with its payload, or a key) at pos_.
  Step parse_one();
  Step parse_key(uint8_t type, engine::rdb::Reader& r, uint64_t at);
  Step parse_eof(engine::rdb::Reader& r, uint64_t at);
  Step fail(uint64_t at, std::string reason);
  // Adds the parsed bytes not in crc_ yet.
  void update_crc();
  // Drops the parsed bytes from the buffer.
  void compact();

  RdbKeyConsumer consumer_;
  State state_ = State::kLoading;
  std::string buf_;
  size_t pos_ = 0;       // parse position in buf_
  uint64_t base_ = 0;    // stream offset of buf_[0]
  size_t retry_at_ = 0;  // after a short read, parse again once buf_ holds this many bytes
  size_t crc_pos_ = 0;   // buf_ bytes before this are in crc_
  uint64_t crc_ = 0;
  bool magic_read_ = false;
  int version_ = 0;
  int64_t db_ = 0;
  int64_t expire_ms_ = -1;
  int64_t idle_ = -1;
  int64_t freq_ = -1;
  uint64_t keys_ = 0;
  std::vector<std::string> functions_;
  std::vector<std::pair<std::string, std::string>> aux_;
  std::string error_;
  uint64_t error_offset_ = 0;
};

// The consumer for loading into `store` at start-up or from a full resync: a duplicate key is
// refused (as Redis refuses it); with `skip_expired`, keys whose TTL already passed are dropped, as
// a master drops them when it loads a file (not an append-only file's preamble, nor a replica).
// A key of another database than 0 is refused.
RdbKeyConsumer store_consumer(engine::Store& store, bool skip_expired);
// The same into numbered databases: each key into its SELECTDB's (refused when `dbs` lacks it).
RdbKeyConsumer databases_consumer(engine::Databases& dbs, bool skip_expired);

struct RdbFileResult {
  enum class Status { kOk, kMissing, kCorrupt, kIoError } status = Status::kOk;
  uint64_t keys = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  std::vector<std::string> functions;  // the libraries' code (see RdbLoader::functions)
  std::string error;                   // "<reason> at offset <n>" (kCorrupt) or the I/O error
};

struct RdbLoadProgress {
  uint64_t bytes_read, file_bytes, keys;
  double seconds;
};

// Loads the RDB file at `path` into `dbs` (loading mode on meanwhile, see Store::set_loading).
// `progress`, when set, is called about once a second.
RdbFileResult load_rdb_file(const std::string& path, engine::Databases& dbs,
                            const std::function<void(const RdbLoadProgress&)>& progress = {});

}  // namespace ringkv::persistence
