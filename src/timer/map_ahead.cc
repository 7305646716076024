#include "timer/map_ahead.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include <pthread.h>

#include "timer/map_in.h"

namespace ax::internal {
namespace {

struct Pending {
  const void* owner;
  void* p;
  size_t bytes;
};

struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> requests;
  const void* busy = nullptr;  // owner of the request being served
  bool started = false;
  bool failed = false;  // the thread could not start

  void Serve() {
    std::unique_lock<std::mutex> l(mu);
    for (;;) {
      cv.wait(l, [this] { return !requests.empty(); });
      const Pending r = requests.front();
      requests.pop_front();
      busy = r.owner;
      l.unlock();
      MapIn(r.p, r.bytes);
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
  Queue& q = TheQueue();
  std::lock_guard<std::mutex> l(q.mu);
  if (!q.started) {
    q.started = true;
    try {
      std::thread([&q] {
        pthread_setname_np(pthread_self(), "ax-mapahead");
        q.Serve();
      }).detach();
    } catch (const std::system_error&) {
      q.failed = true;
    }
  }
  if (q.failed) return;
  q.requests.push_back({owner, p, bytes});
  q.cv.notify_all();
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
