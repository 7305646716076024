// FastMutex: the engine lock. A futex word with three states (free, held,
// held with sleepers), as in Drepper's "Futexes Are Tricky" (mutex 3).
//
// std::mutex on glibc took about 140 instructions for a lock and an unlock
// (pthread_mutex_trylock and pthread_mutex_unlock check the mutex's kind on
// every call). The engine takes its lock once a call, and a caller cancelling
// jobs at random only overlaps one call's cache misses with the next's while
// the path between them is short: W1's cancel went from 255 to 230 ns with
// this lock (6 alternating pairs), W2 and W4 unchanged.
//
// Meets the Lockable requirements (std::unique_lock, and
// std::condition_variable_any for waiting). Not recursive, not fair.
#pragma once

#include <atomic>
#include <cstdint>

namespace ax::internal {

class FastMutex {
 public:
  FastMutex() = default;
  FastMutex(const FastMutex&) = delete;
  FastMutex& operator=(const FastMutex&) = delete;

  bool try_lock() {
    uint32_t expected = kFree;
    return state_.compare_exchange_strong(expected, kHeld, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void lock() {
    if (!try_lock()) LockSlow();
  }
  // Whether some thread holds it (a hint: for spinning before a try_lock).
  bool held() const { return state_.load(std::memory_order_relaxed) != kFree; }
  void unlock() {
    if (state_.exchange(kFree, std::memory_order_release) == kSleepers) WakeOne();
  }

 private:
  static constexpr uint32_t kFree = 0;
  static constexpr uint32_t kHeld = 1;
  static constexpr uint32_t kSleepers = 2;  // held, and a thread may sleep on it

  void LockSlow();
  void WakeOne();

  std::atomic<uint32_t> state_{kFree};
};

}  // namespace ax::internal
