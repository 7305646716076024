#include "ax/task.h"

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

}  // namespace
}  // namespace ax
