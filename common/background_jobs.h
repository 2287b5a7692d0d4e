// BackgroundJobs: one thread that runs slow work (freeing a flushed keyspace, fsync, closing a
// replaced file) in the order it was submitted, so the event loop never waits for it. The thread
// starts with the first job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace ringkv::common {

class BackgroundJobs {
 public:
  BackgroundJobs() = default;
  // Runs the jobs still queued, then stops the thread.
  ~BackgroundJobs();
  BackgroundJobs(const BackgroundJobs&) = delete;
  BackgroundJobs& operator=(const BackgroundJobs&) = delete;

  // Queues `job` to run after every job submitted before it.
  void submit(std::function<void()> job);
  // Jobs queued or running.
  uint64_t pending() const { return pending_.load(std::memory_order_acquire); }
  // Waits until every job submitted so far has run.
  void drain();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;       // jobs arrived or stopping
  std::condition_variable idle_cv_;  // a job finished
  std::deque<std::function<void()>> jobs_;
  std::atomic<uint64_t> pending_{0};
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace ringkv::common
