// SPEC 2.1 and 2.4: a worker's short time slice (time/short_slice.h). The
// kernel takes it from 6.12 on, keeping the thread's policy and nice value;
// only then do the thread's spins in SystemClock::WaitUntil yield, and they
// still never end before the deadline.
#include "time/short_slice.h"

#include <cstdio>
#include <thread>

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ax/clock.h"

namespace ax::internal {
namespace {

bool KernelAtLeast(int major, int minor) {
  utsname u{};
  int got_major = 0, got_minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &got_major, &got_minor) != 2) return false;
  return got_major > major || (got_major == major && got_minor >= minor);
}

// Runs `f` on a thread of its own, so that what it changes dies with it.
template <typename F>
void OnNewThread(F f) {
  std::thread(f).join();
}

TEST(ShortSlice, Engine_2_4_TheKernelTakesItKeepingPolicyAndNice) {
  const bool eevdf_slices = KernelAtLeast(6, 12);
  OnNewThread([&] {
    EXPECT_FALSE(SpinsYield());
    const sched_param none{};
    ASSERT_EQ(sched_setscheduler(0, SCHED_BATCH, &none), 0);
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 3), 0);
    EXPECT_EQ(TakeShortSlice(250'000), eevdf_slices);
    EXPECT_EQ(SpinsYield(), eevdf_slices);
    if (eevdf_slices) {
      EXPECT_EQ(ThreadSlice(), 250'000);
    }
    EXPECT_EQ(sched_getscheduler(0), SCHED_BATCH);
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())), 3);
  });
  OnNewThread([] { EXPECT_FALSE(SpinsYield()); });  // per thread
}

TEST(ShortSlice, Engine_2_1_WaitUntilNeverReturnsEarlyWhileItsSpinsYield) {
  OnNewThread([] {
    if (!TakeShortSlice(100'000)) GTEST_SKIP() << "this kernel keeps no custom slice";
    ASSERT_TRUE(SpinsYield());
    Interrupt i;
    auto c = SystemClock::Get();
    // As in time_and_submit_test.cc: the WakeMargin grows, the wake-ups then
    // come before the deadline, and the yielding spin must cover the rest.
    for (int k = 0; k < 1'000; ++k) {
      const Instant dl = c->Now() + std::chrono::microseconds(20 + 7 * (k % 40));
      c->WaitUntil(dl, i);
      ASSERT_GE(c->Now(), dl) << "wait " << k;
    }
  });
}

}  // namespace
}  // namespace ax::internal
