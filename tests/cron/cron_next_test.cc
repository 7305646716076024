// SPEC 3.3: next-fire calculation on the calendar (fields, L/W/#, the Vixie
// day rule, macros, @every, range ends). Expected values were worked out from
// the calendar (weekdays checked with coreutils `date`), not from the code.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ax/cron.h"

#include "cron/cron_test_util.h"

namespace ax {
namespace {

using testing::At;
using testing::NextFires;
using V = std::vector<std::string>;

struct Case {
  const char* name;
  const char* expr;
  const char* tz;
  const char* from;
  V want;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(NextFires(c.expr, c.tz, c.from, static_cast<int>(c.want.size())), c.want)
        << c.name << ": '" << c.expr << "' in " << c.tz << " after " << c.from;
  }
}

TEST(Cron_3_3, FieldsRangesListsStepsAndNames) {
  RunCases({
      {"every 5 minutes",
       "*/5 * * * *",
       "UTC",
       "2026-05-05T10:58:00Z",
       {"2026-05-05T11:00:00Z", "2026-05-05T11:05:00Z", "2026-05-05T11:10:00Z"}},
      {"range with step",
       "1-30/7 * * * *",
       "UTC",
       "2026-05-05T10:00:00Z",
       {"2026-05-05T10:01:00Z", "2026-05-05T10:08:00Z", "2026-05-05T10:15:00Z",
        "2026-05-05T10:22:00Z", "2026-05-05T10:29:00Z", "2026-05-05T11:01:00Z"}},
      {"start with step",
       "5/15 * * * *",
       "UTC",
       "2026-05-05T10:00:00Z",
       {"2026-05-05T10:05:00Z", "2026-05-05T10:20:00Z", "2026-05-05T10:35:00Z",
        "2026-05-05T10:50:00Z", "2026-05-05T11:05:00Z"}},
      {"list",
       "0 9,17 * * *",
       "UTC",
       "2026-05-05T12:00:00Z",
       {"2026-05-05T17:00:00Z", "2026-05-06T09:00:00Z"}},
      {"weekdays by name",
       "0 9 * * MON-FRI",
       "UTC",
       "2026-05-08T10:00:00Z",  // a Friday
       {"2026-05-11T09:00:00Z", "2026-05-12T09:00:00Z"}},
      {"month names, any case",
       "0 0 1 jan,Jul *",
       "UTC",
       "2026-02-01T00:00:00Z",
       {"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
      {"7 is Sunday", "0 0 * * 7", "UTC", "2026-03-02T00:00:00Z", {"2026-03-08T00:00:00Z"}},
      {"0 is Sunday", "0 0 * * 0", "UTC", "2026-03-02T00:00:00Z", {"2026-03-08T00:00:00Z"}},
      {"SAT-SUN wraps to Sunday",
       "0 0 * * SAT-SUN",
       "UTC",
       "2026-03-02T00:00:00Z",
       {"2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-14T00:00:00Z"}},
      {"5-7 is Fri-Sun",
       "0 0 * * 5-7",
       "UTC",
       "2026-03-02T00:00:00Z",
       {"2026-03-06T00:00:00Z", "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z",
        "2026-03-13T00:00:00Z"}},
      {"seconds field",
       "*/20 * * * * *",
       "UTC",
       "2026-05-05T10:00:50Z",
       {"2026-05-05T10:01:00Z", "2026-05-05T10:01:20Z", "2026-05-05T10:01:40Z"}},
      {"six fields, fixed",
       "30 0 12 1 1 *",
       "UTC",
       "2026-01-01T12:00:30Z",
       {"2027-01-01T12:00:30Z"}},
      {"strictly after a fire",
       "0 10 * * *",
       "UTC",
       "2026-03-08T10:00:00Z",
       {"2026-03-09T10:00:00Z"}},
      {"sub-second after",
       "* * * * * *",
       "UTC",
       "2026-03-08T10:00:00.5Z",
       {"2026-03-08T10:00:01Z", "2026-03-08T10:00:02Z"}},
      {"just before a fire",
       "0 10 * * *",
       "UTC",
       "2026-03-08T09:59:59.999999999Z",
       {"2026-03-08T10:00:00Z"}},
      {"year roll-over", "0 0 1 1 *", "UTC", "2026-12-31T23:59:59Z", {"2027-01-01T00:00:00Z"}},
      {"fixed zone Shanghai",
       "0 2 * * *",
       "Asia/Shanghai",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T18:00:00Z", "2026-01-02T18:00:00Z"}},
  });
}

TEST(Cron_3_3, MonthEndsAndLeapDays) {
  RunCases({
      {"31st skips short months",
       "0 0 31 * *",
       "UTC",
       "2026-01-31T00:00:00Z",
       {"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z",
        "2026-08-31T00:00:00Z", "2026-10-31T00:00:00Z", "2026-12-31T00:00:00Z",
        "2027-01-31T00:00:00Z"}},
      {"29 February",
       "0 0 29 2 *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}},
      {"2100 is not a leap year",
       "0 0 29 2 *",
       "UTC",
       "2096-03-01T00:00:00Z",
       {"2104-02-29T00:00:00Z"}},
      {"2000 was a leap year",
       "0 0 29 2 *",
       "UTC",
       "1997-01-01T00:00:00Z",
       {"2000-02-29T00:00:00Z", "2004-02-29T00:00:00Z"}},
      {"29 February in New York",
       "0 12 29 2 *",
       "America/New_York",
       "2026-01-01T00:00:00Z",
       {"2028-02-29T17:00:00Z"}},
      {"L is the last day",
       "0 0 L * *",
       "UTC",
       "2026-01-15T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z",
        "2026-04-30T00:00:00Z"}},
      {"L in a leap February",
       "0 0 L 2 *",
       "UTC",
       "2027-03-01T00:00:00Z",
       {"2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"}},
      {"1,L",
       "0 0 1,L * *",
       "UTC",
       "2026-01-15T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-28T00:00:00Z"}},
  });
}

TEST(Cron_3_3, WeekdayFormsLWAndNearestWeekday) {
  RunCases({
      // 2026: Jan 31 Sat, Feb 28 Sat, Mar 31 Tue, Apr 30 Thu, May 31 Sun.
      {"LW",
       "0 0 LW * *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z",
        "2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z"}},
      // 15th: Jan Thu, Feb Sun -> Mon 16, Mar Sun -> Mon 16, Apr Wed; Aug 15 Sat -> Fri 14.
      {"15W",
       "0 0 15W * *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z",
        "2026-04-15T00:00:00Z"}},
      {"15W on a Saturday", "0 0 15W 8 *", "UTC", "2026-01-01T00:00:00Z", {"2026-08-14T00:00:00Z"}},
      // 1st: Aug 1 Sat -> Mon 3 (never back into July); Nov 1 Sun -> Mon 2.
      {"1W does not leave the month",
       "0 0 1W 8,11 *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-08-03T00:00:00Z", "2026-11-02T00:00:00Z"}},
      // 31st: Jan 31 Sat -> Fri 30; Mar 31 Tue; May 31 Sun -> Fri 29 (never into June);
      // months without a 31st do not fire.
      {"31W",
       "0 0 31W * *",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-29T00:00:00Z",
        "2026-07-31T00:00:00Z"}},
      // Fridays 2026: Jan 2..30, Feb ..27, Mar ..27, Apr ..24, May 1..29.
      {"5L last Friday",
       "0 0 * * 5L",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z",
        "2026-04-24T00:00:00Z", "2026-05-29T00:00:00Z"}},
      {"FRIL", "0 0 * * FRIL", "UTC", "2026-02-01T00:00:00Z", {"2026-02-27T00:00:00Z"}},
      {"1#1 first Monday",
       "0 0 * * 1#1",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-05T00:00:00Z", "2026-02-02T00:00:00Z", "2026-03-02T00:00:00Z"}},
      {"5#5 fifth Friday",
       "0 0 * * 5#5",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z",
        "2026-10-30T00:00:00Z"}},
      {"list of # and L",
       "0 0 * * 1#1,5L",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2026-01-05T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-02T00:00:00Z"}},
      // A fifth Friday in February needs a leap year starting on a Friday: 2036 then 2064.
      {"rare: fifth Friday of February",
       "0 0 * 2 5#5",
       "UTC",
       "2026-01-01T00:00:00Z",
       {"2036-02-29T00:00:00Z", "2064-02-29T00:00:00Z"}},
  });
}

TEST(Cron_3_3, VixieDayRuleOrsRestrictedDayFields) {
  RunCases({
      // SPEC: "0 0 */2 * 1" is odd days or Mondays. March 2026: Mar 2, 9, 16 are Mondays.
      {"odd days or Mondays",
       "0 0 */2 * 1",
       "UTC",
       "2026-03-01T00:00:00Z",
       {"2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z", "2026-03-05T00:00:00Z",
        "2026-03-07T00:00:00Z", "2026-03-09T00:00:00Z", "2026-03-11T00:00:00Z",
        "2026-03-13T00:00:00Z", "2026-03-15T00:00:00Z", "2026-03-16T00:00:00Z",
        "2026-03-17T00:00:00Z"}},
      {"1st or Mondays",
       "0 0 1 * MON",
       "UTC",
       "2026-03-25T00:00:00Z",
       {"2026-03-30T00:00:00Z", "2026-04-01T00:00:00Z", "2026-04-06T00:00:00Z"}},
      {"? leaves day-of-month unrestricted",
       "0 0 ? * MON",
       "UTC",
       "2026-03-25T00:00:00Z",
       {"2026-03-30T00:00:00Z", "2026-04-06T00:00:00Z"}},
      {"* leaves day-of-week unrestricted",
       "0 0 13 * *",
       "UTC",
       "2026-03-01T00:00:00Z",
       {"2026-03-13T00:00:00Z", "2026-04-13T00:00:00Z"}},
      // Friday the 13th is NOT an AND: 13th or any Friday.
      {"13th or Fridays",
       "0 0 13 * 5",
       "UTC",
       "2026-03-01T00:00:00Z",
       {"2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z", "2026-03-20T00:00:00Z"}},
      // "*/1" is not exactly "*": the day-of-month is restricted (to every day).
      {"*/1 counts as restricted",
       "0 0 */1 * 1",
       "UTC",
       "2026-03-01T00:00:00Z",
       {"2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z"}},
      {"L or Mondays",
       "0 0 L * 1",
       "UTC",
       "2026-03-25T00:00:00Z",
       {"2026-03-30T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-06T00:00:00Z"}},
  });
}

TEST(Cron_3_3, Macros) {
  RunCases({
      {"@yearly", "@yearly", "UTC", "2026-05-05T00:00:00Z", {"2027-01-01T00:00:00Z"}},
      {"@annually", "@annually", "UTC", "2026-05-05T00:00:00Z", {"2027-01-01T00:00:00Z"}},
      {"@monthly", "@monthly", "UTC", "2026-05-05T00:00:00Z", {"2026-06-01T00:00:00Z"}},
      {"@weekly is Sunday midnight",
       "@weekly",
       "UTC",
       "2026-03-02T00:00:00Z",
       {"2026-03-08T00:00:00Z", "2026-03-15T00:00:00Z"}},
      {"@daily", "@daily", "UTC", "2026-05-05T10:00:00Z", {"2026-05-06T00:00:00Z"}},
      {"@midnight", "@midnight", "UTC", "2026-05-05T10:00:00Z", {"2026-05-06T00:00:00Z"}},
      {"@hourly",
       "@hourly",
       "UTC",
       "2026-05-05T10:00:00Z",
       {"2026-05-05T11:00:00Z", "2026-05-05T12:00:00Z"}},
      {"@daily in Berlin",
       "@daily",
       "Europe/Berlin",
       "2026-07-01T12:00:00Z",
       {"2026-07-01T22:00:00Z"}},
  });
}

TEST(Cron_3_3, EveryIsAnEpochAnchoredGrid) {
  RunCases({
      {"@every 15m",
       "@every 15m",
       "UTC",
       "2026-01-01T00:07:00Z",
       {"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z"}},
      {"on a grid point", "@every 15m", "UTC", "2026-01-01T00:15:00Z", {"2026-01-01T00:30:00Z"}},
      {"zone does not matter",
       "@every 1h",
       "Australia/Lord_Howe",
       "2026-04-04T14:59:59Z",
       {"2026-04-04T15:00:00Z", "2026-04-04T16:00:00Z"}},
      {"7 seconds from the epoch",
       "@every 7s",
       "UTC",
       "1970-01-01T00:00:00Z",
       {"1970-01-01T00:00:07Z", "1970-01-01T00:00:14Z"}},
      {"before the epoch",
       "@every 7s",
       "UTC",
       "1969-12-31T23:59:50Z",
       {"1969-12-31T23:59:53Z", "1970-01-01T00:00:00Z"}},
      {"sub-second",
       "@every 250ms",
       "UTC",
       "2026-01-01T00:00:00.1Z",
       {"2026-01-01T00:00:00.25Z", "2026-01-01T00:00:00.5Z"}},
  });
}

TEST(Cron_3_3, EndsOfTheRepresentableRange) {
  // Instant ends at 2262-04-11T23:47:16.854775807Z.
  RunCases({
      {"last daily fire",
       "0 0 * * *",
       "UTC",
       "2262-04-10T12:00:00Z",
       {"2262-04-11T00:00:00Z", "none"}},
      {"no yearly fire left", "0 0 1 1 *", "UTC", "2262-01-01T00:00:00Z", {"none"}},
      {"before 1970", "0 0 1 1 *", "UTC", "1969-06-01T00:00:00Z", {"1970-01-01T00:00:00Z"}},
      {"near the minimum",
       "0 0 1 1 *",
       "UTC",
       "1677-09-21T00:12:43.145224192Z",
       {"1678-01-01T00:00:00Z"}},
      {"@every at the end", "@every 1h", "UTC", "2262-04-11T23:00:00Z", {"none"}},
  });
  Result<CronSchedule> s = CronSchedule::Parse("* * * * * *", "America/New_York");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Next(kInstantMax), std::nullopt);
  EXPECT_EQ(s->Next(kInstantMin), At("1677-09-21T00:12:44Z"));

  // A 1 ns grid reaches the last instant itself, and nothing after it (the
  // fuzzer found the step past it overflowing into the year 1677).
  Result<CronSchedule> ns = CronSchedule::Parse("@every 1ns", "UTC");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->Next(kInstantMax - Duration(1)), kInstantMax);
  EXPECT_EQ(ns->Next(kInstantMax), std::nullopt);
}

}  // namespace
}  // namespace ax
