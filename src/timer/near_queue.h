// NearQueue: the exact-order stage of the timer wheel (wheel.h). It holds the
// entries whose tick has been reached and hands them out by (deadline,
// insertion sequence), so the wheel fires exactly and same-deadline entries
// stay FIFO whichever levels they came through.
//
// Two parts, merged on read:
//   run_  a sorted array consumed from head_: a whole wheel slot is appended
//         (Append) and sorted once (FinishLoad) -- O(1) per pop afterwards,
//         which matters when a million deadlines share one slot;
//   heap_ a binary min-heap for single inserts whose tick is already reached
//         (past deadlines, or the current tick).
// The wheel starts loading a slot only when the queue is empty, so the run
// never needs merging (entries pushed while a load is under way go to the
// heap, and the wheel pops nothing until FinishLoad). Removal is lazy: the
// wheel recognises stale entries by their tag and deadline, drops them when
// they reach the top, and calls Compact when they are the majority.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ax::internal {

struct NearEntry {
  int64_t deadline;
  uint64_t seq;  // insertion sequence number: the tie-breaker
  uint32_t id;
  uint16_t tag = 0;  // the wheel's tag of the insert (tells a re-insert from this one)
};

// Strict (deadline, seq) order.
inline bool EarlierThan(const NearEntry& a, const NearEntry& b) {
  return a.deadline != b.deadline ? a.deadline < b.deadline : a.seq < b.seq;
}

class NearQueue {
 public:
  bool empty() const { return head_ == run_.size() && heap_.empty(); }
  size_t size() const { return run_.size() - head_ + heap_.size(); }

  // The earliest entry. REQUIRES: !empty().
  const NearEntry& Top() const { return RunIsTop() ? run_[head_] : heap_.front(); }
  // Removes Top(). REQUIRES: !empty().
  void Pop();

  // Adds one entry in O(log n).
  void Push(const NearEntry& entry) {
    heap_.push_back(entry);
    std::push_heap(heap_.begin(), heap_.end(), LaterThan);
  }

  // Bulk load of a wheel slot: Append each entry, then FinishLoad once, with
  // no Top or Pop in between. REQUIRES: empty() before the first Append.
  void Append(const NearEntry& entry) {
    assert(head_ == 0);
    if (!run_.empty() && EarlierThan(entry, run_.back())) run_sorted_ = false;
    run_.push_back(entry);
  }
  void FinishLoad();
  // Room for n more Appends.
  void Reserve(size_t n) { run_.reserve(run_.size() + n); }
  // Maps in the memory of the next n Appends, in one system call, when the
  // run is large (see near_queue.cc). Optional: only saves page faults.
  void Prefault(size_t n);

  // Removes every entry for which `stale(entry)` holds; keeps the order.
  template <typename IsStale>
  void Compact(IsStale stale);

  // The buffer of a large run that has drained (a storm's slot), for the
  // owner to free outside its lock: giving back tens of megabytes to the
  // kernel took 1.6-2.3 ms. Held until taken, or until the next large run
  // drains (that frees this one).
  std::vector<NearEntry> TakeDrained() { return std::exchange(drained_, {}); }

  size_t MemoryBytes() const {
    return (run_.capacity() + heap_.capacity() + drained_.capacity()) * sizeof(NearEntry);
  }

 private:
  static bool LaterThan(const NearEntry& a, const NearEntry& b) { return EarlierThan(b, a); }
  bool RunIsTop() const {
    if (head_ == run_.size()) return false;
    return heap_.empty() || EarlierThan(run_[head_], heap_.front());
  }
  void ResetRun();

  std::vector<NearEntry> run_;  // sorted; run_[head_..] are queued
  size_t head_ = 0;
  // Whether run_ is in order: checked as entries are appended (a slot is
  // usually in insertion order already), not by a pass over a million
  // entries at FinishLoad.
  bool run_sorted_ = true;
  // Prefault: the run's buffer, and the end of what is mapped in already.
  const NearEntry* prefault_base_ = nullptr;
  size_t prefault_end_ = 0;         // entries
  std::vector<NearEntry> heap_;     // min-heap by EarlierThan
  std::vector<NearEntry> drained_;  // see TakeDrained
};

template <typename IsStale>
void NearQueue::Compact(IsStale stale) {
  auto run_end =
      std::remove_if(run_.begin() + static_cast<std::ptrdiff_t>(head_), run_.end(), stale);
  run_.erase(run_end, run_.end());
  if (head_ == run_.size()) ResetRun();
  heap_.erase(std::remove_if(heap_.begin(), heap_.end(), stale), heap_.end());
  std::make_heap(heap_.begin(), heap_.end(), LaterThan);
}

}  // namespace ax::internal
