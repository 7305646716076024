#include "engine/worker_pool.h"

namespace ax::internal {

WorkerPool::WorkerPool(int threads, std::function<void(uint32_t)> run) : run_(std::move(run)) {
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  Stop();
  Join();
}

void WorkerPool::Push(const uint32_t* items, size_t n) {
  if (n == 1) {
    queue_.enqueue(*items);
  } else {
    queue_.enqueue_bulk(items, n);
  }
}

void WorkerPool::Stop() {
  if (stopping_.exchange(true)) return;
  for (size_t i = 0; i < threads_.size(); ++i) queue_.enqueue(kStopItem);
}

void WorkerPool::Join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::Loop() {
  uint32_t item = 0;
  for (;;) {
    queue_.wait_dequeue(item);
    if (item == kStopItem || stopping_.load(std::memory_order_acquire)) return;
    busy_.fetch_add(1, std::memory_order_relaxed);
    run_(item);
    busy_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace ax::internal
