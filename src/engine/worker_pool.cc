#include "engine/worker_pool.h"

#include <pthread.h>

namespace ax::internal {

WorkerPool::WorkerPool(int threads, std::function<void(void*, int)> run,
                       std::function<void(int)> idle)
    : run_(std::move(run)), idle_(std::move(idle)) {
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this, i] {
      pthread_setname_np(pthread_self(), "ax-worker");
      Loop(i);
    });
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

void WorkerPool::Stop() {
  if (stopping_.exchange(true)) return;
  for (size_t i = 0; i < threads_.size(); ++i) queue_.enqueue(nullptr);
}

void WorkerPool::Join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::Loop(int worker) {
  void* item = nullptr;
  for (;;) {
    if (!queue_.try_dequeue(item)) {
      idle_(worker);
      queue_.wait_dequeue(item);
    }
    if (item == nullptr || stopping_.load(std::memory_order_acquire)) {
      idle_(worker);
      return;
    }
    busy_.fetch_add(1, std::memory_order_relaxed);
    run_(item, worker);
    busy_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace ax::internal
