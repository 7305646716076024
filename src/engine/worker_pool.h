// WorkerPool: the threads that run callbacks. The scheduler thread hands
// them runs through a lock-free queue (moodycamel's
// BlockingConcurrentQueue), so handing off never blocks the scheduler, even
// with a million runs due at once (SPEC 2.4). A worker takes one run at a
// time, so a slow callback holds up only its own worker -- except in a storm:
// with more than kRunsPerTake runs queued per worker, it takes up to
// kMaxTake at once, in one dequeue, and starts loading each run's record
// while it runs the one before. The runs it holds would have waited behind
// more than that many in the queue anyway. In W2's drain: 3.58 -> 4.59 M
// fires a second, 694 -> 558 ms of CPU (medians of 4 alternating pairs).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <concurrentqueue/blockingconcurrentqueue.h>

namespace ax::internal {

// An idle worker spins briefly before it sleeps on the semaphore.
// moodycamel's default, 10,000 spins, kept idle workers burning a core's
// share between runs arriving tens of microseconds apart, and on a small
// machine took the CPU the scheduler thread needed.
struct WorkerQueueTraits : moodycamel::ConcurrentQueueDefaultTraits {
  static const int MAX_SEMA_SPINS = 100;
};

class WorkerPool {
 public:
  static constexpr size_t kMaxTake = 16;
  static constexpr size_t kRunsPerTake = 4;

  // Whether the calling thread is a worker of some pool.
  static bool InWorker() { return in_worker_; }

  // Starts `threads` workers calling `run(item, worker)` for each pushed
  // item, and `idle(worker)` before a worker blocks for want of items (and
  // once more before it exits): when it returns true (it found work of its
  // own), the worker looks at the queue again instead of blocking. Work for
  // `idle` made after its look would be missed, if its maker read Blocked()
  // before the worker counted itself there and so did not Nudge: a worker
  // counted in Blocked() therefore asks `has_work(worker)` before it sleeps,
  // and on true calls `idle` again. With `pin`, worker i runs only on the
  // i-th CPU (round robin) of those the calling thread may run on. With
  // `slice_ns`, each worker asks for that time slice (time/short_slice.h).
  WorkerPool(int threads, std::function<void(void*, int)> run, std::function<bool(int)> idle,
             std::function<bool(int)> has_work, bool pin = false, int64_t slice_ns = 0);
  ~WorkerPool();  // Stop() + Join()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Any thread; never blocks.
  void Push(void* const* items, size_t n);
  // Wakes one blocked worker, if any, to call `idle` again. Any thread.
  void Nudge() {
    nudges_.fetch_add(1, std::memory_order_relaxed);
    queue_.enqueue(&nudge_);
  }
  // Workers blocked (or about to block) on the queue.
  int Blocked() const { return blocked_.load(std::memory_order_seq_cst); }
  // Workers exit once they see the stop (items still queued are dropped, and
  // reported to `run` no more). Does not wait.
  void Stop();
  // Waits for every worker thread to exit.
  void Join();

  // Items queued, nudges not counted (approximate).
  size_t QueueDepth() const {
    const size_t queued = queue_.size_approx();
    const size_t nudges = nudges_.load(std::memory_order_relaxed);
    return queued > nudges ? queued - nudges : 0;
  }
  // For work a worker does from `idle`: counted in busy() meanwhile.
  void SetBusy(int worker, bool busy) {
    busy_[static_cast<size_t>(worker)].flag.store(busy, std::memory_order_relaxed);
  }
  int busy() const;
  int size() const { return static_cast<int>(count_); }

 private:
  void Loop(int worker);

  std::function<void(void*, int)> run_;
  std::function<bool(int)> idle_;
  std::function<bool(int)> has_work_;
  moodycamel::BlockingConcurrentQueue<void*, WorkerQueueTraits> queue_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> blocked_{0};
  char nudge_ = 0;  // its address is Nudge's item
  // Nudges queued and not yet taken: a worker in a storm that counted one as
  // work queued left the storm (SchedulerImpl::PullDue).
  std::atomic<size_t> nudges_{0};
  // Whether each worker is in `run`: a flag per worker on its own cache
  // line, as one shared count was written by every worker for every run.
  struct alignas(64) Busy {
    std::atomic<bool> flag{false};
  };
  std::unique_ptr<Busy[]> busy_;
  const size_t count_;  // threads; workers read it while threads_ is filled
  std::vector<std::thread> threads_;
  static inline thread_local bool in_worker_ = false;
};

}  // namespace ax::internal
