// The persisted ring (see ring_file.h).
#include "cluster/ring_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/numbers.h"

namespace ringkv::cluster {
namespace {

constexpr std::string_view kHeader = "ringkv-ring 1";

bool parse_u64(std::string_view text, uint64_t& out) {
  const std::optional<uint64_t> v = common::parse_unsigned(text);
  if (v) out = *v;
  return v.has_value();
}

}  // namespace

std::string format_ring_state(const RingState& state) {
  std::string out(kHeader);
  out += "\nversion " + std::to_string(state.version) + "\n";
  for (const auto& m : state.members) {
    out += "member " + m.address + " " + std::to_string(m.weight) + "\n";
  }
  for (const auto& a : state.failed) out += "failed " + a + "\n";
  if (state.pending_version != 0) {
    out += "pending " + std::to_string(state.pending_version) + "\n";
    if (!state.coordinator.empty()) out += "coordinator " + state.coordinator + "\n";
    if (state.fenced) out += "fenced\n";
    if (state.completes) out += "completes\n";
    for (const auto& m : state.pending_members) {
      out += "pending-member " + m.address + " " + std::to_string(m.weight) + "\n";
    }
    for (const auto& a : state.pending_failed) out += "pending-failed " + a + "\n";
    for (const auto& a : state.pending_forced) out += "pending-forced " + a + "\n";
  }
  return out;
}

std::optional<RingState> parse_ring_state(std::string_view text, std::string& error) {
  RingState state;
  size_t line_no = 0;
  bool header = false;
  bool have_version = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    auto fail = [&](std::string_view why) {
      error = "line " + std::to_string(line_no) + ": " + std::string(why);
      return std::nullopt;
    };
    if (!header) {
      if (line != kHeader) return fail("not a ringkv ring file");
      header = true;
      continue;
    }
    const std::vector<std::string_view> w = common::split_words(line);
    if (w[0] == "version" && w.size() == 2) {
      if (!parse_u64(w[1], state.version)) return fail("bad version");
      have_version = true;
    } else if (w[0] == "pending" && w.size() == 2) {
      if (!parse_u64(w[1], state.pending_version) || state.pending_version == 0) {
        return fail("bad pending version");
      }
    } else if ((w[0] == "failed" || w[0] == "pending-failed") && w.size() == 2) {
      (w[0] == "failed" ? state.failed : state.pending_failed).emplace_back(w[1]);
    } else if (w[0] == "pending-forced" && w.size() == 2) {
      state.pending_forced.emplace_back(w[1]);
    } else if (w[0] == "fenced" && w.size() == 1) {
      state.fenced = true;
    } else if (w[0] == "completes" && w.size() == 1) {
      state.completes = true;
    } else if (w[0] == "coordinator" && w.size() == 2) {
      state.coordinator = std::string(w[1]);
    } else if ((w[0] == "member" || w[0] == "pending-member") && w.size() == 3) {
      uint64_t weight = 0;
      if (!parse_u64(w[2], weight) || weight == 0 || weight > 1000000) return fail("bad weight");
      auto& list = w[0] == "member" ? state.members : state.pending_members;
      list.push_back({std::string(w[1]), static_cast<uint32_t>(weight)});
    } else {
      return fail("unknown line '" + std::string(line.substr(0, 80)) + "'");
    }
  }
  if (!header) {
    error = "empty file";
    return std::nullopt;
  }
  if (!have_version || state.members.empty()) {
    error = "no version or no members";
    return std::nullopt;
  }
  if ((state.pending_version != 0) != !state.pending_members.empty()) {
    error = "a pending change needs both its version and its members";
    return std::nullopt;
  }
  return state;
}

std::string ring_file_path(std::string_view dir) {
  std::string path(dir.empty() ? "." : dir);
  if (path.back() != '/') path += '/';
  return path + "ring";
}

std::optional<RingState> read_ring_file(const std::string& path, std::string& error) {
  error.clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno != ENOENT) error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  std::optional<RingState> state = parse_ring_state(text.str(), why);
  if (!state) error = path + ": " + why;
  return state;
}

std::string write_ring_file(const std::string& path, const RingState& state) {
  const std::string tmp = path + ".tmp";
  const std::string text = format_ring_state(state);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return tmp + ": " + std::strerror(errno);
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = tmp + ": " + std::strerror(errno);
      ::close(fd);
      return why;
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return tmp + ": " + std::strerror(errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return path + ": " + std::strerror(errno);
  // The rename itself must survive a crash: fsync the directory.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace ringkv::cluster
