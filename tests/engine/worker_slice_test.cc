// SchedulerOptions::worker_slice: each worker asks the kernel for that time
// slice (time/short_slice.h; Linux 6.12 on); 0 leaves the kernel's default;
// outside 100 us-100 ms it is refused.
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ax/scheduler.h"

#include "time/short_slice.h"
#include "two_workers.h"

namespace ax {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// The slices and yielding spins of two workers, taken while both run at once.
struct Seen {
  int64_t slice;
  bool yields;
};
std::vector<Seen> WorkerSlices(Duration slice) {
  SchedulerOptions o;
  o.worker_slice = slice;
  return SeenByTwoWorkers<Seen>(std::move(o), [] {
    return Seen{internal::ThreadSlice(), internal::SpinsYield()};
  });
}

TEST(WorkerSlice, Engine_2_4_EachWorkerTakesTheSlice) {
  bool kernel_keeps = false;  // on a thread of its own (tests/time/short_slice_test.cc)
  std::thread([&] { kernel_keeps = internal::TakeShortSlice(300'000); }).join();
  if (!kernel_keeps) GTEST_SKIP() << "this kernel keeps no custom slice";
  EXPECT_EQ(SchedulerOptions().worker_slice, microseconds(100));
  const std::vector<Seen> seen = WorkerSlices(microseconds(300));
  ASSERT_EQ(seen.size(), 2u);
  for (const Seen& w : seen) {
    EXPECT_EQ(w.slice, 300'000);
    EXPECT_TRUE(w.yields);
  }
}

TEST(WorkerSlice, Engine_2_4_ZeroKeepsTheKernelsDefault) {
  int64_t creator = 0;
  std::thread([&] { creator = internal::ThreadSlice(); }).join();  // a thread left alone
  for (const Seen& w : WorkerSlices(Duration::zero())) {
    EXPECT_EQ(w.slice, creator);
    EXPECT_FALSE(w.yields);
  }
}

TEST(WorkerSlice, Engine_2_12_OutsideItsRangeIsRefused) {
  for (Duration d :
       {Duration(-1), Duration(microseconds(99)), Duration(milliseconds(100) + Duration(1))}) {
    SchedulerOptions o;
    o.worker_slice = d;
    Result<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), ::testing::HasSubstr("worker_slice"));
  }
  for (Duration d : {Duration(microseconds(100)), Duration(milliseconds(100))}) {
    SchedulerOptions o;
    o.worker_slice = d;
    EXPECT_TRUE(Scheduler::Create(o).ok());
  }
}

}  // namespace
}  // namespace ax
