// CancelQueue: the ids of jobs cancelled without the engine lock, on their
// way to the lock's side (SchedulerImpl::CancelOpen, DrainCancels).
//
// A queue per pushing thread, each with one producer (that thread) and one
// consumer (whoever holds the engine lock), found through a thread-local
// cache: a push is a few plain stores and no locked instruction. A cancel
// whose push took a shared lock, or went through moodycamel's
// ConcurrentQueue, took about twice as long in W1 (a million cancels in
// random order): the push sat between one cancel's cache miss on its record
// and the next one's, and the processor no longer overlapped the two.
//
// Each thread's queue is a chain of chunks; chunks the consumer has emptied
// go back to the producer for reuse, so a queue that keeps up allocates
// nothing. A thread's queue is dropped once the thread has exited (or pushed
// to another CancelQueue) and the consumer has taken all of it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ax/job_id.h"

#include "engine/fast_mutex.h"

namespace ax::internal {

class CancelQueue {
 public:
  CancelQueue();
  ~CancelQueue();
  CancelQueue(const CancelQueue&) = delete;
  CancelQueue& operator=(const CancelQueue&) = delete;

  // Any thread. Returns how many of this thread's pushes the consumer has
  // not taken yet, this one included.
  size_t Push(JobId id);

  // The consumer (one thread at a time): calls f(id) for up to `max` queued
  // ids, each thread's in the order it pushed them; returns how many.
  template <class F>
  size_t Take(size_t max, F&& f);
  // Any thread: ids pushed and not taken yet, as of some moment during the
  // call.
  size_t Backlog() const;

  struct Chunk {
    static constexpr uint32_t kIds = 1023;
    std::atomic<Chunk*> next{nullptr};
    JobId ids[kIds];
  };
  // One thread's queue.
  struct Ring {
    // The producer's.
    alignas(64) Chunk* tail;
    uint32_t tail_used = 0;
    uint64_t pushed = 0;
    // Written by the producer, read by the consumer: the ids published so
    // far (the ids, and the chunks' next links, are written before).
    alignas(64) std::atomic<uint64_t> published{0};
    // The consumer's; `taken` is read by the producer and by Backlog.
    alignas(64) Chunk* head;
    uint32_t head_used = 0;
    std::atomic<uint64_t> taken{0};
    // The producer is gone: the consumer drops the ring once it is empty.
    std::atomic<bool> abandoned{false};
    // Chunks the consumer emptied, for the producer's next ones.
    FastMutex spare_mu;
    std::vector<Chunk*> spare;

    Ring();
    ~Ring();
  };

 private:
  static void NextChunk(Ring& ring);
  static void Recycle(Ring& ring, Chunk* chunk);
  // Registers a ring for this thread (and lets go of its ring in another
  // queue, if it had one).
  Ring& Register();
  // The consumer's side of Take for one ring.
  template <class F>
  static size_t TakeFrom(Ring& ring, size_t max, F& f);

  const uint64_t serial_;        // tells this queue from any other, even at the same address
  mutable std::mutex rings_mu_;  // the list; a ring's contents are its producer's and consumer's
  std::vector<std::shared_ptr<Ring>> rings_;
  // rings_.size(), for Backlog's answer without the list's lock when no
  // thread has cancelled.
  std::atomic<size_t> ring_count_{0};
};

template <class F>
size_t CancelQueue::TakeFrom(Ring& ring, size_t max, F& f) {
  const uint64_t taken = ring.taken.load(std::memory_order_relaxed);
  const uint64_t available = ring.published.load(std::memory_order_acquire) - taken;
  const size_t n = static_cast<size_t>(available < max ? available : max);
  for (size_t i = 0; i < n; ++i) {
    if (ring.head_used == Chunk::kIds) {
      // The producer linked the next chunk before it published this id.
      Chunk* next = ring.head->next.load(std::memory_order_acquire);
      Recycle(ring, ring.head);
      ring.head = next;
      ring.head_used = 0;
    }
    f(ring.head->ids[ring.head_used++]);
  }
  ring.taken.store(taken + n, std::memory_order_release);
  return n;
}

template <class F>
size_t CancelQueue::Take(size_t max, F&& f) {
  size_t done = 0;
  std::lock_guard<std::mutex> l(rings_mu_);
  for (size_t i = 0; i < rings_.size() && done < max;) {
    Ring& ring = *rings_[i];
    // Read before taking: a producer marks its ring abandoned after its last
    // push.
    const bool abandoned = ring.abandoned.load(std::memory_order_acquire);
    done += TakeFrom(ring, max - done, f);
    if (abandoned && ring.taken.load(std::memory_order_relaxed) ==
                         ring.published.load(std::memory_order_relaxed)) {
      rings_[i] = std::move(rings_.back());
      rings_.pop_back();
      ring_count_.store(rings_.size(), std::memory_order_relaxed);
      continue;
    }
    ++i;
  }
  return done;
}

}  // namespace ax::internal
