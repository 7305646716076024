// SPEC 2.1: no job runs before its deadline on the clock. `After` counts its
// delay from SystemClock::NowOrLater, the time-stamp counter estimate of
// time/tsc_estimate.h, which must never be behind the clock.
#include "time/tsc_estimate.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ax/clock.h"

namespace ax::internal {
namespace {

using E = TscEstimate;

// A simulated machine: the true time advances in steps the test takes; the
// counter runs at `ticks_per_ns`; the clock reads the true time plus `offset`
// (a step), and each clock read takes `read_ns` of true time.
struct Sim {
  int64_t ns = 1'700'000'000'000'000'000;  // true time (ns since the epoch)
  double ticks = 1e12;
  double ticks_per_ns = 2.1;
  int64_t offset = 0;
  int64_t read_ns = 40;
  int64_t reads = 0;
};
Sim sim;

uint64_t SimTicks() { return static_cast<uint64_t>(sim.ticks); }
int64_t SimReal() {
  const int64_t real = sim.ns + sim.offset;
  ++sim.reads;
  sim.ns += sim.read_ns;
  sim.ticks += static_cast<double>(sim.read_ns) * sim.ticks_per_ns;
  return real;
}
void Pass(int64_t ns) {
  sim.ns += ns;
  sim.ticks += static_cast<double>(ns) * sim.ticks_per_ns;
}
int64_t Clock() { return sim.ns + sim.offset; }

class TscEstimateTest : public ::testing::Test {
 protected:
  void SetUp() override { sim = Sim{}; }

  // Calls every `step_ns` for `total_ns`; checks each result against the
  // clock at the call and returns the share of calls that were estimates.
  double Run(E& e, int64_t total_ns, int64_t step_ns = 10'000) {
    int estimates = 0, calls = 0;
    for (int64_t t = 0; t < total_ns; t += step_ns, ++calls) {
      Pass(step_ns);
      const int64_t clock = Clock();
      const int64_t before = sim.reads;
      const int64_t got = e.NowOrLater();
      // Late by the margin, and by a rate change until the next anchor.
      if (got < clock || got > clock + E::kMarginNs + 2 * E::kToleranceNs) {
        ADD_FAILURE() << "call " << calls << ": " << got - clock << " ns off the clock";
        return 0;
      }
      if (sim.reads == before) ++estimates;  // the clock was not read
    }
    return static_cast<double>(estimates) / calls;
  }
};

TEST_F(TscEstimateTest, Engine_2_1_ReadsTheClockUntilTwoWindowsCheckedARate) {
  E e({&SimTicks, &SimReal}, true);
  const int64_t clock = Clock();
  EXPECT_EQ(e.NowOrLater(), clock);
  EXPECT_FALSE(e.live());
  Run(e, 3 * E::kWindowNs / 2);  // the first rate is measured, not checked yet
  EXPECT_FALSE(e.live());
  Run(e, E::kWindowNs);
  EXPECT_TRUE(e.live());
  EXPECT_GT(Run(e, 100 * E::kWindowNs), 0.98);
}

TEST_F(TscEstimateTest, Engine_2_1_NeverBehindTheClockWhileItsRateChanges) {
  E e({&SimTicks, &SimReal}, true);
  Run(e, 3 * E::kWindowNs);
  // NTP slews by up to 500 ppm, and adjtime by 500 more: the counter seen
  // from the clock changes its rate at once by up to 1,000 ppm, and back.
  for (double ppm : {1000.0, -1000.0, 0.0, 400.0, -600.0}) {
    sim.ticks_per_ns = 2.1 / (1 + ppm * 1e-6);
    EXPECT_GT(Run(e, 3'000'000'000), 0.9) << ppm << " ppm";
  }
}

// SPEC 2.10: the lateness histogram takes a plain run's start from
// NowApprox, the estimate without the margin: near the clock either way,
// while the rate changes too.
TEST_F(TscEstimateTest, Engine_2_10_TheEstimateWithoutTheMarginStaysNearTheClock) {
  E e({&SimTicks, &SimReal}, true);
  Run(e, 3 * E::kWindowNs);
  ASSERT_TRUE(e.live());
  for (double ppm : {0.0, 1000.0, -1000.0}) {
    sim.ticks_per_ns = 2.1 / (1 + ppm * 1e-6);
    int estimates = 0;
    int64_t lowest = INT64_MAX, highest = INT64_MIN;
    for (int k = 0; k < 100'000; ++k) {
      Pass(10'000);
      const int64_t clock = Clock();
      const int64_t before = sim.reads;
      const int64_t off = e.NowApprox() - clock;
      lowest = std::min(lowest, off);
      highest = std::max(highest, off);
      if (sim.reads == before) ++estimates;
    }
    EXPECT_GE(lowest, -E::kMarginNs) << ppm << " ppm";
    EXPECT_LE(highest, 2 * E::kToleranceNs) << ppm << " ppm";
    EXPECT_GT(estimates, 90'000) << ppm << " ppm";
  }
  // The margin is all that NowOrLater adds to it.
  Run(e, 10 * E::kWindowNs);
  ASSERT_TRUE(e.live());
  Pass(10'000);
  const int64_t reads = sim.reads;
  const int64_t approx = e.NowApprox();
  const int64_t or_later = e.NowOrLater();
  ASSERT_EQ(sim.reads, reads);  // both estimates, at the same counter value
  EXPECT_EQ(or_later - approx, E::kMarginNs);
}

TEST_F(TscEstimateTest, Engine_2_1_AStepStopsTheEstimatesUntilARateIsCheckedAgain) {
  E e({&SimTicks, &SimReal}, true);
  Run(e, 3 * E::kWindowNs);
  ASSERT_TRUE(e.live());
  // Within the window the step falls in, a call counts from before it, as if
  // made just before the step; the next anchor sees it.
  Pass(E::kWindowNs);
  sim.offset = 3'600'000'000'000;
  const int64_t clock = Clock();
  EXPECT_EQ(e.NowOrLater(), clock);
  EXPECT_FALSE(e.live());
  EXPECT_LT(Run(e, 3 * E::kWindowNs / 2), 0.01);
  sim.offset = -7'200'000'000'000;  // and back: estimates would be late, not early
  Pass(E::kWindowNs);
  const int64_t back = Clock();
  EXPECT_EQ(e.NowOrLater(), back);
  EXPECT_FALSE(e.live());
  Run(e, 3 * E::kWindowNs);
  EXPECT_TRUE(e.live());
}

TEST_F(TscEstimateTest, Engine_2_1_ACounterBehindTheAnchorReadsTheClock) {
  E e({&SimTicks, &SimReal}, true);
  Run(e, 3 * E::kWindowNs);
  ASSERT_TRUE(e.live());
  sim.ticks -= 3e6;  // another core's counter, behind the anchor
  const int64_t clock = Clock();
  EXPECT_EQ(e.NowOrLater(), clock);
}

TEST_F(TscEstimateTest, Engine_2_1_AnInterruptedReadAnchorsNothing) {
  E e({&SimTicks, &SimReal}, true);
  sim.read_ns = 50'000;  // every clock read preempted for 50 us
  Run(e, 10 * E::kWindowNs);
  EXPECT_FALSE(e.live());
  sim.read_ns = 40;
  Run(e, 3 * E::kWindowNs);
  EXPECT_TRUE(e.live());
}

TEST_F(TscEstimateTest, Engine_2_1_NoInvariantCounterAlwaysReadsTheClock) {
  E e({&SimTicks, &SimReal}, false);
  EXPECT_EQ(Run(e, 10 * E::kWindowNs), 0.0);
  EXPECT_FALSE(e.live());
}

TEST_F(TscEstimateTest, Engine_2_1_SparseCallsReadTheClock) {
  E e({&SimTicks, &SimReal}, true);
  EXPECT_EQ(Run(e, 100 * E::kWindowNs, 5 * E::kWindowNs), 0.0);  // anchors too old to check
}

// A thread that reads the clock itself (Exact: SystemClock::Now, a waiting
// worker) anchors the estimate once its window has passed, so that a thread
// that only estimates, every 1.1 ms (W4's changes), finds it fresh: without
// such reads it finds a window passed and reads the clock at every call.
TEST_F(TscEstimateTest, Engine_2_1_ExactReadsKeepTheEstimateFresh) {
  E e({&SimTicks, &SimReal}, true);
  Run(e, 3 * E::kWindowNs);
  ASSERT_TRUE(e.live());
  EXPECT_EQ(Run(e, 110 * E::kWindowNs, 1'100'000), 0.0);
  int estimates = 0;
  for (int call = 0; call < 100; ++call) {
    for (int k = 0; k < 11; ++k) {
      Pass(100'000);
      const int64_t clock = Clock();
      EXPECT_EQ(e.Exact(), clock);
    }
    const int64_t clock = Clock();
    const int64_t reads = sim.reads;
    const int64_t got = e.NowOrLater();
    EXPECT_GE(got, clock);
    EXPECT_LE(got, clock + E::kMarginNs + 2 * E::kToleranceNs);
    estimates += sim.reads == reads;
  }
  EXPECT_EQ(estimates, 100);
}

int64_t ClockNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
int64_t RealtimeNs() { return ClockNs(CLOCK_REALTIME); }
// The wall clock less the monotonic one: it moves only when the wall clock is
// stepped or slewed (or a thread is preempted between the two reads).
int64_t WallOffsetNs() { return ClockNs(CLOCK_REALTIME) - ClockNs(CLOCK_MONOTONIC); }

// This machine's counter, from several threads at once: every value lies
// between the clock read just before and just after it, plus the margin. A
// failure reports how far behind the worst estimate was and how far the wall
// clock moved against the monotonic one during the test, which tells a step
// of the clock (then estimates lag it for up to a window, by design) from an
// estimate gone wrong.
TEST(SystemClockNowOrLater, Engine_2_1_NeverBehindTheSystemClockOnAnyThread) {
  auto clock = SystemClock::Get();
  std::vector<std::thread> threads;
  threads.reserve(3);
  std::atomic<int64_t> behind{0}, ahead{0}, far{0};
  std::vector<int64_t> worst_behind_ns(3, 0);  // one per thread
  const int64_t offset_before = WallOffsetNs();
  for (size_t t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200'000; ++k) {
        const int64_t before = RealtimeNs();
        const int64_t got = ToUnixNanos(clock->NowOrLater());
        const int64_t after = RealtimeNs();
        if (got < before) {
          behind.fetch_add(1);
          worst_behind_ns[t] = std::max(worst_behind_ns[t], before - got);
        }
        if (got > after + E::kMarginNs + 2 * E::kToleranceNs) ahead.fetch_add(1);
        // The estimate without the margin: near the clock either way.
        const int64_t near_before = RealtimeNs();
        const int64_t near = ToUnixNanos(clock->NowApprox());
        const int64_t near_after = RealtimeNs();
        if (near < near_before - E::kMarginNs || near > near_after + 2 * E::kToleranceNs) {
          far.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const int64_t offset_moved = WallOffsetNs() - offset_before;
  EXPECT_EQ(behind.load(), 0) << "worst "
                              << *std::max_element(worst_behind_ns.begin(), worst_behind_ns.end())
                              << " ns behind; the wall clock moved " << offset_moved
                              << " ns against the monotonic clock during the test";
  EXPECT_EQ(ahead.load(), 0);
  EXPECT_EQ(far.load(), 0);
}

}  // namespace
}  // namespace ax::internal
