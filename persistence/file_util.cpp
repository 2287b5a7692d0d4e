#include "persistence/file_util.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <vector>

namespace ringkv::persistence {

bool write_fully(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string errno_text(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

void fsync_directory_of(const std::string& path) {
  const std::string dir = directory_of(path);
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    ::close(dir_fd);
  }
}

void detach_forked_child(std::initializer_list<int> keep) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::vector<int> kept;
  for (int fd : keep) {
    if (fd >= 3) kept.push_back(fd);
  }
  std::sort(kept.begin(), kept.end());
  unsigned from = 3;  // the first descriptor not closed yet
  for (int fd : kept) {
    const auto k = static_cast<unsigned>(fd);
    if (k > from) close_range(from, k - 1, 0);
    from = std::max(from, k + 1);
  }
  close_range(from, ~0U, 0);
}

ChildStatus poll_child(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  ChildStatus child;
  if (r == 0) {
    child.running = true;
  } else if (r == pid) {
    child.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status)) child.signal = WTERMSIG(status);
  }
  return child;
}

void kill_child(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace ringkv::persistence
