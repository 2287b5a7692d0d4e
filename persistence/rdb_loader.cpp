// The RDB stream parser (rdbLoadRio in Redis 7.0) and the file loader: see rdb_loader.h.
//
// The parser keeps the bytes of the item it has not finished and parses it again from its start
// when more arrive; so that an item larger than the chunks it arrives in is not parsed once per
// chunk, a parse that ran out of input waits until the unparsed bytes have doubled.
#include "persistence/rdb_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/clock.h"
#include "engine/keyspace/store.h"
#include "engine/rdb/crc64.h"
#include "engine/rdb/rdb_format.h"
#include "persistence/rdb_opcodes.h"

namespace ringkv::persistence {
namespace {

using engine::rdb::Reader;

// Bytes read from a file at a time.
constexpr size_t kReadChunkBytes = 8u << 20;
// Parsed bytes kept in the buffer before it is compacted.
constexpr size_t kCompactBytes = 1u << 20;

uint64_t get_le(std::string_view raw) {
  uint64_t v = 0;
  for (size_t i = raw.size(); i-- > 0;) v = v << 8 | static_cast<uint8_t>(raw[i]);
  return v;
}

using common::unix_ms;

}  // namespace

RdbLoader::RdbLoader(RdbKeyConsumer consumer) : consumer_(std::move(consumer)) {}

std::string RdbLoader::aux_value(std::string_view name) const {
  for (const auto& [k, v] : aux_) {
    if (k == name) return v;
  }
  return {};
}

bool RdbLoader::feed(std::string_view data) {
  if (state_ == State::kFailed) return false;
  buf_.append(data);
  if (state_ == State::kDone) return true;
  if (buf_.size() < retry_at_) return true;
  return parse_buffered();
}

bool RdbLoader::parse_now() {
  if (state_ != State::kLoading) return state_ != State::kFailed;
  retry_at_ = 0;
  return parse_buffered();
}

bool RdbLoader::finish() {
  parse_now();
  if (state_ == State::kLoading) {
    fail(base_ + pos_, pos_ < buf_.size() ? "unexpected end of the RDB: its last record is cut off"
                                          : "unexpected end of the RDB: no EOF opcode");
  }
  return state_ == State::kDone;
}

bool RdbLoader::parse_buffered() {
  while (state_ == State::kLoading) {
    const Step step = parse_one();
    if (step == Step::kNeedMore) {
      const size_t unparsed = buf_.size() - pos_;
      retry_at_ = buf_.size() + std::max<size_t>(unparsed, 1);
      break;
    }
    if (step == Step::kFailed) return false;
    if (step == Step::kEnd) state_ = State::kDone;
  }
  // Once done the bytes after the RDB stay for unconsumed().
  if (state_ == State::kLoading && (pos_ >= kCompactBytes || pos_ == buf_.size())) compact();
  return true;
}

void RdbLoader::update_crc() {
  if (pos_ > crc_pos_)
    crc_ = engine::crc64(crc_, std::string_view(buf_).substr(crc_pos_, pos_ - crc_pos_));
  crc_pos_ = pos_;
}

void RdbLoader::compact() {
  update_crc();
  buf_.erase(0, pos_);
  base_ += pos_;
  retry_at_ = retry_at_ > pos_ ? retry_at_ - pos_ : 0;
  crc_pos_ = 0;
  pos_ = 0;
}

RdbLoader::Step RdbLoader::fail(uint64_t at, std::string reason) {
  state_ = State::kFailed;
  error_offset_ = at;
  error_ = std::move(reason) + " at offset " + std::to_string(at);
  return Step::kFailed;
}

RdbLoader::Step RdbLoader::parse_one() {
  const std::string_view rest = std::string_view(buf_).substr(pos_);
  const uint64_t at = base_ + pos_;
  if (!magic_read_) {
    if (rest.size() < 9) return Step::kNeedMore;
    if (rest.substr(0, 5) != "REDIS") return fail(at, "wrong signature (not an RDB file)");
    int version = 0;
    for (char c : rest.substr(5, 4)) {
      if (c < '0' || c > '9') return fail(at, "wrong signature (not an RDB file)");
      version = version * 10 + (c - '0');
    }
    if (version < 1 || version > kRdbVersion) {
      return fail(at, "can't handle RDB format version " + std::to_string(version));
    }
    version_ = version;
    magic_read_ = true;
    pos_ += 9;
    return Step::kProgress;
  }
  Reader r(rest);
  uint8_t type = 0;
  if (!r.read_byte(type)) return Step::kNeedMore;
  auto need_more_or = [&](std::string reason) {
    return r.short_read() ? Step::kNeedMore : fail(at, std::move(reason));
  };
  std::string_view raw;
  uint64_t len = 0;
  switch (type) {
    case kOpcodeExpireTime:
      if (!r.read_raw(4, raw)) return Step::kNeedMore;
      expire_ms_ = static_cast<int64_t>(static_cast<int32_t>(get_le(raw))) * 1000;
      break;
    case kOpcodeExpireTimeMs:
      if (!r.read_raw(8, raw)) return Step::kNeedMore;
      expire_ms_ = static_cast<int64_t>(get_le(raw));
      break;
    case kOpcodeFreq: {
      uint8_t freq = 0;
      if (!r.read_byte(freq)) return Step::kNeedMore;
      freq_ = freq;
      break;
    }
    case kOpcodeIdle:
      if (!r.read_len(len)) return need_more_or("bad IDLE opcode");
      idle_ = static_cast<int64_t>(len);
      break;
    case kOpcodeEof:
      return parse_eof(r, at);
    case kOpcodeSelectDb:
      if (!r.read_len(len)) return need_more_or("bad SELECTDB opcode");
      db_ = static_cast<int64_t>(len);
      break;
    case kOpcodeResizeDb: {
      uint64_t expires = 0;
      if (!r.read_len(len) || !r.read_len(expires)) return need_more_or("bad RESIZEDB opcode");
      break;
    }
    case kOpcodeAux: {
      std::string key;
      std::string value;
      if (!r.read_string(key) || !r.read_string(value)) return need_more_or("bad AUX field");
      aux_.emplace_back(std::move(key), std::move(value));
      break;
    }
    case kOpcodeModuleAux:
      return fail(at, "module data (MODULE_AUX) can't be loaded: ringkv has no modules");
    case kOpcodeFunction2: {
      std::string code;
      if (!r.read_string(code)) return need_more_or("bad FUNCTION2 record");
      functions_.push_back(std::move(code));
      break;
    }
    case kOpcodeFunction:
      return fail(at, "a function library in a pre-release format can't be loaded");
    default:
      return parse_key(type, r, at);
  }
  pos_ += r.position();
  return Step::kProgress;
}

RdbLoader::Step RdbLoader::parse_key(uint8_t type, Reader& r, uint64_t at) {
  if (!engine::is_value_type(type)) {
    if (type == 6 || type == 7)
      return fail(at, "a module's value can't be loaded: ringkv has no modules");
    return fail(at, "unknown RDB type " + std::to_string(type));
  }
  std::string key;
  if (!r.read_string(key)) return r.short_read() ? Step::kNeedMore : fail(at, "bad key");
  const size_t value_start = r.position();
  RdbKey k;
  if (!engine::decode_value_of_type(type, r, k.value)) {
    if (r.short_read()) return Step::kNeedMore;
    return fail(at, "bad value (RDB type " + std::to_string(type) + ") of key '" + key + "'");
  }
  k.key = key;
  k.db = db_;
  k.type = type;
  k.raw_value = std::string_view(buf_).substr(pos_ + value_start, r.position() - value_start);
  k.expire_ms = expire_ms_;
  k.idle_seconds = idle_;
  k.freq = freq_;
  std::string refused = consumer_(k);
  if (!refused.empty()) return fail(at, std::move(refused));
  expire_ms_ = idle_ = freq_ = -1;
  ++keys_;
  pos_ += r.position();
  return Step::kProgress;
}

RdbLoader::Step RdbLoader::parse_eof(Reader& r, uint64_t at) {
  // The checksum covers everything up to the EOF opcode included (RDB 5 and later have one).
  std::string_view raw;
  if (version_ >= 5 && !r.read_raw(8, raw)) return Step::kNeedMore;
  pos_ += 1;
  update_crc();
  if (version_ >= 5) {
    const uint64_t expected = get_le(raw);
    // 0: written with rdbchecksum no.
    if (expected != 0 && expected != crc_) return fail(at + 1, "wrong RDB checksum");
    pos_ += 8;
  }
  return Step::kEnd;
}

namespace {

std::string load_key(engine::Store& store, RdbKey& k, bool skip_expired) {
  if (skip_expired && k.expire_ms >= 0 && k.expire_ms < store.now()) return {};
  if (store.peek(k.key) != nullptr) return "duplicate key '" + std::string(k.key) + "'";
  engine::store_decoded(store, k.key, std::move(k.value), k.expire_ms);
  if (k.idle_seconds >= 0 || k.freq >= 0) {
    engine::set_loaded_access(store, k.key, k.idle_seconds, k.freq);
  }
  return {};
}

std::string no_such_database(const RdbKey& k, int count) {
  return "key '" + std::string(k.key) + "' in database " + std::to_string(k.db) +
         ": this server has " + std::to_string(count) + " (databases)";
}

}  // namespace

RdbKeyConsumer store_consumer(engine::Store& store, bool skip_expired) {
  return [&store, skip_expired](RdbKey& k) -> std::string {
    if (k.db != 0) return no_such_database(k, 1);
    return load_key(store, k, skip_expired);
  };
}

RdbKeyConsumer databases_consumer(engine::Databases& dbs, bool skip_expired) {
  return [&dbs, skip_expired](RdbKey& k) -> std::string {
    if (!dbs.valid(k.db)) return no_such_database(k, dbs.count());
    return load_key(dbs[static_cast<int>(k.db)], k, skip_expired);
  };
}

RdbFileResult load_rdb_file(const std::string& path, engine::Databases& dbs,
                            const std::function<void(const RdbLoadProgress&)>& progress) {
  using Status = RdbFileResult::Status;
  RdbFileResult result;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result.status = errno == ENOENT ? Status::kMissing : Status::kIoError;
    result.error = std::string("can't open ") + path + ": " + std::strerror(errno);
    return result;
  }
  struct stat st {};
  const uint64_t file_bytes = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  dbs.set_now(unix_ms());
  dbs.set_loading(true);
  RdbLoader loader(databases_consumer(dbs, true));
  std::string chunk(kReadChunkBytes, '\0');
  uint64_t read_bytes = 0;
  auto last_progress = started;
  bool io_error = false;
  while (loader.state() == RdbLoader::State::kLoading) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      io_error = true;
      result.error = std::string("read error: ") + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    read_bytes += static_cast<uint64_t>(n);
    loader.feed(std::string_view(chunk.data(), static_cast<size_t>(n)));
    dbs.set_now(unix_ms());
    const auto now = std::chrono::steady_clock::now();
    if (progress && now - last_progress >= std::chrono::seconds(1)) {
      last_progress = now;
      progress(RdbLoadProgress{read_bytes, file_bytes, loader.keys(), elapsed()});
    }
  }
  ::close(fd);
  if (!io_error) loader.finish();
  dbs.set_loading(false);
  dbs.set_now(unix_ms());
  result.keys = loader.keys();
  result.bytes = loader.consumed();
  result.functions = loader.functions();
  result.seconds = elapsed();
  if (io_error) {
    result.status = Status::kIoError;
  } else if (loader.state() != RdbLoader::State::kDone) {
    result.status = Status::kCorrupt;
    result.error = loader.error();
  }
  return result;
}

}  // namespace ringkv::persistence
