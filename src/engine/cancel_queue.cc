#include "engine/cancel_queue.h"

namespace ax::internal {
namespace {

std::atomic<uint64_t> next_serial{1};

// The calling thread's ring in the CancelQueue it pushed to last.
struct ThreadRing {
  uint64_t serial = 0;  // of that queue; 0: none
  CancelQueue::Ring* ring = nullptr;
  std::shared_ptr<CancelQueue::Ring> owner;  // the ring outlives a queue destroyed first

  ThreadRing() = default;
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;
  ~ThreadRing() {
    if (owner) owner->abandoned.store(true, std::memory_order_release);
  }
};

thread_local ThreadRing this_thread_ring;

}  // namespace

CancelQueue::Ring::Ring() : tail(new Chunk), head(tail) {}

CancelQueue::Ring::~Ring() {
  for (Chunk* c = head; c != nullptr;) {
    Chunk* next = c->next.load(std::memory_order_relaxed);
    delete c;
    c = next;
  }
  for (Chunk* c : spare) delete c;
}

CancelQueue::CancelQueue() : serial_(next_serial.fetch_add(1, std::memory_order_relaxed)) {}

CancelQueue::~CancelQueue() = default;

size_t CancelQueue::Push(JobId id) {
  ThreadRing& t = this_thread_ring;
  Ring& ring = t.serial == serial_ ? *t.ring : Register();
  if (ring.tail_used == Chunk::kIds) [[unlikely]] {
    NextChunk(ring);
  }
  ring.tail->ids[ring.tail_used++] = id;
  const uint64_t pushed = ++ring.pushed;
  ring.published.store(pushed, std::memory_order_release);
  return static_cast<size_t>(pushed - ring.taken.load(std::memory_order_relaxed));
}

CancelQueue::Ring& CancelQueue::Register() {
  ThreadRing& t = this_thread_ring;
  if (t.owner) t.owner->abandoned.store(true, std::memory_order_release);
  auto ring = std::make_shared<Ring>();
  {
    std::lock_guard<std::mutex> l(rings_mu_);
    rings_.push_back(ring);
    ring_count_.store(rings_.size(), std::memory_order_release);
  }
  t.serial = serial_;
  t.ring = ring.get();
  t.owner = std::move(ring);
  return *t.ring;
}

void CancelQueue::NextChunk(Ring& ring) {
  Chunk* chunk = nullptr;
  {
    std::lock_guard<FastMutex> l(ring.spare_mu);
    if (!ring.spare.empty()) {
      chunk = ring.spare.back();
      ring.spare.pop_back();
    }
  }
  if (chunk == nullptr) chunk = new Chunk;
  chunk->next.store(nullptr, std::memory_order_relaxed);
  // Published to the consumer with the first id pushed into it.
  ring.tail->next.store(chunk, std::memory_order_relaxed);
  ring.tail = chunk;
  ring.tail_used = 0;
}

void CancelQueue::Recycle(Ring& ring, Chunk* chunk) {
  std::lock_guard<FastMutex> l(ring.spare_mu);
  ring.spare.push_back(chunk);
}

size_t CancelQueue::Backlog() const {
  // A thread's ring is registered before its first push: with none, none is
  // queued.
  if (ring_count_.load(std::memory_order_acquire) == 0) return 0;
  size_t n = 0;
  std::lock_guard<std::mutex> l(rings_mu_);
  for (const std::shared_ptr<Ring>& ring : rings_) {
    n += static_cast<size_t>(ring->published.load(std::memory_order_acquire) -
                             ring->taken.load(std::memory_order_relaxed));
  }
  return n;
}

}  // namespace ax::internal
