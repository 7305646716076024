#include "timer/near_queue.h"

#include "timer/map_in.h"

namespace ax::internal {
namespace {

// A drained run keeps its buffer for the next slot unless a burst made it
// large; then the memory goes back, through TakeDrained.
constexpr size_t kMaxIdleRunCapacity = 4096;
// Runs from this many bytes on have their pages mapped in ahead of the
// appends (Prefault).
constexpr size_t kPrefaultFrom = size_t{1} << 20;

}  // namespace

void NearQueue::Pop() {
  assert(!empty());
  if (RunIsTop()) {
    if (++head_ == run_.size()) ResetRun();
  } else {
    std::pop_heap(heap_.begin(), heap_.end(), LaterThan);
    heap_.pop_back();
  }
}

void NearQueue::FinishLoad() {
  // Slots are usually already in insertion order (appends and cascades keep
  // it), so sort only when an append broke the order.
  if (!run_sorted_) std::sort(run_.begin(), run_.end(), EarlierThan);
  run_sorted_ = true;
}

// A slot of a million entries fills 24 MB of fresh memory: 6,000 page
// faults on the test VM, 68-70 ms, where MapIn takes 5-6 ms. The wheel calls
// this before each piece of a load, so the work stays in pieces.
void NearQueue::Prefault(size_t n) {
  if (run_.capacity() * sizeof(NearEntry) < kPrefaultFrom) return;
  if (run_.data() != prefault_base_) {  // a new buffer: nothing mapped in yet but the run
    prefault_base_ = run_.data();
    prefault_end_ = run_.size();
  }
  const size_t end = std::min(run_.size() + n, run_.capacity());
  if (end <= prefault_end_) return;
  MapIn(run_.data() + prefault_end_, (end - prefault_end_) * sizeof(NearEntry));
  prefault_end_ = end;
}

void NearQueue::ResetRun() {
  head_ = 0;
  if (run_.capacity() > kMaxIdleRunCapacity) {
    drained_ = std::exchange(run_, {});
    prefault_base_ = nullptr;  // a later buffer may come at the same address
  } else {
    run_.clear();
  }
}

}  // namespace ax::internal
