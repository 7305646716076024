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
  std::thread thread;
  bool running = false;  // the thread serves requests, or waits for them
  bool quit = false;     // StopIdle: the thread ends once out of requests
  bool failed = false;   // the thread could not start

  void Push(Pending r) {
    std::lock_guard<std::mutex> l(mu);
    if (!running && !failed) {
      // An ended thread takes mu_ no more: joined under it.
      if (thread.joinable()) thread.join();
      try {
        thread = std::thread([this] {
          pthread_setname_np(pthread_self(), "ax-mapahead");
          Serve();
        });
        running = true;
        quit = false;
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
      cv.wait(l, [this] { return !requests.empty() || quit; });
      if (requests.empty()) break;
      const Pending r = std::move(requests.front());
      requests.pop_front();
      busy = r.owner;
      l.unlock();
      r.Serve();
      l.lock();
      busy = nullptr;
      cv.notify_all();
    }
    running = false;
    cv.notify_all();
  }
};

// Never destroyed: owners may outlive static destruction (a scheduler kept
// in a static), and the thread may wait on it until the process ends.
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

void MapAhead::StopIdle() {
  Queue& q = TheQueue();
  std::unique_lock<std::mutex> l(q.mu);
  if (q.running) {
    if (!q.requests.empty() || q.busy != nullptr) return;  // another owner's work
    q.quit = true;
    q.cv.notify_all();
    q.cv.wait(l, [&q] { return !q.running; });
  }
  std::thread ended = std::move(q.thread);
  l.unlock();
  if (ended.joinable()) ended.join();
}

void MapAhead::Drain() {
  Queue& q = TheQueue();
  std::unique_lock<std::mutex> l(q.mu);
  q.cv.wait(l, [&q] { return q.requests.empty() && q.busy == nullptr; });
}

}  // namespace ax::internal
