#include "timer/map_in.h"

#include <cstdint>

#include <sys/mman.h>

namespace ax::internal {

void MapIn(const void* p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  constexpr uintptr_t kPage = 4096;
  const auto from = reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
  const auto to = (reinterpret_cast<uintptr_t>(p) + bytes + kPage - 1) & ~(kPage - 1);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): whole pages of the caller's memory
  (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace ax::internal
