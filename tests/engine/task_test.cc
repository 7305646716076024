#include "ax/task.h"

#include <array>
#include <memory>

#include <gtest/gtest.h>

namespace ax {
namespace {

const RunContext kCtx(JobId(1, 1), "k", 3, FromUnixNanos(5), StopToken());

TEST(Task, AcceptsTheFourSignatures) {
  int n = 0;
  Task a([&] { ++n; });
  Task b([&](const RunContext& c) { n += c.attempt(); });
  Task c([] { return Status::Internal("x"); });
  Task d([](const RunContext& x) { return x.attempt() == 3 ? Status() : Status::Internal(""); });
  EXPECT_TRUE(a(kCtx).ok());
  EXPECT_TRUE(b(kCtx).ok());
  EXPECT_EQ(n, 4);
  EXPECT_EQ(c(kCtx).code(), StatusCode::kInternal);
  EXPECT_TRUE(d(kCtx).ok());
}

TEST(Task, SmallCapturesAreInlineLargeOnesOnTheHeapAndBothAreDestroyed) {
  auto small = std::make_shared<int>(1);
  auto big = std::make_shared<int>(2);
  {
    Task t([small] {});
    std::array<char, 64> pad{};
    Task u([big, pad] { (void)pad; });
    Task moved = std::move(u);
    EXPECT_FALSE(static_cast<bool>(u));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(small.use_count(), 2);
    EXPECT_EQ(big.use_count(), 2);
    moved.Reset();
    EXPECT_EQ(big.use_count(), 1);
  }
  EXPECT_EQ(small.use_count(), 1);
}

TEST(Task, EveryKindOfCallableSurvivesMovesAndIsDestroyedOnce) {
  // Trivially copyable captures move as bytes (no move or destroy function);
  // an inline capture with a destructor, and a heap one, keep theirs.
  int calls = 0;
  const int a = 7;
  const int64_t b = 35;
  auto counted = std::make_shared<int>(0);
  std::array<char, 40> pad{};
  pad[39] = 'x';
  Task trivial([&calls, a] { calls += a; });
  Task two_words([&calls, b] { calls += static_cast<int>(b); });
  Task with_dtor([counted, &calls] { calls += *counted + 100; });
  Task on_heap([counted, pad, &calls] { calls += pad[39] == 'x' ? 1000 : 0; });
  EXPECT_EQ(counted.use_count(), 3);
  for (int round = 0; round < 3; ++round) {
    Task t1 = std::move(trivial);
    Task t2 = std::move(two_words);
    Task t3 = std::move(with_dtor);
    Task t4;
    t4 = std::move(on_heap);
    trivial = std::move(t1);
    two_words = std::move(t2);
    with_dtor = std::move(t3);
    on_heap = std::move(t4);
    EXPECT_EQ(counted.use_count(), 3);
  }
  for (Task* t : {&trivial, &two_words, &with_dtor, &on_heap}) EXPECT_TRUE((*t)(kCtx).ok());
  EXPECT_EQ(calls, 7 + 35 + 100 + 1000);
  with_dtor = Task([] {});  // assignment destroys the callable it replaces
  EXPECT_EQ(counted.use_count(), 2);
  on_heap.Reset();
  EXPECT_EQ(counted.use_count(), 1);
  trivial.Reset();
  EXPECT_FALSE(static_cast<bool>(trivial));
}

}  // namespace
}  // namespace ax
