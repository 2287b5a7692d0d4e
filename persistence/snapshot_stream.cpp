#include "persistence/snapshot_stream.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "persistence/file_util.h"
#include "persistence/rdb_file.h"

namespace ringkv::persistence {
namespace {

constexpr size_t kReadBytes = 256 * 1024;
// How often the loop looks for the child's exit once the pipe has ended (it exits right after).
constexpr uint64_t kPollMs = 1;

}  // namespace

// Owned by the stream until it is destroyed, then by libuv until both close callbacks ran.
struct SnapshotStream::Handles {
  uv_pipe_t pipe;
  uv_timer_t timer;
  SnapshotStream* owner;
  int open = 2;
  char buf[kReadBytes];
  static void closed(uv_handle_t* h) {
    auto* self = static_cast<Handles*>(h->data);
    if (--self->open == 0) delete self;
  }
};

std::unique_ptr<SnapshotStream> SnapshotStream::start(uv_loop_t* loop,
                                                      std::span<engine::Store* const> dbs,
                                                      const RdbSaveOptions& options, DataFn on_data,
                                                      EndFn on_end, std::string& error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<SnapshotStream> s(new SnapshotStream(std::move(on_data), std::move(on_end)));
  const auto t0 = std::chrono::steady_clock::now();
  s->pid_ = fork_rdb_stream_child(dbs, options, fds[1]);
  s->fork_usec_ = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  ::close(fds[1]);
  if (s->pid_ < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    return nullptr;
  }
  auto* h = new Handles;
  h->owner = s.get();
  uv_pipe_init(loop, &h->pipe, 0);
  uv_timer_init(loop, &h->timer);
  h->pipe.data = h;
  h->timer.data = h;
  uv_pipe_open(&h->pipe, fds[0]);
  s->handles_ = h;
  s->resume();
  return s;
}

SnapshotStream::~SnapshotStream() {
  if (pid_ > 0) kill_child(pid_);
  if (handles_ != nullptr) {
    handles_->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&handles_->pipe), Handles::closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&handles_->timer), Handles::closed);
  }
}

void SnapshotStream::pause() {
  paused_ = true;
  if (reading_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&handles_->pipe));
    reading_ = false;
  }
}

void SnapshotStream::resume() {
  paused_ = false;
  if (reading_ || handles_ == nullptr ||
      uv_is_closing(reinterpret_cast<uv_handle_t*>(&handles_->pipe)))
    return;
  reading_ = true;
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&handles_->pipe),
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* handles = static_cast<Handles*>(h->data);
        *buf = uv_buf_init(handles->buf, sizeof(handles->buf));
      },
      on_read);
}

void SnapshotStream::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* h = static_cast<Handles*>(stream->data);
  SnapshotStream* self = h->owner;
  if (self == nullptr) return;
  if (nread > 0) {
    self->bytes_ += static_cast<uint64_t>(nread);
    self->on_data_(std::string_view(buf->base, static_cast<size_t>(nread)));
    return;
  }
  if (nread == 0) return;
  // End of the pipe (or an error reading it): the child is done or dead.
  uv_read_stop(stream);
  self->reading_ = false;
  self->pipe_ended();
}

void SnapshotStream::pipe_ended() { uv_timer_start(&handles_->timer, on_poll, 0, kPollMs); }

void SnapshotStream::on_poll(uv_timer_t* timer) {
  auto* h = static_cast<Handles*>(timer->data);
  SnapshotStream* self = h->owner;
  if (self == nullptr) return;
  const ChildStatus child = poll_child(self->pid_);
  if (child.running) return;
  uv_timer_stop(timer);
  self->pid_ = -1;
  if (child.ok) {
    self->finish(true, {});
  } else if (child.signal != 0) {
    self->finish(false, "the snapshot child was killed by signal " + std::to_string(child.signal));
  } else {
    self->finish(false, "the snapshot child failed");
  }
}

void SnapshotStream::finish(bool ok, const std::string& error) {
  // The owner may destroy this stream from on_end: nothing is touched after it.
  EndFn end = std::move(on_end_);
  end(ok, error);
}

}  // namespace ringkv::persistence
