// ManualClock, the tests' clock: a waiter wakes when the clock reaches its
// deadline, as on a real clock, and not when it moves short of it. (It woke
// on every move until 2026-12-04, which let every claim of a job handed
// ahead be given up at each step, and hid a job no thread would wake for.)
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "ax/clock.h"

namespace ax {
namespace {

using std::chrono::milliseconds;

TEST(ManualClock, Engine_2_1_AWaiterWakesAtItsDeadlineAndNotBefore) {
  ManualClock clock(FromUnixNanos(0));
  Interrupt wake;
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    clock.WaitUntil(FromUnixNanos(0) + milliseconds(10), wake);
    returned.store(true);
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Advance(milliseconds(9));
  EXPECT_FALSE(wake.signalled()) << "woken 1 ms before its deadline";
  EXPECT_FALSE(returned.load());
  clock.Advance(milliseconds(1));
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(clock.Waiters(), 0u);
}

TEST(ManualClock, Engine_2_1_AnInterruptEndsTheWaitAndAStepBackWakesNoOne) {
  ManualClock clock(FromUnixNanos(0) + milliseconds(5));
  Interrupt wake;
  std::thread waiter([&] { clock.WaitUntil(FromUnixNanos(0) + milliseconds(10), wake); });
  while (clock.Waiters() == 0) std::this_thread::yield();
  clock.Set(FromUnixNanos(0));
  EXPECT_FALSE(wake.signalled());
  wake.Signal();
  waiter.join();
  EXPECT_EQ(clock.Now(), FromUnixNanos(0));
}

}  // namespace
}  // namespace ax
