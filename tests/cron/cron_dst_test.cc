// SPEC 3.3: daylight-saving rules. Transitions (from `zdump -v`, glibc):
//   America/New_York  2026-03-08 07:00Z 02:00 EST -> 03:00 EDT; 2026-11-01 06:00Z 02:00 EDT ->
//   01:00 EST
//                     2027-03-14 07:00Z;                         2027-11-07 06:00Z
//                     2040-03-11 07:00Z;                         2040-11-04 06:00Z
//   Europe/Berlin     2026-03-29 01:00Z 02:00 CET -> 03:00 CEST; 2026-10-25 01:00Z 03:00 -> 02:00
//   CET
//                     2027-03-28 01:00Z;                         2027-10-31 01:00Z
//   Australia/Lord_Howe 2026-04-04 15:00Z 02:00 +11 -> 01:30 +1030; 2026-10-03 15:30Z 02:00 +1030
//   -> 02:30 +11
//                     2027-04-03 15:00Z;                         2027-10-02 15:30Z
//                     2040-03-31 15:00Z
//   America/Sao_Paulo 2018-11-04 03:00Z 00:00 -03 -> 01:00 -02 (midnight skipped);
//                     2019-02-17 02:00Z 00:00 -02 -> 23:00 -03 (23:00-23:59 repeated); -03 since.
// Every expected instant below is derived from these by hand.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cron/cron_test_util.h"

namespace ax {
namespace {

using testing::NextFires;
using V = std::vector<std::string>;

void Expect(const char* expr, const char* tz, const char* from, const V& want) {
  EXPECT_EQ(NextFires(expr, tz, from, static_cast<int>(want.size())), want)
      << "'" << expr << "' in " << tz << " after " << from;
}

// --- New York ---------------------------------------------------------------

TEST(Cron_3_3, NewYorkSpringForwardIntervalSkipsTheMissingHour) {
  // 01:30 EST; 02:00 and 02:30 do not exist; 03:00 EDT, 03:30, 04:00.
  Expect("*/30 * * * *", "America/New_York", "2026-03-08T06:00:00Z",
         {"2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z",
          "2026-03-08T08:00:00Z"});
  Expect("0 * * * *", "America/New_York", "2026-03-08T05:30:00Z",
         {"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"});
  // The SPEC's interval example with a fixed hour range: 01:00, 01:30, 03:00, 03:30 EDT.
  Expect("*/30 1-3 * * *", "America/New_York", "2026-03-08T05:00:00Z",
         {"2026-03-08T06:00:00Z", "2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z",
          "2026-03-08T07:30:00Z", "2026-03-09T05:00:00Z"});
  // An interval expression confined to the missing hour skips that day entirely.
  Expect("*/30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
         {"2026-03-09T06:00:00Z", "2026-03-09T06:30:00Z"});
}

TEST(Cron_3_3, NewYorkSpringForwardFixedTimeFiresOnceAfterTheGap) {
  // 02:30 does not exist on 03-08: fires at 03:00 EDT (07:00Z); then 02:30 EDT = 06:30Z.
  Expect("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
         {"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"});
  // Four skipped times coalesce into one fire.
  Expect("0,15,30,45 2 * * *", "America/New_York", "2026-03-08T00:00:00Z",
         {"2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z", "2026-03-09T06:15:00Z"});
  // 02:00 (skipped) and 03:00 (exists) land on the same instant: one fire.
  Expect("0 2,3 * * *", "America/New_York", "2026-03-08T00:00:00Z",
         {"2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z", "2026-03-09T07:00:00Z"});
  // Just before the gap instant, and exactly at it.
  Expect("30 2 * * *", "America/New_York", "2026-03-08T06:59:59Z", {"2026-03-08T07:00:00Z"});
  Expect("30 2 * * *", "America/New_York", "2026-03-08T07:00:00Z", {"2026-03-09T06:30:00Z"});
  // 2027 transition.
  Expect("30 2 * * *", "America/New_York", "2027-03-13T12:00:00Z",
         {"2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"});
}

TEST(Cron_3_3, NewYorkFallBackIntervalFiresInBothPasses) {
  Expect("*/30 * * * *", "America/New_York", "2026-11-01T04:45:00Z",
         {"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z",
          "2026-11-01T06:30:00Z", "2026-11-01T07:00:00Z"});
  Expect("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z",
         {"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"});
  // Interval because the minute field begins with '*', even with a fixed hour.
  Expect("*/30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
         {"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z",
          "2026-11-01T06:30:00Z", "2026-11-02T06:00:00Z"});
  Expect("0 * * * *", "America/New_York", "2027-11-07T04:30:00Z",
         {"2027-11-07T05:00:00Z", "2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z"});
}

TEST(Cron_3_3, NewYorkFallBackFixedTimeFiresOnceAtFirstOccurrence) {
  // 01:30 EDT = 05:30Z; the second 01:30 (EST, 06:30Z) does not fire; next day 01:30 EST.
  Expect("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
         {"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"});
  // Asking from the first occurrence still skips the repeat.
  Expect("30 1 * * *", "America/New_York", "2026-11-01T05:30:00Z", {"2026-11-02T06:30:00Z"});
  // Asking from inside the repeated hour (01:10 EST).
  Expect("30 1 * * *", "America/New_York", "2026-11-01T06:10:00Z", {"2026-11-02T06:30:00Z"});
  Expect("0,30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
         {"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:00:00Z"});
  Expect("30 1 * * *", "America/New_York", "2027-11-06T12:00:00Z",
         {"2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"});
  // Times outside the repeated hour are unaffected: 02:00 EST = 07:00Z.
  Expect("0 2 * * *", "America/New_York", "2026-10-31T12:00:00Z",
         {"2026-11-01T07:00:00Z", "2026-11-02T07:00:00Z"});
}

// --- Berlin -----------------------------------------------------------------

TEST(Cron_3_3, BerlinTransitions2026And2027) {
  // Spring: 02:30 skipped -> 03:00 CEST (01:00Z); then 02:30 CEST = 00:30Z.
  Expect("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
         {"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"});
  Expect("0 2 * * *", "Europe/Berlin", "2027-03-27T12:00:00Z",
         {"2027-03-28T01:00:00Z", "2027-03-29T00:00:00Z"});
  Expect("*/20 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
         {"2026-03-30T00:00:00Z", "2026-03-30T00:20:00Z"});
  // Autumn: 02:30 CEST (00:30Z) once; next day 02:30 CET (01:30Z).
  Expect("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
         {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"});
  Expect("0 2 * * *", "Europe/Berlin", "2027-10-30T12:00:00Z",
         {"2027-10-31T00:00:00Z", "2027-11-01T01:00:00Z"});
  // Interval in both passes: 01:15 CEST, 02:15 CEST, 02:15 CET, 03:15 CET.
  Expect("15 * * * *", "Europe/Berlin", "2026-10-24T23:00:00Z",
         {"2026-10-24T23:15:00Z", "2026-10-25T00:15:00Z", "2026-10-25T01:15:00Z",
          "2026-10-25T02:15:00Z"});
}

// --- Lord Howe (30-minute DST) ----------------------------------------------

TEST(Cron_3_3, LordHoweFallBackIntervalFiresInBothPasses) {
  // 01:30 +11, 01:45 +11, 01:30 +1030, 01:45 +1030, 02:00 +1030, 02:15 +1030.
  Expect("*/15 * * * *", "Australia/Lord_Howe", "2026-04-04T14:20:00Z",
         {"2026-04-04T14:30:00Z", "2026-04-04T14:45:00Z", "2026-04-04T15:00:00Z",
          "2026-04-04T15:15:00Z", "2026-04-04T15:30:00Z", "2026-04-04T15:45:00Z"});
  // 2027: 01:30 +11 (14:30Z), 01:30 +1030 (15:00Z), 02:30 +1030 (16:00Z).
  Expect("30 * * * *", "Australia/Lord_Howe", "2027-04-03T14:00:00Z",
         {"2027-04-03T14:30:00Z", "2027-04-03T15:00:00Z", "2027-04-03T16:00:00Z"});
}

TEST(Cron_3_3, LordHoweFallBackFixedTimeFiresOnceAtFirstOccurrence) {
  // 01:45 +11 = 14:45Z; the repeat at 15:15Z does not fire; next day 01:45 +1030 = 15:15Z.
  Expect("45 1 * * *", "Australia/Lord_Howe", "2026-04-04T12:00:00Z",
         {"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"});
  Expect("45 1 * * *", "Australia/Lord_Howe", "2026-04-04T15:05:00Z", {"2026-04-05T15:15:00Z"});
}

TEST(Cron_3_3, LordHoweSpringForwardSkipsHalfAnHour) {
  // Interval: 01:45 +1030, then 02:30 +11 (02:00 and 02:15 do not exist).
  Expect("*/15 * * * *", "Australia/Lord_Howe", "2026-10-03T15:00:00Z",
         {"2026-10-03T15:15:00Z", "2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z"});
  // Fixed: 02:15 skipped -> fires at 02:30 +11 (15:30Z); then 02:15 +11 = 15:15Z.
  Expect("15 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z",
         {"2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"});
  // 02:00 and 02:15 skipped, 02:30 exists at the same instant: one fire.
  Expect("0,15,30 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z",
         {"2026-10-03T15:30:00Z", "2026-10-04T15:00:00Z", "2026-10-04T15:15:00Z",
          "2026-10-04T15:30:00Z"});
  Expect("0 2 * * *", "Australia/Lord_Howe", "2027-10-02T12:00:00Z",
         {"2027-10-02T15:30:00Z", "2027-10-03T15:00:00Z"});
}

// --- Sao Paulo ----------------------------------------------------------------

TEST(Cron_3_3, SaoPauloMidnightGapAndRepeatedEvening) {
  // 2018-11-04 00:00 does not exist: @daily fires at 01:00 -02 (03:00Z).
  Expect("@daily", "America/Sao_Paulo", "2018-11-03T12:00:00Z",
         {"2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"});
  // 2019-02-16 23:00-23:59 happens twice; midnight of 02-17 happens once, at 03:00Z.
  Expect("30 23 * * *", "America/Sao_Paulo", "2019-02-16T12:00:00Z",
         {"2019-02-17T01:30:00Z", "2019-02-18T02:30:00Z"});
  Expect("@daily", "America/Sao_Paulo", "2019-02-16T12:00:00Z",
         {"2019-02-17T03:00:00Z", "2019-02-18T03:00:00Z"});
  Expect("30 * * * *", "America/Sao_Paulo", "2019-02-17T01:00:00Z",
         {"2019-02-17T01:30:00Z", "2019-02-17T02:30:00Z", "2019-02-17T03:30:00Z"});
  // No DST since 2019: -03 all year in 2026 and 2027.
  Expect("0 2 * * *", "America/Sao_Paulo", "2026-01-15T00:00:00Z", {"2026-01-15T05:00:00Z"});
  Expect("0 2 * * *", "America/Sao_Paulo", "2027-07-15T00:00:00Z", {"2027-07-15T05:00:00Z"});
  Expect("0 0 1 11 *", "America/Sao_Paulo", "2026-06-01T00:00:00Z", {"2026-11-01T03:00:00Z"});
}

// --- Past 2037: the zone's rules must still apply --------------------------

TEST(Cron_3_3, ZoneRulesApplyPast2037) {
  // 2040-07-01 12:00 EDT (-04:00) = 16:00Z; 2040-01-01 12:00 EST = 17:00Z.
  Expect("0 12 * * *", "America/New_York", "2040-06-30T20:00:00Z", {"2040-07-01T16:00:00Z"});
  Expect("0 12 * * *", "America/New_York", "2039-12-31T20:00:00Z", {"2040-01-01T17:00:00Z"});
  Expect("30 2 * * *", "America/New_York", "2040-03-10T12:00:00Z",
         {"2040-03-11T07:00:00Z", "2040-03-12T06:30:00Z"});
  Expect("30 1 * * *", "America/New_York", "2040-11-03T12:00:00Z",
         {"2040-11-04T05:30:00Z", "2040-11-05T06:30:00Z"});
  // Lord Howe 2040-07-01 12:00 +10:30 = 01:30Z; 2040-01-02 12:00 +11 = 01:00Z.
  Expect("0 12 * * *", "Australia/Lord_Howe", "2040-06-30T12:00:00Z", {"2040-07-01T01:30:00Z"});
  Expect("0 12 * * *", "Australia/Lord_Howe", "2040-01-01T12:00:00Z", {"2040-01-02T01:00:00Z"});
  Expect("*/15 * * * *", "Australia/Lord_Howe", "2040-03-31T14:40:00Z",
         {"2040-03-31T14:45:00Z", "2040-03-31T15:00:00Z", "2040-03-31T15:15:00Z"});
  // Berlin 2045-07-01 12:00 CEST = 10:00Z; 2100-01-01 12:00 CET = 11:00Z.
  Expect("0 12 * * *", "Europe/Berlin", "2045-06-30T12:00:00Z", {"2045-07-01T10:00:00Z"});
  Expect("0 12 1 1 *", "Europe/Berlin", "2099-06-30T12:00:00Z", {"2100-01-01T11:00:00Z"});
}

}  // namespace
}  // namespace ax
