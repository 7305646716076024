#include "timer/tick.h"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(Tick, MapsInt64RangeOrderPreserving) {
  EXPECT_EQ(TickOf(kMin), 0u);
  EXPECT_EQ(TickOf(kMax), (uint64_t{1} << (64 - kTickShift)) - 1);
  EXPECT_LT(TickOf(-1), TickOf(0) + 1);
  EXPECT_LE(TickOf(-1), TickOf(0));
  EXPECT_LT(TickOf(0), TickOf(int64_t{1} << kTickShift));
  EXPECT_EQ(TickOf(0), TickOf((int64_t{1} << kTickShift) - 1));
}

TEST(Tick, TickStartIsFirstNanosecondOfTick) {
  for (int64_t ns : {kMin, kMin + 5, int64_t{-1}, int64_t{0}, int64_t{123456789}, kMax}) {
    const int64_t start = TickStartNs(TickOf(ns));
    EXPECT_LE(start, ns);
    EXPECT_EQ(TickOf(start), TickOf(ns));
    if (start != kMin) {
      EXPECT_LT(TickOf(start - 1), TickOf(ns));
    }
  }
}

TEST(Tick, LevelForUsesHighestDifferingDigit) {
  EXPECT_EQ(LevelFor(100, 101), 0);
  EXPECT_EQ(LevelFor(100, 127), 0);
  EXPECT_EQ(LevelFor(100, 128), 1);  // 100 = 1*64+36, 128 = 2*64: digit 1 differs
  EXPECT_EQ(LevelFor(0, uint64_t{1} << 12), 2);
  EXPECT_EQ(LevelFor(0, TickOf(kMax)), kNumLevels - 1);
}

TEST(Tick, SlotStartStaysInElapsedWindow) {
  const uint64_t elapsed = (5ull << 12) | (7ull << 6) | 9;
  EXPECT_EQ(SlotStart(elapsed, 0, 20), (5ull << 12) | (7ull << 6) | 20);
  EXPECT_EQ(SlotStart(elapsed, 1, 10), (5ull << 12) | (10ull << 6));
  EXPECT_EQ(SlotStart(elapsed, 2, 6), 6ull << 12);
  EXPECT_EQ(SlotStart(elapsed, kNumLevels - 1, 3), 3ull << (6 * (kNumLevels - 1)));
}

TEST(Tick, FiledSlotIsAfterElapsed) {
  const uint64_t elapsed = 0x123456789;
  for (uint64_t when : {elapsed + 1, elapsed + 63, elapsed + 64, elapsed + 4097, elapsed << 3}) {
    const int level = LevelFor(elapsed, when);
    const int slot = SlotFor(when, level);
    EXPECT_GT(SlotStart(elapsed, level, slot), elapsed);
    EXPECT_LE(SlotStart(elapsed, level, slot), when);
  }
}

}  // namespace
}  // namespace ax::internal
