#include "engine/fast_mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ax::internal {

// Whoever takes the lock here marks it kSleepers, even if no one else waits:
// its unlock then makes one needless wake-up call, which is cheaper than
// counting the sleepers.
void FastMutex::LockSlow() {
  while (state_.exchange(kSleepers, std::memory_order_acquire) != kFree) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE, kSleepers, nullptr,
            nullptr, 0);
  }
}

void FastMutex::WakeOne() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

}  // namespace ax::internal
