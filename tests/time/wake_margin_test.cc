// SPEC 2.1 and 2.4: SystemClock::WaitUntil asks to wake a WakeMargin before
// the deadline and spins the rest of the way; the margin must settle at the
// lowest tenth of the wake-ups' lateness and stay within its bounds. (That it
// never returns early is checked on the real clock in
// tests/engine/time_and_submit_test.cc.)
#include "time/wake_margin.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

// Lateness values spread evenly over [lo, lo + width), in a scrambled order.
class Spread {
 public:
  Spread(int64_t lo, int64_t width) : lo_(lo), width_(width) {}
  int64_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo_ + static_cast<int64_t>((state_ >> 33) % static_cast<uint64_t>(width_));
  }

 private:
  int64_t lo_;
  int64_t width_;
  uint64_t state_ = 42;
};

TEST(WakeMargin, Engine_2_1_SettlesAtTheLowestTenthOfTheLateness) {
  WakeMargin m;
  EXPECT_EQ(m.ns(), 0);         // no early wake-up before anything is known
  Spread late(20'000, 10'000);  // a host whose sleeps wake 20-30 us late
  for (int k = 0; k < 10'000; ++k) m.Observe(late.Next());
  // The tenth quantile is 21 us. The margin moves by steps of 0.1 and 0.9 us,
  // so it wanders around it by a few steps.
  int64_t sum = 0;
  for (int k = 0; k < 10'000; ++k) {
    m.Observe(late.Next());
    ASSERT_GT(m.ns(), 19'000);
    ASSERT_LT(m.ns(), 24'000);
    sum += m.ns();
  }
  EXPECT_NEAR(static_cast<double>(sum) / 10'000, 21'000, 500);
}

TEST(WakeMargin, Engine_2_1_FollowsAHostThatGetsQuicker) {
  WakeMargin m;
  Spread slow(50'000, 10'000);
  for (int k = 0; k < 20'000; ++k) m.Observe(slow.Next());
  EXPECT_GT(m.ns(), 50'000);
  // Observed lateness is counted from the earlier instant asked for, so a
  // quicker host shows as wake-ups sooner than the margin.
  Spread quick(2'000, 2'000);
  for (int k = 0; k < 20'000; ++k) m.Observe(quick.Next());
  EXPECT_LT(m.ns(), 2'500);
}

TEST(WakeMargin, Engine_2_1_StaysWithinItsBounds) {
  WakeMargin m;
  for (int k = 0; k < 5'000; ++k) m.Observe(1'000'000'000);  // a second late, every time
  EXPECT_EQ(m.ns(), WakeMargin::kMaxNs);                     // a spin is never longer than this
  for (int k = 0; k < 5'000; ++k) m.Observe(0);
  EXPECT_EQ(m.ns(), 0);
  m.Observe(-5'000);  // a wake-up before the instant asked for (the clock was stepped)
  EXPECT_EQ(m.ns(), 0);
}

}  // namespace
}  // namespace ax::internal
