#include "engine/worker_pool.h"

#include <algorithm>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include "time/short_slice.h"
#include "timer/prefetch.h"

namespace ax::internal {

namespace {

// The CPUs the calling thread may run on, in order.
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace

WorkerPool::WorkerPool(int threads, std::function<void(void*, int)> run,
                       std::function<bool(int)> idle, std::function<bool(int)> has_work, bool pin,
                       int64_t slice_ns)
    : run_(std::move(run)),
      idle_(std::move(idle)),
      has_work_(std::move(has_work)),
      busy_(std::make_unique<Busy[]>(static_cast<size_t>(threads))),
      count_(static_cast<size_t>(threads)) {
  const std::vector<int> cpus = pin ? AllowedCpus() : std::vector<int>();
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    const int cpu = cpus.empty() ? -1 : cpus[static_cast<size_t>(i) % cpus.size()];
    threads_.emplace_back([this, i, cpu, slice_ns] {
      pthread_setname_np(pthread_self(), "ax-worker");
      in_worker_ = true;
      if (slice_ns > 0) (void)TakeShortSlice(slice_ns);  // best effort, as the pin
      if (cpu >= 0) {  // best effort: unbound if the system refuses
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      }
      Loop(i);
    });
  }
}

WorkerPool::~WorkerPool() {
  Stop();
  Join();
}

void WorkerPool::Push(void* const* items, size_t n) {
  if (n == 1) {
    queue_.enqueue(*items);
  } else {
    queue_.enqueue_bulk(items, n);
  }
}

int WorkerPool::busy() const {
  int n = 0;
  for (size_t i = 0; i < count_; ++i) {
    n += busy_[i].flag.load(std::memory_order_relaxed) ? 1 : 0;
  }
  return n;
}

void WorkerPool::Stop() {
  if (stopping_.exchange(true)) return;
  for (size_t i = 0; i < count_; ++i) queue_.enqueue(nullptr);
}

void WorkerPool::Join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::Loop(int worker) {
  // A consumer token remembers which producer's block it took from last, so
  // a dequeue need not scan the producers (and touch their lines) each time.
  moodycamel::ConsumerToken token(queue_);
  std::atomic<bool>& busy = busy_[static_cast<size_t>(worker)].flag;
  void* items[kMaxTake];
  for (;;) {
    const size_t per_worker = queue_.size_approx() / count_;
    const size_t take = std::clamp<size_t>(per_worker / kRunsPerTake, 1, kMaxTake);
    size_t n = queue_.try_dequeue_bulk(token, items, take);
    if (n == 0) {
      if (!stopping_.load(std::memory_order_acquire) && idle_(worker)) continue;
      blocked_.fetch_add(1, std::memory_order_seq_cst);
      // Work made for `idle` since its look, by a maker that read Blocked()
      // before the count above and so did not Nudge (the header).
      if (!stopping_.load(std::memory_order_acquire) && has_work_(worker)) {
        blocked_.fetch_sub(1, std::memory_order_relaxed);
        continue;
      }
      n = queue_.wait_dequeue_bulk(token, items, 1);
      blocked_.fetch_sub(1, std::memory_order_relaxed);
    }
    for (size_t i = 0; i < n; ++i) {
      if (items[i] == &nudge_) {
        nudges_.fetch_sub(1, std::memory_order_relaxed);
        continue;
      }
      if (items[i] == nullptr || stopping_.load(std::memory_order_acquire)) {
        // Passes a stop on: this take may have held another worker's.
        queue_.enqueue(nullptr);
        idle_(worker);
        return;
      }
      if (i + 1 < n) PrefetchForWrite(items[i + 1]);
      busy.store(true, std::memory_order_relaxed);
      run_(items[i], worker);
      busy.store(false, std::memory_order_relaxed);
    }
  }
}

}  // namespace ax::internal
