// Running independent work items on a few threads: parallel_for over items, for_chunks over runs
// of consecutive items. Results are deterministic whatever the thread count: each item writes
// only its own output slot.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ciyuan {

// Runs helper() on `helpers` threads of a process-wide pool and caller() on the calling thread,
// and returns when all of them have returned. The pool's threads live on between calls, so
// whatever they keep per thread (a model's piece cache) is warm for the next batch; a fresh
// thread per call would start every batch with empty caches and make them anew. The pool is
// made again in a child after fork(). When the pool is busy (another thread's batch, or a
// batch inside a batch) the helpers are threads of their own, as before. Neither function may
// throw.
void run_with_helpers(int helpers, const std::function<void()>& helper, const std::function<void()>& caller);

// The thread count to use for `threads`: itself when positive, else one per core (at least 1).
inline int resolve_threads(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs fn(i) for i in [0, n) on `threads` threads (<= 0: hardware concurrency). Exceptions
// are caught on the worker and the first one is rethrown on the caller's thread.
inline void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn) {
  threads = resolve_threads(threads);
  if (static_cast<size_t>(threads) > n) threads = static_cast<int>(n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(n);  // stop handing out work
      }
    }
  };
  run_with_helpers(threads - 1, work, work);
  if (error) std::rethrow_exception(error);
}

// parallel_for over runs of up to `run` consecutive items: one atomic step per run, not per
// item (a batch of short lines would otherwise bounce the counter's cache line between cores
// per line).
template <class F>
void for_chunks(size_t n, int threads, size_t run, F&& fn) {
  run = std::max<size_t>(run, 1);
  parallel_for((n + run - 1) / run, threads, [&](size_t c) {
    for (size_t i = c * run, e = std::min(n, i + run); i < e; ++i) fn(i);
  });
}

}  // namespace ciyuan
