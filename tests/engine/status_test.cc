#include "ax/status.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace ax {
namespace {

TEST(Status, DefaultIsOkWithNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s, Status::Ok());
}

TEST(Status, AnErrorKeepsItsCodeAndMessage) {
  Status s = Status::NotFound("job 7 is unknown");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "job 7 is unknown");
  EXPECT_EQ(s.ToString(), "NotFound: job 7 is unknown");
}

TEST(Status, AnOkCodeKeepsNoMessage) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s, Status());
}

TEST(Status, CopiesAreEqualAndIndependent) {
  Status a = Status::InvalidState("cancel: job 3 is already completed");
  Status b = a;
  EXPECT_EQ(a, b);
  Status c;
  c = b;
  EXPECT_EQ(c, a);
  b = Status();
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(a.message(), "cancel: job 3 is already completed");
  EXPECT_EQ(c.code(), StatusCode::kInvalidState);
  EXPECT_NE(a, Status::InvalidState("another message"));
  EXPECT_NE(a, Status::NotFound(a.message()));
  Status& self = c;
  c = self;
  EXPECT_EQ(c, a);
}

TEST(Status, MovesCarryTheError) {
  Status a = Status::ShuttingDown("scheduler is shutting down");
  Status b = std::move(a);
  EXPECT_EQ(b.code(), StatusCode::kShuttingDown);
  Status c;
  c = std::move(b);
  EXPECT_EQ(c.message(), "scheduler is shutting down");
}

TEST(Status, ResultHoldsAValueOrAnError) {
  Result<int> v = 3;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 3);
  EXPECT_TRUE(v.status().ok());
  Result<int> e = Status::InvalidArgument("delay is negative");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status(), Status::InvalidArgument("delay is negative"));
  EXPECT_EQ(e.error().message(), "delay is negative");
}

}  // namespace
}  // namespace ax
