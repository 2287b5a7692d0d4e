// CLUSTER IMPORT's state file and key logs (see import_state.h).
#include "server/import_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/commands/string_ops.h"

namespace ringkv::server {
namespace {

std::string hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out.empty() ? "-" : out;
}

bool unhex(std::string_view s, std::string& out) {
  out.clear();
  if (s == "-") return true;
  if (s.size() % 2 != 0) return false;
  auto digit = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = digit(s[i]), lo = digit(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

std::string write_all(int fd, std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::strerror(errno);
    }
    off += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

std::string import_state_path(const std::string& dir) { return dir + "/import.state"; }

std::string write_import_state(const std::string& path, const std::vector<ImportRecord>& records) {
  std::string text =
      "# ringkv CLUSTER IMPORT state: source running replid offset resync password\n";
  for (const ImportRecord& r : records) {
    text += r.source + (r.running ? " running " : " stopped ") +
            (r.replid.empty() ? std::string("-") : r.replid) + " " + std::to_string(r.offset) +
            (r.resync ? " 1 " : " 0 ") + hex(r.password) + "\n";
  }
  const std::string tmp = path + ".tmp";
  // The password is in it: readable by this user only.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return tmp + ": " + std::strerror(errno);
  std::string error = write_all(fd, text);
  if (error.empty() && ::fsync(fd) != 0) error = std::strerror(errno);
  if (::close(fd) != 0 && error.empty()) error = std::strerror(errno);
  if (error.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) error = std::strerror(errno);
  return error.empty() ? error : path + ": " + error;
}

std::vector<ImportRecord> read_import_state(const std::string& path, std::string& error) {
  std::vector<ImportRecord> out;
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    number++;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ImportRecord r;
    std::string running, replid, offset, resync, password;
    fields >> r.source >> running >> replid >> offset >> resync >> password;
    int64_t n = 0;
    if (password.empty() || (running != "running" && running != "stopped") ||
        !engine::parse_int64(offset, n) || n < 0 || (resync != "0" && resync != "1") ||
        !unhex(password, r.password)) {
      error = path + ":" + std::to_string(number) + ": malformed import record";
      return {};
    }
    r.running = running == "running";
    r.replid = replid == "-" ? "" : replid;
    r.offset = static_cast<uint64_t>(n);
    r.resync = resync == "1";
    out.push_back(std::move(r));
  }
  return out;
}

bool replay_safe(std::span<const std::string_view> argv) {
  // Commands that set what they touch to a value of their own arguments (a second run finds it
  // so already), as a Redis 7.0 master propagates them (EXPIRE as PEXPIREAT, INCRBYFLOAT as SET,
  // SPOP as SREM...).
  static constexpr std::array<std::string_view, 22> kSafe = {
      "set",      "setex",   "psetex", "setnx",    "getset", "mset", "del",  "unlink",
      "hset",     "hmset",   "hsetnx", "hdel",     "sadd",   "srem", "zrem", "pexpireat",
      "expireat", "persist", "setbit", "setrange", "getdel", "pfadd"};
  if (argv.empty()) return true;
  for (std::string_view name : kSafe) {
    if (engine::equals_ignore_case(argv[0], name)) return true;
  }
  if (engine::equals_ignore_case(argv[0], "zadd")) {
    for (std::string_view a : argv.subspan(1)) {
      if (engine::equals_ignore_case(a, "incr")) return false;
    }
    return true;
  }
  return false;
}

ImportKeyLog::ImportKeyLog(const std::string& dir, std::string_view source) {
  std::string name(source);
  for (char& c : name) {
    if (c == ':' || c == '/') c = '-';
  }
  path_ = dir + "/import-" + name + ".keys";
}

ImportKeyLog::~ImportKeyLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ImportKeyLog::load(std::unordered_set<std::string>& keys) {
  std::ifstream in(path_, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Records are <length>:<name>\n; a record cut short by a crash ends the log.
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t colon = data.find(':', pos);
    int64_t len = 0;
    if (colon == std::string::npos ||
        !engine::parse_int64(std::string_view(data).substr(pos, colon - pos), len) || len < 0 ||
        colon + 1 + static_cast<size_t>(len) + 1 > data.size()) {
      break;
    }
    keys.emplace(data.substr(colon + 1, static_cast<size_t>(len)));
    pos = colon + 1 + static_cast<size_t>(len) + 1;
  }
}

void ImportKeyLog::clear() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

void ImportKeyLog::add(std::string_view key) {
  buffer_ += std::to_string(key.size());
  buffer_ += ':';
  buffer_ += key;
  buffer_ += '\n';
}

std::string ImportKeyLog::flush() {
  if (buffer_.empty()) return {};
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) return path_ + ": " + std::strerror(errno);
  std::string error = write_all(fd_, buffer_);
  buffer_.clear();
  return error.empty() ? error : path_ + ": " + error;
}

}  // namespace ringkv::server
