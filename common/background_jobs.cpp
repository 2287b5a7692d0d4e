#include "common/background_jobs.h"

namespace ringkv::common {

BackgroundJobs::~BackgroundJobs() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (worker_.joinable()) worker_.join();
}

void BackgroundJobs::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
    pending_.fetch_add(1, std::memory_order_release);
    if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
  }
  cv_.notify_one();
}

void BackgroundJobs::drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
}

void BackgroundJobs::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
    pending_.fetch_sub(1, std::memory_order_release);
    idle_cv_.notify_all();
  }
}

}  // namespace ringkv::common
