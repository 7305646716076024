// SPEC 3.6: `ax cron next` prints K instants strictly after --from, one per
// line, UTC RFC 3339 whole seconds; errors go to stderr with a non-zero exit.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/cron_next.h"

namespace ax::cli {
namespace {

struct CmdResult {
  int code;
  std::string out;
  std::string err;
};

CmdResult Cmd(std::string_view expr, std::string_view tz, std::string_view from, int count) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = CronNextCommand(expr, tz, from, count, out, err);
  return {code, out.str(), err.str()};
}

TEST(CronNext_3_6, PrintsKInstantsStrictlyAfterFrom) {
  const CmdResult r = Cmd("0 10 * * *", "UTC", "2026-03-07T10:00:00Z", 2);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "2026-03-08T10:00:00Z\n2026-03-09T10:00:00Z\n");
  EXPECT_EQ(r.err, "");
}

TEST(CronNext_3_6, AppliesTheZoneAndDstRules) {
  // New York 2026-03-08: 02:30 does not exist, fires at 03:00 EDT.
  const CmdResult r = Cmd("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 3);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "2026-03-08T07:00:00Z\n2026-03-09T06:30:00Z\n2026-03-10T06:30:00Z\n");
  EXPECT_EQ(r.err, "");
}

TEST(CronNext_3_6, FromMayCarryAnOffsetAndAFraction) {
  EXPECT_EQ(Cmd("0 10 * * *", "UTC", "2026-03-08T10:59:59.5+01:00", 1).out,
            "2026-03-08T10:00:00Z\n");
  EXPECT_EQ(Cmd("0 10 * * *", "UTC", "2026-03-08T10:00:00.5Z", 1).out, "2026-03-09T10:00:00Z\n");
}

TEST(CronNext_3_6, InvalidExpressionGoesToStderrOnly) {
  const CmdResult r = Cmd("0 0 * * 8", "UTC", "2026-01-01T00:00:00Z", 3);
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "ax cron next: day-of-week: 8 is out of range 0-7\n");
}

TEST(CronNext_3_6, InvalidZoneFromOrCountGoToStderrOnly) {
  CmdResult r = Cmd("0 0 * * *", "Mars/Base", "2026-01-01T00:00:00Z", 1);
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "ax cron next: tz: unknown time zone 'Mars/Base'\n");

  r = Cmd("0 0 * * *", "UTC", "2026-02-30T00:00:00Z", 1);
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "ax cron next: from: instant: day 30 is out of range 1-28 for 2026-02\n");

  r = Cmd("0 0 * * *", "UTC", "2026-01-01T00:00:00Z", 0);
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "ax cron next: count: 0 is out of range 1-100000\n");

  r = Cmd("0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", 1);
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ax cron next: day-of-month: '30' never matches a day of month '2', so the "
            "expression can never fire\n");
}

// Whole-second lines cannot show fires between seconds: truncated, they would
// repeat and fall at or before --from.
TEST(CronNext_3_6, EveryOfAFractionOfASecondIsRefused) {
  for (const char* expr : {"@every 250ms", "@every 1500ms"}) {
    const CmdResult r = Cmd(expr, "UTC", "1970-01-01T00:00:01.2Z", 3);
    EXPECT_NE(r.code, 0) << expr;
    EXPECT_EQ(r.out, "") << expr;
    EXPECT_EQ(r.err, "ax cron next: cron: '" + std::string(expr) +
                         "' fires between whole seconds, which this command's lines cannot "
                         "show; use a period of whole seconds\n");
  }
  EXPECT_EQ(Cmd("@every 2s", "UTC", "1970-01-01T00:00:01.2Z", 2).out,
            "1970-01-01T00:00:02Z\n1970-01-01T00:00:04Z\n");
}

TEST(CronNext_3_6, TooFewFiresBeforeTheEndOfTimeIsAnErrorWithNoOutput) {
  const CmdResult r = Cmd("0 0 * * *", "UTC", "2262-04-09T12:00:00Z", 3);
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ax cron next: only 2 fire times exist before the end of the representable range "
            "(2262-04-11T23:47:16Z)\n");
}

TEST(CronNext_3_6, EmptyFromMeansNow) {
  const CmdResult r = Cmd("@hourly", "UTC", "", 1);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.size(), std::string("2026-03-08T10:00:00Z\n").size());
  EXPECT_EQ(r.out.substr(13), ":00:00Z\n");
}

}  // namespace
}  // namespace ax::cli
