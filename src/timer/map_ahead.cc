#include "timer/map_ahead.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>

#include "timer/map_in.h"

namespace ax::internal {
namespace {

struct Pending {
  const void* owner;
  void* p;  // MapIn [p, p + bytes), or
  size_t bytes;
  std::vector<void*> pages;  // write to each of these pages, then set *done
  std::atomic<bool>* done;

  void Serve() const {
    if (p != nullptr) MapIn(p, bytes);
    for (void* page : pages) static_cast<volatile char*>(page)[0] = 0;
    if (done != nullptr) done->store(true, std::memory_order_release);
  }
};

struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> requests;
  const void* busy = nullptr;  // owner of the request being served
  bool started = false;
  bool failed = false;  // the thread could not start

  void Push(Pending r) {
    std::lock_guard<std::mutex> l(mu);
    if (!started) {
      started = true;
      try {
        std::thread([this] {
          pthread_setname_np(pthread_self(), "ax-mapahead");
          Serve();
        }).detach();
      } catch (const std::system_error&) {
        failed = true;
      }
    }
    if (failed) {
      if (r.done != nullptr) r.done->store(true, std::memory_order_release);
      return;
    }
    requests.push_back(std::move(r));
    cv.notify_all();
  }

  void Serve() {
    std::unique_lock<std::mutex> l(mu);
    for (;;) {
      cv.wait(l, [this] { return !requests.empty(); });
      const Pending r = std::move(requests.front());
      requests.pop_front();
      busy = r.owner;
      l.unlock();
      r.Serve();
      l.lock();
      busy = nullptr;
      cv.notify_all();
    }
  }
};

// Never destroyed: owners may outlive static destruction (a scheduler kept
// in a static), and the thread waits on it until the process ends.
Queue& TheQueue() {
  static auto* queue = new Queue;
  return *queue;
}

}  // namespace

void MapAhead::Request(const void* owner, void* p, size_t bytes) {
  TheQueue().Push({owner, p, bytes, {}, nullptr});
}

void MapAhead::Touch(const void* owner, std::vector<void*> pages, std::atomic<bool>* done) {
  TheQueue().Push({owner, nullptr, 0, std::move(pages), done});
}

void MapAhead::Forget(const void* owner) {
  Queue& q = TheQueue();
  std::unique_lock<std::mutex> l(q.mu);
  std::erase_if(q.requests, [owner](const Pending& r) { return r.owner == owner; });
  q.cv.wait(l, [&q, owner] { return q.busy != owner; });
}

void MapAhead::Drain() {
  Queue& q = TheQueue();
  std::unique_lock<std::mutex> l(q.mu);
  q.cv.wait(l, [&q] { return q.requests.empty() && q.busy == nullptr; });
}

}  // namespace ax::internal
