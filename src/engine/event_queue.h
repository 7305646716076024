// EventQueue: delivers lifecycle events to the user's observer on one thread
// of its own, in order, so that no user code runs on the scheduler thread or
// under an engine lock (SPEC 2.4, 2.10). Only started when an observer is set.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ax/events.h"

namespace ax::internal {

class EventQueue {
 public:
  EventQueue(std::function<void(const Event&)> observer,
             std::function<void(const Event&)> on_dead_letter);
  ~EventQueue();  // delivers what is queued, then stops
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void Push(Event e);
  // Waits until every event published so far was delivered or `until` passed.
  bool WaitDelivered(std::chrono::steady_clock::time_point until);
  // Whether the caller is the delivering thread (an observer's call).
  bool OnThread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void Loop();

  std::function<void(const Event&)> observer_;
  std::function<void(const Event&)> on_dead_letter_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> queue_;
  uint64_t published_ = 0;
  uint64_t delivered_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ax::internal
