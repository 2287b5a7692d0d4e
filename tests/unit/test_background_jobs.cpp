// Unit tests of BackgroundJobs, the helper thread behind FLUSHALL ASYNC, big table frees and the
// append-only file's background fsync: jobs run in submission order, drain() waits for them,
// pending() counts them, the destructor runs what is still queued, and jobs may be submitted
// from several threads (the ThreadSanitizer build runs this test).
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "common/background_jobs.h"

using ringkv::common::BackgroundJobs;

TEST_CASE("jobs run in submission order and drain waits for them") {
  BackgroundJobs jobs;
  CHECK(jobs.pending() == 0);
  jobs.drain();            // no thread yet: returns at once
  std::vector<int> order;  // written by the worker only, read after drain()
  for (int i = 0; i < 100; ++i) jobs.submit([&order, i] { order.push_back(i); });
  jobs.drain();
  CHECK(jobs.pending() == 0);
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[i] == i);
}

TEST_CASE("pending counts queued and running jobs") {
  BackgroundJobs jobs;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  jobs.submit([&] {
    started = true;
    while (!release) std::this_thread::yield();
  });
  jobs.submit([] {});
  while (!started) std::this_thread::yield();
  CHECK(jobs.pending() == 2);
  release = true;
  jobs.drain();
  CHECK(jobs.pending() == 0);
}

TEST_CASE("the destructor runs the jobs still queued") {
  std::atomic<int> ran{0};
  {
    BackgroundJobs jobs;
    for (int i = 0; i < 50; ++i) jobs.submit([&ran] { ran.fetch_add(1); });
  }
  CHECK(ran == 50);
}

TEST_CASE("jobs submitted from several threads all run, each thread's in its order") {
  BackgroundJobs jobs;
  std::mutex mu;
  std::vector<std::vector<int>> seen(4);
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        jobs.submit([&, t, i] {
          std::lock_guard lock(mu);
          seen[t].push_back(i);
        });
      }
    });
  }
  for (std::thread& s : submitters) s.join();
  jobs.drain();
  std::lock_guard lock(mu);
  for (const std::vector<int>& s : seen) {
    REQUIRE(s.size() == 200);
    for (int i = 0; i < 200; ++i) CHECK(s[i] == i);
  }
}
