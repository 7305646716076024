// SPEC 3.4 schedule specs and SPEC 3.5 misfire policies.
#include "ax/schedule.h"

#include <chrono>

#include <gtest/gtest.h>

#include "cron/cron_test_util.h"

namespace ax {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::ErrorOf;

TEST(Schedule_3_4, CronWithAndWithoutZone) {
  ScheduleFields f;
  f.cron = "0 2 * * *";
  Result<ScheduleSpec> s = MakeScheduleSpec(f);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->kind, ScheduleKind::kCron);
  EXPECT_EQ(s->cron->tz(), "UTC");
  f.tz = "Asia/Shanghai";
  s = MakeScheduleSpec(f);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->cron->tz(), "Asia/Shanghai");
  EXPECT_EQ(s->cron->Next(At("2026-01-01T00:00:00Z")), At("2026-01-01T18:00:00Z"));
}

TEST(Schedule_3_4, InAtEvery) {
  ScheduleFields in;
  in.in = "PT30M";
  Result<ScheduleSpec> s = MakeScheduleSpec(in);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->kind, ScheduleKind::kIn);
  EXPECT_EQ(s->in, 30min);

  ScheduleFields zero;
  zero.in = "0s";
  ASSERT_TRUE(MakeScheduleSpec(zero).ok());

  ScheduleFields at;
  at.at = "2026-12-24T18:00:00+01:00";
  s = MakeScheduleSpec(at);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->kind, ScheduleKind::kAt);
  EXPECT_EQ(s->at, At("2026-12-24T17:00:00Z"));

  ScheduleFields every;
  every.every = "15m";
  s = MakeScheduleSpec(every);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->kind, ScheduleKind::kEvery);
  EXPECT_EQ(s->every, 15min);
}

TEST(Schedule_3_4, ExactlyOneKindElseTheConflictIsNamed) {
  const std::string prefix = "schedule: give exactly one of cron, in, at, every (got ";
  ScheduleFields none;
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(none)), prefix + "none)");
  ScheduleFields tz_only;
  tz_only.tz = "UTC";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(tz_only)), prefix + "none)");
  ScheduleFields two;
  two.in = "5m";
  two.every = "5m";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(two)), prefix + "in and every)");
  ScheduleFields three;
  three.cron = "@daily";
  three.in = "5m";
  three.every = "5m";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(three)), prefix + "cron, in and every)");
  ScheduleFields four;
  four.cron = "@daily";
  four.in = "5m";
  four.at = "2026-01-01T00:00:00Z";
  four.every = "5m";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(four)), prefix + "cron, in, at and every)");
  ScheduleFields empty_strings;  // present but empty still counts as given
  empty_strings.cron = "";
  empty_strings.at = "";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(empty_strings)), prefix + "cron and at)");
}

TEST(Schedule_3_4, TzOnlyWithCron) {
  ScheduleFields f;
  f.in = "5m";
  f.tz = "Europe/Berlin";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(f)), "schedule: tz is only valid with cron (got tz with in)");
  ScheduleFields g;
  g.at = "2026-01-01T00:00:00Z";
  g.tz = "Europe/Berlin";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(g)), "schedule: tz is only valid with cron (got tz with at)");
}

TEST(Schedule_3_4, FieldErrorsNameTheField) {
  ScheduleFields in;
  in.in = "-5m";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(in)),
            "in: duration: negative durations are not allowed in '-5m'");
  ScheduleFields every;
  every.every = "0s";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(every)), "every: the period must be positive, got '0s'");
  ScheduleFields at;
  at.at = "2026-13-01T00:00:00Z";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(at)), "at: instant: month 13 is out of range 1-12");
  ScheduleFields cron;
  cron.cron = "0 0 * * 8";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(cron)), "day-of-week: 8 is out of range 0-7");
  cron.cron = "0 0 * * *";
  cron.tz = "Mars/Base";
  EXPECT_EQ(ErrorOf(MakeScheduleSpec(cron)), "tz: unknown time zone 'Mars/Base'");
}

TEST(Schedule_3_4, KindNames) {
  EXPECT_EQ(ScheduleKindName(ScheduleKind::kCron), "cron");
  EXPECT_EQ(ScheduleKindName(ScheduleKind::kIn), "in");
  EXPECT_EQ(ScheduleKindName(ScheduleKind::kAt), "at");
  EXPECT_EQ(ScheduleKindName(ScheduleKind::kEvery), "every");
}

TEST(Misfire_3_5, ParseAndName) {
  for (MisfirePolicy p : {MisfirePolicy::kSkip, MisfirePolicy::kOnce, MisfirePolicy::kAll}) {
    Result<MisfirePolicy> back = ParseMisfirePolicy(MisfirePolicyName(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
  EXPECT_EQ(MisfirePolicyName(MisfirePolicy::kSkip), "skip");
  EXPECT_EQ(MisfirePolicyName(MisfirePolicy::kOnce), "once");
  EXPECT_EQ(MisfirePolicyName(MisfirePolicy::kAll), "all");
  EXPECT_EQ(ParseMisfirePolicy("SKIP").value_or(MisfirePolicy::kAll), MisfirePolicy::kSkip);
  EXPECT_EQ(ErrorOf(ParseMisfirePolicy("later")),
            "misfire: unknown policy 'later' (expected skip, once or all)");
  EXPECT_EQ(ErrorOf(ParseMisfirePolicy("")),
            "misfire: unknown policy '' (expected skip, once or all)");
}

}  // namespace
}  // namespace ax
