// SPEC 2.1 and 2.4: a worker's short time slice (time/short_slice.h). The
// kernel takes it from 6.12 on, keeping the thread's policy and nice value;
// only then do the thread's spins in SystemClock::WaitUntil yield (that they
// still never end before the deadline: tests/engine/time_and_submit_test.cc).
#include "time/short_slice.h"

#include <cstdio>
#include <thread>

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

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

}  // namespace
}  // namespace ax::internal
