#include "timer/near_queue.h"

namespace ax::internal {
namespace {

// A drained run keeps its buffer for the next slot unless a burst made it
// large; then the memory goes back.
constexpr size_t kMaxIdleRunCapacity = 4096;

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

void NearQueue::ResetRun() {
  head_ = 0;
  if (run_.capacity() > kMaxIdleRunCapacity) {
    std::vector<NearEntry>().swap(run_);
  } else {
    run_.clear();
  }
}

}  // namespace ax::internal
