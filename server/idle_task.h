// IdleTask: background work done a batch per event-loop turn (copies to other nodes, deleting
// keys given away) on a uv_idle_t, which runs only while there is work: the owner wakes it when
// work appears and the step says when there is none left (or none it can do until woken again).
#pragma once

#include <uv.h>

#include <functional>

namespace ringkv::server {

class IdleTask {
 public:
  // `step` does one turn's batch and returns whether more is ready to be done right away.
  IdleTask(uv_loop_t* loop, std::function<bool()> step) : step_(std::move(step)) {
    uv_idle_init(loop, &idle_);
    idle_.data = this;
  }
  IdleTask(const IdleTask&) = delete;
  IdleTask& operator=(const IdleTask&) = delete;

  // Runs the step from the next loop turn on, until it reports nothing more to do.
  void wake() {
    if (running_ || stopped_) return;
    running_ = true;
    uv_idle_start(&idle_, [](uv_idle_t* h) {
      auto* self = static_cast<IdleTask*>(h->data);
      if (!self->step_() && self->running_) {
        self->running_ = false;
        uv_idle_stop(&self->idle_);
      }
    });
  }
  // Closes the handle (shutdown); the task never runs again.
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&idle_), nullptr);
  }

 private:
  std::function<bool()> step_;
  uv_idle_t idle_;
  bool running_ = false;
  bool stopped_ = false;
};

}  // namespace ringkv::server
