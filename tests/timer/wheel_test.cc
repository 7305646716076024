// Unit tests of TimerWheel against the timer_queue.h contract.
#include "timer/wheel.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "timer/wheel_impl.h"  // BasicTimerWheel<CallerDeadlines>

namespace ax::internal {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000 * kMs;
constexpr size_t kAll = std::numeric_limits<size_t>::max();

// Pops like the engine: again while the wheel stopped short to load a large
// slot (NextDeadline() == INT64_MIN).
template <class Wheel>
std::vector<uint32_t> Pop(Wheel& wheel, int64_t now, size_t max = kAll) {
  std::vector<uint32_t> out;
  do {
    wheel.PopExpired(now, max - out.size(), out);
  } while (out.size() < max && wheel.NextDeadline() == kMin);
  return out;
}

// Deadlines kept by the caller, as the engine's job records keep theirs.
class CallerDeadlines {
 public:
  explicit CallerDeadlines(std::vector<int64_t>* words) : words_(words) {}
  int64_t& operator[](uint32_t id) { return (*words_)[id]; }
  const int64_t& operator[](uint32_t id) const { return (*words_)[id]; }
  void Ensure(uint32_t id) const { ASSERT_LT(id, words_->size()); }
  void Prefetch(uint32_t /*id*/) const {}
  size_t MemoryBytes() const { return 0; }

 private:
  std::vector<int64_t>* words_;
};

TEST(Wheel, InsertAllFilesLikeInsertsInOrder) {
  std::vector<int64_t> words(64);
  BasicTimerWheel<CallerDeadlines> batched(0, 0, &words);
  TimerWheel single(0);
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < 64; ++id) {
    // Ties, past deadlines and deadlines up to an hour out (levels 0 to 2).
    const int64_t d = id % 4 == 0   ? 5 * kSec
                      : id % 4 == 1 ? -kSec
                                    : static_cast<int64_t>(id * 7919 % 64) * 60 * kSec;
    words[id] = d;
    ids.push_back(id);
    single.Insert(id, d);
  }
  batched.InsertAll(ids.data(), ids.size());
  EXPECT_EQ(batched.size(), single.size());
  for (const int64_t now : {int64_t{0}, 5 * kSec, 1800 * kSec, kMax}) {
    EXPECT_EQ(Pop(batched, now), Pop(single, now)) << "at " << now;
  }
  EXPECT_EQ(batched.size(), 0u);
}

TEST(Wheel, EmptyHasNoNextDeadline) {
  TimerWheel wheel(5 * kSec);
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_EQ(wheel.NextDeadline(), kMax);
  EXPECT_TRUE(Pop(wheel, kMax).empty());
}

TEST(Wheel, FiresAtDeadlineNotBefore) {
  TimerWheel wheel(0);
  wheel.Insert(1, 10 * kSec + 17);
  EXPECT_TRUE(Pop(wheel, 10 * kSec + 16).empty());
  EXPECT_TRUE(wheel.Contains(1));
  EXPECT_EQ(Pop(wheel, 10 * kSec + 17), std::vector<uint32_t>{1});
  EXPECT_FALSE(wheel.Contains(1));
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(Wheel, InsertRemoveContains) {
  TimerWheel wheel(0);
  wheel.Insert(3, 5 * kMs);
  wheel.Insert(7, 90 * kSec);
  EXPECT_TRUE(wheel.Contains(3));
  EXPECT_TRUE(wheel.Contains(7));
  EXPECT_FALSE(wheel.Contains(4));
  EXPECT_FALSE(wheel.Contains(1'000'000));
  EXPECT_EQ(wheel.Deadline(7), 90 * kSec);
  EXPECT_TRUE(wheel.Remove(3));
  EXPECT_FALSE(wheel.Remove(3));
  EXPECT_FALSE(wheel.Remove(123456));
  EXPECT_EQ(wheel.size(), 1u);
  EXPECT_EQ(Pop(wheel, kMax), std::vector<uint32_t>{7});
}

TEST(Wheel, RemoveSwapsLastEntryOfSlotIntoPlace) {
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < 5; ++id) wheel.Insert(id, 3 * kSec);  // one slot
  EXPECT_TRUE(wheel.Remove(1));
  EXPECT_TRUE(wheel.Remove(4));  // was moved into position 1
  EXPECT_TRUE(wheel.Remove(0));
  EXPECT_EQ(Pop(wheel, 3 * kSec), (std::vector<uint32_t>{2, 3}));
}

TEST(Wheel, RescheduleTakesNewPlaceInInsertionOrder) {
  TimerWheel wheel(0);
  wheel.Insert(1, 2 * kSec);
  wheel.Insert(2, 2 * kSec);
  wheel.Insert(3, 2 * kSec);
  wheel.Reschedule(1, 2 * kSec);  // same deadline, now last
  wheel.Reschedule(3, kSec);      // earlier
  EXPECT_EQ(wheel.Deadline(3), kSec);
  EXPECT_EQ(Pop(wheel, kMax), (std::vector<uint32_t>{3, 2, 1}));
}

TEST(Wheel, RescheduleOfAbsentIdInserts) {
  TimerWheel wheel(0);
  wheel.Reschedule(9, kSec);
  EXPECT_TRUE(wheel.Contains(9));
  EXPECT_EQ(wheel.size(), 1u);
}

TEST(Wheel, PastDeadlinesAreDueAtOnceInDeadlineOrder) {
  TimerWheel wheel(100 * kSec);
  wheel.Insert(1, 50 * kSec);
  wheel.Insert(2, kMin);
  wheel.Insert(3, 100 * kSec);
  wheel.Insert(4, 99 * kSec);
  EXPECT_EQ(wheel.NextDeadline(), kMin);
  EXPECT_EQ(Pop(wheel, 100 * kSec), (std::vector<uint32_t>{2, 1, 4, 3}));
}

TEST(Wheel, FarFutureDeadlinesFireInOrder) {
  TimerWheel wheel(0);
  const int64_t year_2200 = 7'258'118'400 * kSec;  // 2200-01-01 since the epoch
  wheel.Insert(1, kMax);
  wheel.Insert(2, kMax - 1);
  wheel.Insert(3, year_2200);
  wheel.Insert(4, year_2200 + 1);
  EXPECT_TRUE(Pop(wheel, year_2200 - 1).empty());
  EXPECT_EQ(Pop(wheel, year_2200), std::vector<uint32_t>{3});
  EXPECT_EQ(Pop(wheel, kMax - 2), std::vector<uint32_t>{4});
  EXPECT_EQ(Pop(wheel, kMax - 1), std::vector<uint32_t>{2});
  EXPECT_EQ(Pop(wheel, kMax), std::vector<uint32_t>{1});
}

TEST(Wheel, WorksAtInt64Extremes) {
  TimerWheel low(kMin);
  low.Insert(1, kMin);
  low.Insert(2, kMin + 1);
  low.Insert(3, kMax);
  EXPECT_EQ(Pop(low, kMin), std::vector<uint32_t>{1});
  EXPECT_EQ(Pop(low, kMax), (std::vector<uint32_t>{2, 3}));

  TimerWheel high(kMax);
  high.Insert(1, kMax);
  high.Insert(2, kMin);
  EXPECT_EQ(Pop(high, kMax), (std::vector<uint32_t>{2, 1}));
}

// Slot entries keep their tick's low 32 bits; at level 6 two ticks 2^32
// apart (2.3 years) share them, in one slot. A job moved by that much leaves
// a stale entry that looks like its live one: a sweep of the slot must not
// keep the stale one in its place, and the job fires once, at its deadline.
TEST(Wheel, LevelSixTicksSharingTheirLowBitsFireOnceAtTheLiveDeadline) {
  TimerWheel wheel(0);
  const int64_t level6 = int64_t{1} << 60;            // 2^36 ticks ahead: level 6
  const int64_t later = level6 + (int64_t{1} << 56);  // 2^32 ticks further
  wheel.Insert(0, level6);
  wheel.Reschedule(0, later);
  // Enough other removals for sweeps to filter every list, the slot too.
  for (uint32_t id = 1; id <= 5000; ++id) wheel.Insert(id, level6 + id);
  for (uint32_t id = 1; id <= 5000; ++id) wheel.Remove(id);
  EXPECT_TRUE(Pop(wheel, later - 1).empty());
  EXPECT_EQ(Pop(wheel, later), std::vector<uint32_t>{0});
  EXPECT_TRUE(Pop(wheel, kMax).empty());
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(Wheel, SameDeadlineKeepsInsertionOrderAcrossLevels) {
  const int64_t deadline = 3600 * kSec + 123;
  TimerWheel wheel(0);
  wheel.Insert(10, deadline);  // level 2 (an hour out)
  EXPECT_TRUE(Pop(wheel, deadline - 30 * kSec).empty());
  wheel.Insert(11, deadline);  // level 1 (30 s out)
  EXPECT_TRUE(Pop(wheel, deadline - 500 * kMs).empty());
  wheel.Insert(12, deadline);  // level 0 (0.5 s out)
  EXPECT_TRUE(Pop(wheel, deadline - 1).empty());
  wheel.Insert(13, deadline);  // the near-term structure: the current tick
  wheel.Insert(14, deadline - 1);
  EXPECT_EQ(Pop(wheel, deadline), (std::vector<uint32_t>{14, 10, 11, 12, 13}));
}

TEST(Wheel, StagedWindowFiresExactlyAndInInsertionOrder) {
  constexpr int64_t kTick = int64_t{1} << 24;
  // Deadline 0 is the first tick of a level-2 window, so the next level-0
  // window starts 64 ticks later and comes from a level-1 slot.
  const int64_t window = 64 * kTick;
  TimerWheel wheel(0);
  wheel.Insert(1, window + 5 * kTick + 7);
  wheel.Insert(2, window);
  wheel.Insert(3, window + 5 * kTick + 7);
  wheel.Insert(4, window + 63 * kTick);
  wheel.Insert(5, window + 3);
  ASSERT_TRUE(wheel.CanStage());
  EXPECT_FALSE(wheel.StageAhead());  // one chunk held them all
  EXPECT_FALSE(wheel.CanStage());
  wheel.Insert(6, window + 5 * kTick + 7);  // after staging: cascades at the hand-over
  wheel.Insert(7, window + 1);
  EXPECT_TRUE(wheel.Remove(4));
  EXPECT_EQ(wheel.NextDeadline(), window);
  EXPECT_TRUE(Pop(wheel, window - 1).empty());
  EXPECT_EQ(Pop(wheel, window + 3), (std::vector<uint32_t>{2, 7, 5}));
  EXPECT_EQ(Pop(wheel, window + 5 * kTick + 7), (std::vector<uint32_t>{1, 3, 6}));
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(Wheel, StagedWindowFromLevelTwoFiresExactlyAndInInsertionOrder) {
  constexpr int64_t kTick = int64_t{1} << 24;
  // The last tick before a level-2 boundary: the next window comes from a
  // level-2 slot and is staged into levels 0 and 1.
  const int64_t window = 4096 * kTick;
  TimerWheel wheel(window - kTick);
  wheel.Insert(1, window + 300 * kTick + 5);  // level 1 after the hand-over
  wheel.Insert(2, window + 2 * kTick);
  wheel.Insert(3, window);
  wheel.Insert(4, window + 300 * kTick + 5);
  ASSERT_TRUE(wheel.CanStage());
  EXPECT_FALSE(wheel.StageAhead());
  wheel.Insert(5, window + 300 * kTick + 5);  // after staging: cascades at the hand-over
  wheel.Insert(6, window);
  EXPECT_EQ(wheel.NextDeadline(), window);
  EXPECT_EQ(Pop(wheel, window), (std::vector<uint32_t>{3, 6}));
  EXPECT_EQ(Pop(wheel, window + 2 * kTick), (std::vector<uint32_t>{2}));
  EXPECT_TRUE(Pop(wheel, window + 300 * kTick + 4).empty());
  EXPECT_EQ(Pop(wheel, window + 300 * kTick + 5), (std::vector<uint32_t>{1, 4, 5}));
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(Wheel, SweepWhileStagedKeepsTheLiveEntries) {
  constexpr int64_t kTick = int64_t{1} << 24;
  const int64_t window = 64 * kTick;  // as above: the next window is staged
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < 3000; ++id) wheel.Insert(id, window + (id % 64) * kTick + id);
  while (wheel.StageAhead()) {
  }
  ASSERT_FALSE(wheel.CanStage());
  // Removing 2,600 leaves more garbage than live entries + 1,024: a sweep.
  for (uint32_t id = 0; id < 3000; ++id) {
    if (id % 8 != 0) wheel.Remove(id);
  }
  std::vector<uint32_t> expected;
  for (uint32_t id = 0; id < 3000; id += 8) expected.push_back(id);
  std::sort(expected.begin(), expected.end(),
            [](uint32_t a, uint32_t b) { return (a % 64) * kTick + a < (b % 64) * kTick + b; });
  EXPECT_EQ(Pop(wheel, window + 64 * kTick), expected);
  EXPECT_EQ(wheel.size(), 0u);
}

// A sweep pass filters one list per Remove. Here its first list is a slot
// being staged, left with garbage only: the slot keeps its occupied bit, or
// the hand-over, and the staged entries with it, would be skipped.
TEST(Wheel, SweepPassKeepsTheBitOfASlotBeingStaged) {
  constexpr int64_t kTick = int64_t{1} << 24;
  const int64_t window = 64 * kTick;  // as above: the next window is staged
  TimerWheel wheel(0);
  // Far-future fillers keep the live count high while the slot fills with garbage.
  for (uint32_t id = 10'000; id < 20'000; ++id) wheel.Insert(id, 7200 * kSec + id);
  for (uint32_t id = 0; id < 3000; ++id) wheel.Insert(id, window + (id % 64) * kTick + id);
  EXPECT_TRUE(wheel.StageAhead());  // the first chunk: ids 0-339
  for (uint32_t id = 340; id < 3000; ++id) wheel.Remove(id);
  // Garbage (2,660 + k) passes live (10,340 - k) + 1,024 at k = 4,363: the
  // pass starts and filters its first non-empty list, the staged slot.
  for (uint32_t id = 10'000; id < 10'000 + 4'363; ++id) wheel.Remove(id);
  std::vector<uint32_t> expected(340);
  for (uint32_t id = 0; id < 340; ++id) expected[id] = id;
  std::sort(expected.begin(), expected.end(),
            [](uint32_t a, uint32_t b) { return (a % 64) * kTick + a < (b % 64) * kTick + b; });
  EXPECT_EQ(Pop(wheel, window + 64 * kTick), expected);
  EXPECT_EQ(wheel.size(), 10'000u - 4'363u);
}

TEST(Wheel, NextDeadlineIsLowerBoundAndExactNearTerm) {
  TimerWheel wheel(0);
  const int64_t deadline = 1800 * kSec + 777;
  wheel.Insert(1, deadline);
  int64_t now = 0;
  int wakeups = 0;
  // An idle owner sleeps until NextDeadline(); it reaches the deadline after a
  // handful of coarse wake-ups (one per level), never by ticking.
  while (true) {
    const int64_t next = wheel.NextDeadline();
    ASSERT_LE(next, deadline);
    ASSERT_GT(next, now);
    now = next;
    ++wakeups;
    if (!Pop(wheel, now).empty()) break;
  }
  EXPECT_EQ(now, deadline);
  EXPECT_LE(wakeups, kNumLevels + 1);
  EXPECT_EQ(wheel.NextDeadline(), kMax);
}

TEST(Wheel, NextDeadlineExactOnceInCurrentTick) {
  TimerWheel wheel(0);
  wheel.Insert(1, 5 * kSec + 3);
  wheel.Insert(2, 5 * kSec + 1);
  EXPECT_TRUE(Pop(wheel, 5 * kSec).empty());
  EXPECT_EQ(wheel.NextDeadline(), 5 * kSec + 1);
  wheel.Remove(2);
  EXPECT_EQ(wheel.NextDeadline(), 5 * kSec + 3);
}

TEST(Wheel, LoadsASlotAheadAndPopsItOnlyWhenDue) {
  constexpr uint32_t kCount = 20'000;  // a slot that loads in several pieces
  constexpr int64_t kAhead = 100 * kMs;
  const int64_t deadline = 10 * kSec + 5 * kMs;
  TimerWheel wheel(0, kAhead);
  for (uint32_t id = 0; id < kCount; ++id) wheel.Insert(id, deadline + id % 7);
  const int64_t slot_start = TickStartNs(TickOf(deadline));
  // Asleep until the slot's start less the load-ahead, then loading (in
  // pieces, INT64_MIN meanwhile), and then asleep until the exact deadline.
  for (int wakeups = 0; wakeups < kNumLevels && wheel.NextDeadline() != slot_start - kAhead;
       ++wakeups) {
    ASSERT_TRUE(Pop(wheel, wheel.NextDeadline()).empty());
  }
  ASSERT_EQ(wheel.NextDeadline(), slot_start - kAhead);
  EXPECT_TRUE(Pop(wheel, slot_start - kAhead).empty());
  EXPECT_EQ(wheel.NextDeadline(), deadline);
  std::vector<uint32_t> out;
  EXPECT_EQ(wheel.PopExpired(deadline - 1, kAll, out), 0u);
  // At the deadline, everything is in already: the first call pops.
  EXPECT_EQ(wheel.PopExpired(deadline, 1000, out), 1000u);
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 7u);
  // An insert due before the loaded slot still comes first.
  wheel.Insert(kCount, deadline - 1);
  out.clear();
  EXPECT_EQ(wheel.PopExpired(deadline, 1, out), 1u);
  EXPECT_EQ(out, std::vector<uint32_t>{kCount});
  EXPECT_EQ(Pop(wheel, kMax).size(), kCount - 1000);
}

TEST(Wheel, WithoutLoadAheadASlotLoadsAtItsStart) {
  TimerWheel wheel(0);
  const int64_t deadline = 10 * kSec + 5 * kMs;
  wheel.Insert(1, deadline);
  for (int wakeups = 0;
       wakeups < kNumLevels && wheel.NextDeadline() < TickStartNs(TickOf(deadline)); ++wakeups) {
    ASSERT_TRUE(Pop(wheel, wheel.NextDeadline()).empty());
  }
  EXPECT_EQ(wheel.NextDeadline(), TickStartNs(TickOf(deadline)));
  EXPECT_TRUE(Pop(wheel, TickStartNs(TickOf(deadline)) - 1).empty());
  EXPECT_EQ(wheel.NextDeadline(), TickStartNs(TickOf(deadline)));
}

TEST(Wheel, ReturningFewerThanMaxMeansNothingDueUntilNextDeadline) {
  TimerWheel wheel(0);
  auto deadline = [](uint32_t id) { return int64_t{id * 7919 % 1000} * 37 * kMs; };
  for (uint32_t id = 0; id < 1000; ++id) wheel.Insert(id, deadline(id));
  for (int64_t now = 0; now < 40 * kSec; now += 333 * kMs) {
    std::vector<uint32_t> out;
    const size_t popped = wheel.PopExpired(now, 5, out);
    if (popped < 5) {
      EXPECT_GT(wheel.NextDeadline(), now);
    }
    for (uint32_t id : out) EXPECT_LE(deadline(id), now);
  }
}

TEST(Wheel, MaxBatchesAMillionSimultaneousDeadlines) {
  constexpr uint32_t kCount = 1'000'000;
  constexpr size_t kBatch = 4096;
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < kCount; ++id) wheel.Insert(id, 60 * kSec);
  std::vector<uint32_t> out;
  uint32_t expected = 0;
  size_t calls = 0;
  size_t loading_calls = 0;
  while (wheel.size() > 0) {
    out.clear();
    const size_t popped = wheel.PopExpired(60 * kSec, kBatch, out);
    ASSERT_EQ(popped, out.size());
    if (popped == 0) {
      // The slot loads a bounded piece per call, before anything pops (a
      // later piece may hold the earliest deadline).
      ASSERT_EQ(expected, 0u);
      ASSERT_EQ(wheel.NextDeadline(), kMin);
      ++loading_calls;
      continue;
    }
    ASSERT_EQ(popped, std::min<size_t>(kBatch, kCount - expected));
    for (uint32_t id : out) ASSERT_EQ(id, expected++);
    ++calls;
  }
  EXPECT_EQ(calls, (kCount + kBatch - 1) / kBatch);
  // 1 M entries in 340-entry chunks, a few chunks per call.
  EXPECT_GT(loading_calls, 100u);
  EXPECT_LT(loading_calls, 1000u);
}

TEST(Wheel, FirstTickOfALevelOneSlotLoadsInPieces) {
  // The deadlines fall on the first tick of a level-1 slot, so they reach
  // that tick by a cascade. Admitted into the near-term queue by the cascade
  // itself, 1 M of them held the engine's lock for 143 ms in one call;
  // filed into level-0 slot 0 instead, they load a bounded piece per call.
  constexpr int64_t kTick = int64_t{1} << 24;
  constexpr uint32_t kCount = 200'000;
  constexpr size_t kBatch = 4096;
  const int64_t deadline = 9 * 64 * kTick + 5 * kMs;  // level-1 slot 9, its first tick
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < kCount; ++id) wheel.Insert(id, deadline + id % 3);
  std::vector<uint32_t> expected;
  for (uint32_t rest = 0; rest < 3; ++rest) {
    for (uint32_t id = rest; id < kCount; id += 3) expected.push_back(id);
  }
  std::vector<uint32_t> fired;
  size_t loading_calls = 0;
  while (wheel.size() > 0) {
    std::vector<uint32_t> out;
    if (wheel.PopExpired(deadline + 2, kBatch, out) == 0) {
      ASSERT_TRUE(fired.empty());
      ASSERT_EQ(wheel.NextDeadline(), kMin);
      ++loading_calls;
    }
    fired.insert(fired.end(), out.begin(), out.end());
  }
  EXPECT_EQ(fired, expected);
  // 200,000 entries in 510-entry chunks, 3 chunks a call.
  EXPECT_GT(loading_calls, 100u);
}

TEST(Wheel, StagedAndCascadedFirstTickFireInInsertionOrder) {
  constexpr int64_t kTick = int64_t{1} << 24;
  const int64_t window = 64 * kTick;  // the next window comes from a level-1 slot
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < 2000; ++id) wheel.Insert(id, window);
  ASSERT_TRUE(wheel.CanStage());
  while (wheel.StageAhead()) {
  }
  // After staging: these cascade at the hand-over, into the same tick.
  for (uint32_t id = 2000; id < 4000; ++id) wheel.Insert(id, window);
  std::vector<uint32_t> expected(4000);
  for (uint32_t id = 0; id < 4000; ++id) expected[id] = id;
  EXPECT_TRUE(Pop(wheel, window - 1).empty());
  EXPECT_EQ(Pop(wheel, window), expected);
}

TEST(Wheel, RemovedNearTermEntriesAreSkippedAndCompacted) {
  TimerWheel wheel(kSec);
  for (uint32_t id = 0; id < 10'000; ++id) wheel.Insert(id, kSec - id);  // all due
  for (uint32_t id = 0; id < 10'000; ++id) {
    if (id % 10 != 0) {
      ASSERT_TRUE(wheel.Remove(id));
    }
  }
  for (uint32_t id = 1; id < 10'000; id += 10) wheel.Insert(id, 0);  // re-used ids
  EXPECT_EQ(wheel.size(), 2000u);
  std::vector<uint32_t> out = Pop(wheel, kSec);
  ASSERT_EQ(out.size(), 2000u);
  for (size_t i = 0; i < 1000; ++i) EXPECT_EQ(out[i], 1 + 10 * i);  // deadline 0, FIFO
  for (size_t i = 0; i < 1000; ++i) EXPECT_EQ(out[1000 + i], 9990 - 10 * i);
}

TEST(Wheel, ChurnOfRemovesAndSameDeadlineReinsertsStaysBounded) {
  // Each Remove leaves garbage in a slot, each same-deadline re-insert a
  // duplicate that looks live; sweeps must drop both, or memory would grow
  // with the number of operations.
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < 1000; ++id) wheel.Insert(id, 3600 * kSec + id % 7);
  const size_t baseline = wheel.MemoryBytes();
  for (int round = 0; round < 300; ++round) {
    for (uint32_t id = 0; id < 1000; ++id) {
      ASSERT_TRUE(wheel.Remove(id));
      wheel.Insert(id, 3600 * kSec + id % 7);
    }
  }
  EXPECT_LE(wheel.MemoryBytes(), baseline + size_t{64} * 1024);
  std::vector<uint32_t> out = Pop(wheel, kMax);
  ASSERT_EQ(out.size(), 1000u);  // each id exactly once
  for (size_t i = 1; i < out.size(); ++i) {
    EXPECT_LE(out[i - 1] % 7, out[i] % 7);  // by deadline, then re-insert order
  }
}

TEST(Wheel, ReinsertsInOneTickTakeTheLatestPlaceAmongEqualDeadlines) {
  // Each re-insert leaves its old entry in the same slot list, ahead of the
  // new one; the tag tells them apart, so an id takes the place of its
  // latest insert, here and after a cascade.
  for (const int64_t deadline : {10 * kSec, 100 * kSec, 5000 * kSec}) {
    TimerWheel wheel(0);
    for (uint32_t id = 0; id < 4; ++id) wheel.Insert(id, deadline);
    for (int round = 0; round < 300; ++round) {
      const auto id = static_cast<uint32_t>(round % 3);  // 0, 1, 2 in turn; 3 stays
      wheel.Reschedule(id, deadline);
    }
    // The last round (299) re-inserted 2, the one before 1, and before that 0.
    EXPECT_EQ(Pop(wheel, deadline), (std::vector<uint32_t>{3, 0, 1, 2})) << deadline;
  }
}

TEST(Wheel, RemovedEntriesLeaveNoTraceWhenTheirSlotIsProcessed) {
  TimerWheel wheel(0);
  for (uint32_t id = 0; id < 100; ++id) wheel.Insert(id, 10 * kSec);
  for (uint32_t id = 0; id < 100; ++id) wheel.Remove(id);
  wheel.Insert(5, 20 * kSec);
  EXPECT_LE(wheel.NextDeadline(), 10 * kSec);  // a garbage-only slot: early, still a bound
  EXPECT_TRUE(Pop(wheel, 15 * kSec).empty());
  EXPECT_GT(wheel.NextDeadline(), 15 * kSec);
  EXPECT_EQ(Pop(wheel, 20 * kSec), std::vector<uint32_t>{5});
}

TEST(Wheel, SparseIdsGrowNodeStorage) {
  TimerWheel wheel(0);
  wheel.Insert(5'000'000, kSec);
  wheel.Insert(0, kSec);
  EXPECT_TRUE(wheel.Contains(5'000'000));
  EXPECT_FALSE(wheel.Contains(4'999'999));
  EXPECT_EQ(Pop(wheel, kSec), (std::vector<uint32_t>{5'000'000, 0}));
}

TEST(Wheel, MemoryPerPendingEntryWithinBudget) {
  constexpr uint32_t kCount = 1 << 20;
  TimerWheel wheel(0);
  uint64_t state = 1;
  for (uint32_t id = 0; id < kCount; ++id) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    wheel.Insert(id, 60 * kSec + static_cast<int64_t>((state >> 33) % (3540 * kSec / 1024)) * 1024);
  }
  const double per_entry = static_cast<double>(wheel.MemoryBytes()) / kCount;
  EXPECT_LE(per_entry, 20.0);  // 8 B deadline + 2 B state + 8 B slot entry + slack
  RecordProperty("bytes_per_entry", std::to_string(per_entry));
}

}  // namespace
}  // namespace ax::internal
