// SPEC 3.3: what cron expressions are accepted and how refusals read.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ax/cron.h"

#include "cron/cron_test_util.h"

namespace ax {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::ErrorOf;

struct Refused {
  const char* expr;
  const char* tz;
  const char* message;
};

constexpr const char* kWrongCount =
    "cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 with a leading "
    "second, got ";

TEST(Cron_3_3, RefusesWithFieldAndReason) {
  const Refused cases[] = {
      // Out-of-range values, per field.
      {"0 0 * * 8", "UTC", "day-of-week: 8 is out of range 0-7"},
      {"60 * * * *", "UTC", "minute: 60 is out of range 0-59"},
      {"* 24 * * *", "UTC", "hour: 24 is out of range 0-23"},
      {"* * 0 * *", "UTC", "day-of-month: 0 is out of range 1-31"},
      {"* * 32 * *", "UTC", "day-of-month: 32 is out of range 1-31"},
      {"* * * 13 *", "UTC", "month: 13 is out of range 1-12"},
      {"* * * 0 *", "UTC", "month: 0 is out of range 1-12"},
      {"60 * * * * *", "UTC", "second: 60 is out of range 0-59"},
      {"1-60 * * * *", "UTC", "minute: 60 is out of range 0-59"},
      {"99999999 * * * *", "UTC", "minute: 99999999 is out of range 0-59"},
      {"0000060 * * * *", "UTC", "minute: 0000060 is out of range 0-59"},
      // Steps.
      {"*/0 * * * *", "UTC", "minute: step must be at least 1 in '*/0'"},
      {"0 1-5/0 * * *", "UTC", "hour: step must be at least 1 in '1-5/0'"},
      {"*/60 * * * *", "UTC", "minute: step 60 is out of range 1-59 in '*/60'"},
      {"*/00000060 * * * *", "UTC", "minute: step 00000060 is out of range 1-59 in '*/00000060'"},
      {"*/ * * * *", "UTC", "minute: missing step after '/' in '*/'"},
      {"*/x * * * *", "UTC", "minute: invalid step in '*/x'"},
      // Reversed ranges.
      {"5-1 * * * *", "UTC", "minute: range 5-1 is reversed"},
      {"0 0 * * FRI-MON", "UTC", "day-of-week: range FRI-MON is reversed"},
      {"0 0 * DEC-JAN *", "UTC", "month: range DEC-JAN is reversed"},
      // L, W and # forms.
      {"0 0 * * L", "UTC",
       "day-of-week: bare 'L' is ambiguous; write nL (e.g. 5L = the last Friday)"},
      {"0 0 * * 1#6", "UTC", "day-of-week: occurrence 6 is out of range 1-5 in '1#6'"},
      {"0 0 * * 1#0", "UTC", "day-of-week: occurrence 0 is out of range 1-5 in '1#0'"},
      {"0 0 * * 1#0000006", "UTC",
       "day-of-week: occurrence 0000006 is out of range 1-5 in '1#0000006'"},
      {"0 0 * * 1#", "UTC", "day-of-week: missing occurrence after '#' in '1#'"},
      {"0 0 * * 8L", "UTC", "day-of-week: 8 is out of range 0-7"},
      {"0 0 W * *", "UTC", "day-of-month: 'W' needs a day before it (e.g. 15W)"},
      {"0 0 32W * *", "UTC", "day-of-month: 32 is out of range 1-31"},
      {"0 0 L-2 * *", "UTC", "day-of-month: invalid value 'L'"},
      // Names and syntax.
      {"0 0 * FOO *", "UTC", "month: unknown name 'FOO' (expected 1-12 or JAN-DEC)"},
      {"0 0 * * MONDAY", "UTC", "day-of-week: unknown name 'MONDAY' (expected 0-7 or SUN-SAT)"},
      {"0 0 * MON *", "UTC", "month: unknown name 'MON' (expected 1-12 or JAN-DEC)"},
      {"a * * * *", "UTC", "minute: invalid value 'a'"},
      {"? * * * *", "UTC", "minute: '?' is only allowed in day-of-month and day-of-week"},
      {"0 0 ?,1 * *", "UTC", "day-of-month: '?' must stand alone"},
      {"1,,2 * * * *", "UTC", "minute: empty element in list '1,,2'"},
      {"1, * * * *", "UTC", "minute: empty element in list '1,'"},
      {"-1 * * * *", "UTC", "minute: missing value in '-1'"},
      // Field counts.
      {"* * * *", "UTC", "<count>4"},
      {"* * * * * * *", "UTC", "<count>7"},
      {"*", "UTC", "<count>1"},
      {"", "UTC", "cron: empty expression"},
      {"   ", "UTC", "cron: empty expression"},
      // Expressions that can never fire.
      {"0 0 30 2 *", "UTC",
       "day-of-month: '30' never matches a day of month '2', so the expression can never fire"},
      {"0 0 31 4,6,9,11 *", "UTC",
       "day-of-month: '31' never matches a day of month '4,6,9,11', so the expression can never "
       "fire"},
      {"0 0 30,31 FEB *", "UTC",
       "day-of-month: '30,31' never matches a day of month 'FEB', so the expression can never "
       "fire"},
      {"0 0 31W 2 *", "UTC",
       "day-of-month: '31W' never matches a day of month '2', so the expression can never fire"},
      // Macros.
      {"@reboot", "UTC",
       "cron: unknown macro '@reboot' (expected @yearly, @annually, @monthly, @weekly, @daily, "
       "@midnight, @hourly or @every <duration>)"},
      {"@daily 5", "UTC", "cron: @daily takes no arguments"},
      {"@every", "UTC", "cron: @every needs a duration, e.g. @every 15m"},
      {"@every 0s", "UTC", "cron: @every duration must be positive"},
      {"@every -5m", "UTC", "cron: @every: duration: negative durations are not allowed in '-5m'"},
      // Zones.
      {"0 0 * * *", "Mars/Base", "tz: unknown time zone 'Mars/Base'"},
      {"0 0 * * *", "", "tz: '' is not an IANA time zone name (e.g. Europe/Berlin)"},
      {"0 0 * * *", "../../etc/passwd",
       "tz: '../../etc/passwd' is not an IANA time zone name (e.g. Europe/Berlin)"},
      {"0 0 * * *", "/etc/localtime",
       "tz: '/etc/localtime' is not an IANA time zone name (e.g. Europe/Berlin)"},
      {"0 0 * * *", "localtime",
       "tz: 'localtime' is not an IANA time zone name (e.g. Europe/Berlin)"},
      {"0 0 * * *", "posix/Factory",
       "tz: 'posix/Factory' is not an IANA time zone name (e.g. Europe/Berlin)"},
      {"0 0 * * *", "right/posixrules",
       "tz: 'right/posixrules' is not an IANA time zone name (e.g. Europe/Berlin)"},
  };
  for (const Refused& c : cases) {
    std::string want = c.message;
    if (want.rfind("<count>", 0) == 0) want = kWrongCount + want.substr(7);
    EXPECT_EQ(ErrorOf(CronSchedule::Parse(c.expr, c.tz)), want) << "'" << c.expr << "' " << c.tz;
  }
}

TEST(Cron_3_3, AcceptsEveryDocumentedForm) {
  const char* accepted[] = {
      "*/5 * * * *",     "1-30/7 * * * *", "5/15 * * * *", "0 0 * JAN-MAR MON-FRI",
      "0 0 * jan,Jul *", "0 0 ? * mon",    "0 0 L * ?",    "0 0 LW * *",
      "0 0 15W * *",     "0 0 * * 5L",     "0 0 * * FRIL", "0 0 * * 1#1",
      "0 0 * * fri#5",   "0 0 * * 7",      "0 0 * * 0-7",  "0 0 * * SAT-SUN",
      "0 0 1,L * *",     "*/10 * * * * *", "@yearly",      "@annually",
      "@monthly",        "@weekly",        "@daily",       "@midnight",
      "@hourly",         "@every 15m",     "@EVERY PT1H",  "@Daily",
      " \t0 0 * * *\t ", "0\t0\t*\t*\t*",  "0 0 29 2 *",   "0 0 31 * *",
  };
  for (const char* expr : accepted) {
    Result<CronSchedule> s = CronSchedule::Parse(expr, "Europe/Berlin");
    EXPECT_TRUE(s.ok()) << "'" << expr << "': " << s.status().ToString();
  }
}

TEST(Cron_3_3, IntervalMeansSecondsMinutesOrHoursBeginWithStar) {
  const std::pair<const char*, bool> cases[] = {
      {"*/15 * * * *", true},   {"0 * * * *", true},     {"@hourly", true},
      {"*/30 1-3 * * *", true}, {"* 2 * * *", true},     {"*/5 0 2 * * *", true},
      {"0 */5 2 * * *", true},  {"@every 1h", true},     {"0 2 * * *", false},
      {"0 0-23 * * *", false},  {"0,30 1 * * *", false}, {"0 0 */2 * 1", false},
      {"@daily", false},        {"@weekly", false},      {"30 0 2 * * *", false},
  };
  for (const auto& [expr, interval] : cases) {
    Result<CronSchedule> s = CronSchedule::Parse(expr);
    ASSERT_TRUE(s.ok()) << expr << ": " << s.status().ToString();
    EXPECT_EQ(s->is_interval(), interval) << expr;
  }
}

TEST(Cron_3_3, KeepsExpressionZoneAndEvery) {
  Result<CronSchedule> s = CronSchedule::Parse("  0 2 * * *  ", "Asia/Shanghai");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->expr(), "0 2 * * *");
  EXPECT_EQ(s->tz(), "Asia/Shanghai");
  EXPECT_EQ(s->every(), std::nullopt);

  Result<CronSchedule> e = CronSchedule::Parse("@every 1h30m");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->every(), std::optional<Duration>(90min));
  EXPECT_EQ(e->tz(), "UTC");
}

// An expression from a file or a JSON string may keep its line end.
TEST(Cron_3_3, LineBreaksAndLeadingZerosReadAsUsual) {
  for (const char* expr : {"0 2 * * *\n", "0 2 * * *\r\n", "@daily\n", "@every\n15m\r\n",
                           "0\n0\v*\f*\r*", "*/0000005 * * * *", "0 0 * * 1#0000003"}) {
    Result<CronSchedule> s = CronSchedule::Parse(expr, "UTC");
    EXPECT_TRUE(s.ok()) << "'" << expr << "': " << s.status().ToString();
  }
  Result<CronSchedule> s = CronSchedule::Parse("\n0000030\r\n0000002 * * *\n", "UTC");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->expr(), "0000030\r\n0000002 * * *");
  EXPECT_EQ(s->Next(At("2026-01-01T00:00:00Z")), At("2026-01-01T02:30:00Z"));
}

TEST(Cron_3_3, CopiesAreIndependentValues) {
  Result<CronSchedule> a = CronSchedule::Parse("*/7 * * * *", "America/New_York");
  ASSERT_TRUE(a.ok());
  CronSchedule b = *a;
  CronSchedule c = *CronSchedule::Parse("@daily");
  c = b;
  const Instant t = At("2026-03-08T06:58:00Z");
  EXPECT_EQ(b.Next(t), a->Next(t));
  EXPECT_EQ(c.Next(t), a->Next(t));
  EXPECT_EQ(c.expr(), "*/7 * * * *");
}

TEST(Cron_3_3, ConcurrentConstUseIsSafe) {
  Result<CronSchedule> s = CronSchedule::Parse("*/13 * * * *", "Australia/Lord_Howe");
  ASSERT_TRUE(s.ok());
  std::vector<Instant> want;
  want.reserve(500);
  Instant t = At("2026-04-04T12:00:00Z");
  for (int i = 0; i < 500; ++i) want.push_back(t = *s->Next(t));
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<int> mismatches(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      const CronSchedule copy = *s;  // copies share the parsed program
      Instant u = At("2026-04-04T12:00:00Z");
      for (int i = 0; i < 500; ++i) {
        u = *(k % 2 == 0 ? s->Next(u) : copy.Next(u));
        if (u != want[i]) ++mismatches[k];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace ax
