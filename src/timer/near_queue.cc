#include "timer/near_queue.h"

#include <cstdint>

#include <sys/mman.h>

namespace ax::internal {
namespace {

// A drained run keeps its buffer for the next slot unless a burst made it
// large; then the memory goes back.
constexpr size_t kMaxIdleRunCapacity = 4096;
// Runs from this many bytes on have their pages mapped in ahead of the
// appends (Prefault).
constexpr size_t kPrefaultFrom = size_t{1} << 20;
constexpr uintptr_t kPage = 4096;

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

// A slot of a million entries fills 24 MB of fresh memory. Touched page by
// page, that was 6,000 page faults on the test VM at about 11 µs each (a
// fault is a trip to the hypervisor there), 68-70 ms; madvise(
// MADV_POPULATE_WRITE) maps the same 24 MB in 5-6 ms. The wheel calls this
// before each piece of a load, so the work stays in pieces.
void NearQueue::Prefault(size_t n) {
#ifdef MADV_POPULATE_WRITE
  if (run_.capacity() * sizeof(NearEntry) < kPrefaultFrom) return;
  if (run_.data() != prefault_base_) {  // a new buffer: nothing mapped in yet but the run
    prefault_base_ = run_.data();
    prefault_end_ = run_.size();
  }
  const size_t end = std::min(run_.size() + n, run_.capacity());
  if (end <= prefault_end_) return;
  // Whole pages, each holding part of the buffer, so all of them are mapped.
  const auto from = reinterpret_cast<uintptr_t>(run_.data() + prefault_end_) & ~(kPage - 1);
  const auto to = (reinterpret_cast<uintptr_t>(run_.data() + end) + kPage - 1) & ~(kPage - 1);
  // On failure (a kernel before 5.14) the appends fault the pages in as before.
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the range is the buffer's own pages
  madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  prefault_end_ = end;
#else
  (void)n;
#endif
}

void NearQueue::ResetRun() {
  head_ = 0;
  if (run_.capacity() > kMaxIdleRunCapacity) {
    std::vector<NearEntry>().swap(run_);
    prefault_base_ = nullptr;  // a later buffer may come at the same address
  } else {
    run_.clear();
  }
}

}  // namespace ax::internal
