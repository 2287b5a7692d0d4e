// SnapshotStream: a point-in-time RDB snapshot of the store streamed into the event loop, for
// SYNC/PSYNC (tools such as `redis-cli --rdb`) and full resyncs. A forked child writes the RDB
// (rdb_writer.h) into a pipe, its view of the store frozen at the fork by copy-on-write, while the
// server keeps serving; the loop reads the pipe and hands each chunk to `on_data`. pause() stops
// reading (the child then waits on the full pipe), so a slow receiver holds a bounded amount of
// the snapshot in the server. `on_end` reports the child's outcome once it has exited.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "persistence/rdb_writer.h"

namespace ringkv::engine {
class Store;
}

namespace ringkv::persistence {

class SnapshotStream {
 public:
  using DataFn = std::function<void(std::string_view chunk)>;
  // ok: the child wrote the whole RDB (every chunk was delivered before). The owner may destroy
  // the stream from inside it.
  using EndFn = std::function<void(bool ok, const std::string& error)>;

  // Forks the child and starts reading. Returns nullptr, with `error` set, when the pipe or the
  // fork failed.
  static std::unique_ptr<SnapshotStream> start(uv_loop_t* loop, std::span<engine::Store* const> dbs,
                                               const RdbSaveOptions& options, DataFn on_data,
                                               EndFn on_end, std::string& error);
  // Kills a child still writing; nothing is called afterwards.
  ~SnapshotStream();
  SnapshotStream(const SnapshotStream&) = delete;
  SnapshotStream& operator=(const SnapshotStream&) = delete;

  void pause();
  void resume();
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }
  uint64_t fork_usec() const { return fork_usec_; }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Handles;  // the pipe and the timer, freed in their close callbacks
  SnapshotStream(DataFn on_data, EndFn on_end)
      : on_data_(std::move(on_data)), on_end_(std::move(on_end)) {}
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void on_poll(uv_timer_t* timer);
  // The pipe is at its end: waits (polling, never blocking the loop) for the child's status.
  void pipe_ended();
  void finish(bool ok, const std::string& error);

  DataFn on_data_;
  EndFn on_end_;
  Handles* handles_ = nullptr;
  pid_t pid_ = -1;
  uint64_t fork_usec_ = 0;
  uint64_t bytes_ = 0;
  bool paused_ = false;
  bool reading_ = false;
};

}  // namespace ringkv::persistence
