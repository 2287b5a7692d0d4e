// File helpers the persistence writers share: whole writes, durable renames, and what a forked
// child does first.
#pragma once

#include <sys/types.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace ringkv::persistence {

// write()s all of `data` to `fd`, retrying on EINTR. False on an error (errno set).
bool write_fully(int fd, std::string_view data);

// "<what> <path>: <strerror(errno)>".
std::string errno_text(std::string_view what, const std::string& path);

// The directory holding `path` ("." when it names none).
std::string directory_of(const std::string& path);

// fsyncs the directory holding `path`, so that a rename into it is durable.
void fsync_directory_of(const std::string& path);

// In a forked child: closes every descriptor inherited from the server (listening and client
// sockets would stay open, the port bound, until the child exits, even if the server died)
// except those of `keep` (negative ones name none), and asks to be killed when the server dies.
void detach_forked_child(std::initializer_list<int> keep = {});

// What became of a forked child (rewrite, save, snapshot stream).
struct ChildStatus {
  bool running = false;  // it has not exited yet
  bool ok = false;       // it exited with status 0
  int signal = 0;        // the signal that killed it, 0 if none
};

// Looks whether child `pid` has exited, without waiting (reaping it if so).
ChildStatus poll_child(pid_t pid);

// Kills child `pid` and waits for it to go.
void kill_child(pid_t pid);

}  // namespace ringkv::persistence
