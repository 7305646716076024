#include "engine/cancel_marks.h"

#include <bit>

namespace ax::internal {

CancelMarks::CancelMarks() { words_.ReserveAll(); }

bool CancelMarks::Rearm() {
  armed_.store(true, std::memory_order_seq_cst);
  if (Scan() == 0) return true;
  // Marked meanwhile: the owner takes it now, without being woken.
  armed_.store(false, std::memory_order_relaxed);
  return false;
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
