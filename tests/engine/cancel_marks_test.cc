// CancelMarks: every slot marked is taken exactly once, in slot order, in
// pieces of any size, while other threads mark; the owner is woken by the
// first mark after it re-armed, and by no other.
#include "engine/cancel_marks.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

TEST(CancelMarks, TakesEachMarkOnceInSlotOrder) {
  CancelMarks m;
  constexpr uint32_t kSlots = 100'000;
  m.Ensure(kSlots - 1);
  std::vector<uint32_t> slots;
  for (uint32_t s = 0; s < kSlots; s += 7) slots.push_back(s);
  slots.push_back(kSlots - 1);
  std::shuffle(slots.begin(), slots.end(), std::mt19937_64(42));
  for (uint32_t s : slots) (void)m.Mark(s);
  EXPECT_EQ(m.Backlog(), slots.size());
  std::vector<uint32_t> got;
  // In pieces: a take may stop inside a word and the next go on from there.
  while (m.Take(500, [&](uint32_t s) { got.push_back(s); }) > 0) {
  }
  std::sort(slots.begin(), slots.end());
  EXPECT_EQ(got, slots);
  EXPECT_TRUE(m.Rearm());
  EXPECT_EQ(m.Backlog(), 0u);
}

TEST(CancelMarks, WakesOnTheFirstMarkAfterRearming) {
  CancelMarks m;
  m.Ensure(200);
  EXPECT_TRUE(m.Armed());
  EXPECT_TRUE(m.Mark(3));  // wakes the owner
  EXPECT_FALSE(m.Armed());
  EXPECT_FALSE(m.Mark(130));  // the owner is awake already
  const uint64_t before = m.Marked();
  EXPECT_EQ(before, 2u);
  EXPECT_EQ(m.Take(1, [](uint32_t s) { EXPECT_EQ(s, 3u); }), 1u);
  // One left: re-arming fails, and the owner takes it without a wake-up.
  EXPECT_FALSE(m.Rearm());
  EXPECT_EQ(m.Take(10, [](uint32_t s) { EXPECT_EQ(s, 130u); }), 1u);
  EXPECT_TRUE(m.Rearm());
  EXPECT_TRUE(m.Mark(200));
  EXPECT_EQ(m.Marked(), before + 1);
  EXPECT_EQ(m.Take(10, [](uint32_t s) { EXPECT_EQ(s, 200u); }), 1u);
  EXPECT_TRUE(m.Rearm());
}

// Several threads mark distinct slots while the owner takes them under a
// lock, re-arming whenever it finds none: each slot is taken once, and a
// wake-up is never lost (a mark made while the owner re-arms is either seen
// by its scan or wakes it).
TEST(CancelMarks, MarkersAndAnOwnerAtOnce) {
  CancelMarks m;
  constexpr uint32_t kMarkers = 4;
  constexpr uint32_t kEach = 20'000;
  m.Ensure(kMarkers * kEach - 1);
  std::atomic<int> wakes{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> markers;
  for (uint32_t p = 0; p < kMarkers; ++p) {
    markers.emplace_back([&m, &wakes, p] {
      for (uint32_t i = 0; i < kEach; ++i) {
        if (m.Mark(i * kMarkers + p)) wakes.fetch_add(1);
      }
    });
  }
  std::vector<int> taken(size_t{kMarkers} * kEach, 0);
  std::mutex owner;  // the engine lock's role: one owner at a time
  auto drain = [&] {
    std::lock_guard<std::mutex> l(owner);
    while (m.Take(1'000, [&](uint32_t s) { ++taken[s]; }) == 1'000) {
    }
    return m.Rearm();
  };
  int armed = 1;  // the constructor arms
  std::thread owner_thread([&] {
    while (!done.load()) armed += drain() ? 1 : 0;
  });
  for (auto& t : markers) t.join();
  done = true;
  owner_thread.join();
  while (!drain()) {
  }
  ++armed;
  for (size_t s = 0; s < taken.size(); ++s) ASSERT_EQ(taken[s], 1) << "slot " << s;
  EXPECT_EQ(m.Backlog(), 0u);
  // Every wake-up consumed an arming, and no more wake-ups than armings.
  EXPECT_LE(wakes.load(), armed);
  EXPECT_GE(wakes.load(), 1);
}

}  // namespace
}  // namespace ax::internal
