#include "engine/cancel_marks.h"

#include <bit>

namespace ax::internal {

CancelMarks::CancelMarks() { words_.ReserveAll(); }

bool CancelMarks::Rearm() {
  armed_.store(true, std::memory_order_seq_cst);
  if (Scan() == 0) return true;
  // Marked meanwhile: the owner takes it now, without being woken -- unless
  // that Mark took the arming first and wakes the owner: then it stays armed
  // as far as the owner knows (a wake-up for each arming, never more).
  return !armed_.exchange(false, std::memory_order_seq_cst);
}

size_t CancelMarks::Scan() const {
  size_t n = 0;
  for (size_t i = 0; i < words_.size(); ++i) {
    n += static_cast<size_t>(
        std::popcount(words_[static_cast<uint32_t>(i)].load(std::memory_order_seq_cst)));
  }
  return n;
}

}  // namespace ax::internal
