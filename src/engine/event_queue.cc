#include "engine/event_queue.h"

#include <pthread.h>

namespace ax::internal {

EventQueue::EventQueue(std::function<void(const Event&)> observer,
                       std::function<void(const Event&)> on_dead_letter)
    : observer_(std::move(observer)), on_dead_letter_(std::move(on_dead_letter)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ax-events");
    Loop();
  });
}

EventQueue::~EventQueue() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EventQueue::Push(Event e) {
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(e));
    ++published_;
  }
  cv_.notify_all();
}

bool EventQueue::WaitDelivered(std::chrono::steady_clock::time_point until) {
  std::unique_lock<std::mutex> l(mu_);
  uint64_t target = published_;
  return cv_.wait_until(l, until, [&] { return delivered_ >= target; });
}

void EventQueue::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    Event e = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
    // User code: a throwing observer must not take the engine down, nor keep
    // the dead-letter hook from its call.
    auto call = [&e](const std::function<void(const Event&)>& hook) {
      try {
        hook(e);
      } catch (...) {
      }
    };
    if (observer_) call(observer_);
    if (e.type == EventType::kDead && on_dead_letter_) call(on_dead_letter_);
    l.lock();
    ++delivered_;
    cv_.notify_all();
  }
}

}  // namespace ax::internal
