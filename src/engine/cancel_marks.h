// CancelMarks: the job slots cancelled without the engine lock, marked for
// the lock's side (SchedulerImpl::Cancel, DrainCancels).
//
// A bit per job slot, set by the canceller with one locked OR; the lock's
// side finds the marked slots by scanning the bits from where it stopped
// last, so it takes them in slot order whatever the order of the cancels,
// and walks the job records forwards. Nothing is allocated per cancel, and
// nothing is written but the bit and a count that shows the owner whether
// cancels are still coming: a burst of a million cancels leaves a million
// bits set (128 KB), not 8 MB of queued ids.
//
// An earlier version queued the ids on a chain of chunks per thread, and the
// scheduler thread drained them every 4,096. In W1 (a million cancels in
// random order) the caller's cancel took 190-313 ns with the queue and the
// drain beside it, against 84-108 ns when it only took its record's gate:
// the queue's chunks went back and forth between the cores, and the drain's
// memory work on the other core slowed the caller's cache misses. So a
// burst is now drained once it is over (the scheduler's policy,
// SchedulerImpl::MaybeDrainCancels); the bitmap and the drain after the
// burst took 129-200 ns in the same minutes (docs/engine.md).
//
// The owner's side (Ensure, Take, Rearm) is one thread at a time, under the
// engine lock.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "timer/chunked_array.h"

namespace ax::internal {

class CancelMarks {
 public:
  CancelMarks();
  CancelMarks(const CancelMarks&) = delete;
  CancelMarks& operator=(const CancelMarks&) = delete;

  // The owner: makes `slot` markable. Before any other thread can learn of
  // the slot (a release store that Mark's caller acquires).
  void Ensure(uint32_t slot) {
    if (slot >= slots_) [[unlikely]] {
      words_.EnsureIndex(slot >> 6);
      slots_ = words_.size() * 64;
    }
  }

  // Any thread, for a slot whose job it has just cancelled (one mark per
  // cancel): marks it. Returns true when the owner is to be woken: for the
  // first mark since the owner re-armed (Rearm).
  bool Mark(uint32_t slot) {
    // Not a count of marks when threads mark at once, but it moves.
    marked_.store(marked_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    words_.Unmoving(slot >> 6).fetch_or(uint64_t{1} << (slot & 63), std::memory_order_seq_cst);
    // With Rearm's store and scan, a Dekker pair: either this load sees the
    // owner armed, or the owner's scan after arming sees this mark.
    return armed_.load(std::memory_order_seq_cst) &&
           armed_.exchange(false, std::memory_order_seq_cst);
  }

  // The owner: calls f(slot) for up to `max` marked slots, unmarking them,
  // in slot order from where the last Take stopped; returns how many.
  template <class F>
  size_t Take(size_t max, F&& f);

  // The owner, once Take found fewer than it was allowed: the next Mark
  // wakes it again. Returns false, and leaves the owner unarmed, if a slot
  // was marked meanwhile: it is the owner's to take without a wake-up (true
  // if that mark's Mark already returned true: the wake-up is on its way).
  bool Rearm();

  // The owner: marks not taken yet (a scan of the bits, unless none was
  // made since the owner re-armed).
  size_t Backlog() const { return Armed() ? 0 : Scan(); }
  // Any thread: moves while marks are made; a burst is over when it stops.
  uint64_t Marked() const { return marked_.load(std::memory_order_relaxed); }
  // Any thread: no mark since the owner re-armed, but for one being made
  // (whose Mark wakes the owner): nothing for the owner to do.
  bool Armed() const { return armed_.load(std::memory_order_acquire); }

 private:
  size_t Scan() const;

  ChunkedArray<std::atomic<uint64_t>, 9> words_;  // 64 slots a word; never moves
  size_t slots_ = 0;                              // the owner's: markable slots
  size_t cursor_ = 0;                             // the owner's: the next word to scan
  alignas(64) std::atomic<uint64_t> marked_{0};
  std::atomic<bool> armed_{true};
};

template <class F>
size_t CancelMarks::Take(size_t max, F&& f) {
  const size_t words = words_.size();
  size_t done = 0;
  for (size_t seen = 0; seen < words && done < max; ++seen) {
    if (cursor_ >= words) cursor_ = 0;
    std::atomic<uint64_t>& word = words_[static_cast<uint32_t>(cursor_)];
    uint64_t bits = word.load(std::memory_order_relaxed);
    if (bits != 0) {
      // The lowest bits, as many as allowed; the rest stay for the next Take.
      if (static_cast<size_t>(std::popcount(bits)) > max - done) {
        uint64_t keep = 0;
        for (size_t k = done; k < max; ++k) {
          keep |= bits & (~bits + 1);
          bits &= bits - 1;
        }
        bits = keep;
      }
      word.fetch_and(~bits, std::memory_order_acquire);
      const uint32_t base = static_cast<uint32_t>(cursor_ * 64);
      for (uint64_t b = bits; b != 0; b &= b - 1)
        f(base + static_cast<uint32_t>(std::countr_zero(b)));
      done += static_cast<size_t>(std::popcount(bits));
      if (word.load(std::memory_order_relaxed) != 0) continue;  // more in this word
    }
    ++cursor_;
  }
  return done;
}

}  // namespace ax::internal
