// The process-wide pool of helper threads behind run_with_helpers (parallel.h).
//
// A job is the helper function and how many helpers it wants; a generation counter tells the
// sleeping threads a new one is there, and the caller waits until every helper that took it
// has returned. One job at a time: a caller that finds the pool taken runs its helpers on
// threads of their own.
#include "ciyuan/parallel.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdint>

namespace ciyuan {
namespace {

class HelperPool {
 public:
  explicit HelperPool(pid_t owner) : owner_(owner) {}
  pid_t owner() const { return owner_; }
  std::mutex& busy() { return busy_; }

  // With busy() held by the caller.
  void run(int helpers, const std::function<void()>& helper, const std::function<void()>& caller) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // More threads when a job wants more than ever before; a thread that cannot be had
      // leaves the job to those there are.
      try {
        while (threads_ < helpers) {
          // It has seen every job before this one (it takes the lock only once run() lets go).
          std::thread([this, seen = generation_] { serve(seen); }).detach();
          ++threads_;
        }
      } catch (...) {
      }
      job_ = &helper;
      wanted_ = std::min(helpers, threads_);
      taken_ = 0;
      running_ = wanted_;
      ++generation_;
    }
    wake_.notify_all();
    caller();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
  }

 private:
  void serve(uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (taken_ >= wanted_) continue;  // enough helpers took this job: wait for the next
      ++taken_;
      const std::function<void()>* job = job_;
      lock.unlock();
      (*job)();
      lock.lock();
      if (--running_ == 0) done_.notify_all();
    }
  }

  const pid_t owner_;
  std::mutex busy_;  // held by the caller whose job the pool runs
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  int threads_ = 0;
  const std::function<void()>* job_ = nullptr;
  int wanted_ = 0, taken_ = 0, running_ = 0;
  uint64_t generation_ = 0;
};

// This process's pool. After fork() the child has none of the parent's threads (and the
// parent's pool may have been mid-job): it gets a new pool, and the old one is left as it is.
HelperPool& pool() {
  static std::atomic<HelperPool*> current{nullptr};
  const pid_t self = getpid();
  HelperPool* p = current.load(std::memory_order_acquire);
  if (p && p->owner() == self) return *p;
  auto* fresh = new HelperPool(self);  // never freed: its threads serve for the process's life
  if (current.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread made it first
  return *p;
}

}  // namespace

void run_with_helpers(int helpers, const std::function<void()>& helper, const std::function<void()>& caller) {
  if (helpers <= 0) return caller();
  HelperPool& p = pool();
  std::unique_lock<std::mutex> busy(p.busy(), std::try_to_lock);
  if (busy.owns_lock()) return p.run(helpers, helper, caller);
  std::vector<std::thread> threads;
  try {
    for (int t = 0; t < helpers; ++t) threads.emplace_back(helper);
  } catch (...) {  // no more threads to be had: those started and the caller do the work
  }
  caller();
  for (std::thread& t : threads) t.join();
}

}  // namespace ciyuan
