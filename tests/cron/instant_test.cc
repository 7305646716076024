// SPEC 3.2: instants (RFC 3339).
#include "ax/instant.h"

#include <chrono>
#include <limits>

#include <gtest/gtest.h>

#include "cron/cron_test_util.h"

namespace ax {
namespace {

using testing::ErrorOf;

constexpr int64_t kSec = 1'000'000'000;

struct Accepted {
  const char* text;
  int64_t unix_nanos;  // from `date -u -d ... +%s` (coreutils)
};

TEST(Instant_3_2, ParsesRfc3339) {
  const Accepted cases[] = {
      {"2026-12-24T18:00:00+01:00", 1798131600 * kSec},
      {"2026-12-24T17:00:00Z", 1798131600 * kSec},
      {"2026-12-24T12:00:00-05:00", 1798131600 * kSec},
      {"2026-12-24T22:30:00+05:30", 1798131600 * kSec},
      {"2026-03-08T10:00:00Z", 1772964000 * kSec},
      {"2026-03-08t10:00:00z", 1772964000 * kSec},  // RFC 3339 5.6: t and z may be lowercase
      {"2026-03-08 10:00:00Z", 1772964000 * kSec},  // and the T may be a space
      {"2026-03-08T10:00:00-00:00", 1772964000 * kSec},
      {"2026-03-08T10:00:00.5Z", 1772964000 * kSec + 500'000'000},
      {"2026-03-08T10:00:00.123456789Z", 1772964000 * kSec + 123'456'789},
      {"2026-03-08T10:00:00.000000001Z", 1772964000 * kSec + 1},
      {"2028-02-29T00:00:00Z", 1835395200 * kSec},
      {"2000-01-01T00:00:00Z", 946684800 * kSec},
      {"1970-01-01T00:00:00Z", 0},
      {"1969-12-31T23:59:59.999999999Z", -1},
      {"1900-01-01T00:00:00Z", -2208988800 * kSec},
      {"2262-04-11T23:47:16.854775807Z", std::numeric_limits<int64_t>::max()},
      {"1677-09-21T00:12:43.145224192Z", std::numeric_limits<int64_t>::min()},
  };
  for (const Accepted& c : cases) {
    Result<Instant> t = ParseInstant(c.text);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().ToString();
    EXPECT_EQ(ToUnixNanos(*t), c.unix_nanos) << c.text;
  }
}

struct Refused {
  const char* text;
  const char* message;
};

TEST(Instant_3_2, RefusesWithTheReason) {
  const char* kHint = " (RFC 3339, e.g. 2026-12-24T18:00:00+01:00)";
  const Refused cases[] = {
      {"2026-13-01T00:00:00Z", "instant: month 13 is out of range 1-12"},
      {"2026-00-01T00:00:00Z", "instant: month 0 is out of range 1-12"},
      {"2026-02-29T00:00:00Z", "instant: day 29 is out of range 1-28 for 2026-02"},
      {"2028-02-30T00:00:00Z", "instant: day 30 is out of range 1-29 for 2028-02"},
      {"2026-04-31T00:00:00Z", "instant: day 31 is out of range 1-30 for 2026-04"},
      {"2026-01-00T00:00:00Z", "instant: day 0 is out of range 1-31 for 2026-01"},
      {"2026-01-01T24:00:00Z", "instant: hour 24 is out of range 0-23"},
      {"2026-01-01T00:60:00Z", "instant: minute 60 is out of range 0-59"},
      {"2026-01-01T00:00:61Z", "instant: second 61 is out of range 0-59"},
      {"2016-12-31T23:59:60Z",
       "instant: second 60 (a leap second) cannot be represented in Unix time; use :59"},
      {"2026-01-01T00:00:00+24:00", "instant: offset hour 24 is out of range 0-23"},
      {"2026-01-01T00:00:00+01:60", "instant: offset minute 60 is out of range 0-59"},
      {"2262-04-11T23:47:16.854775808Z",
       "instant: '2262-04-11T23:47:16.854775808Z' is outside the representable range "
       "1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z"},
      {"9999-12-31T23:59:59Z",
       "instant: '9999-12-31T23:59:59Z' is outside the representable range "
       "1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z"},
  };
  for (const Refused& c : cases) EXPECT_EQ(ErrorOf(ParseInstant(c.text)), c.message) << c.text;

  const std::pair<const char*, const char*> syntax[] = {
      {"", "a date YYYY-MM-DD"},
      {"2026-1-01T00:00:00Z", "a date YYYY-MM-DD"},
      {"2026-01-01X00:00:00Z", "'T' between date and time"},
      {"2026-01-01T0:00:00Z", "a time HH:MM:SS"},
      {"2026-01-01T00:00Z", "a time HH:MM:SS"},
      {"2026-01-01T00:00:00", "'Z' or an offset like +01:00"},
      {"2026-01-01T00:00:00.Z", "digits after '.'"},
      {"2026-01-01T00:00:00.1234567891Z", "at most 9 fractional digits (nanoseconds)"},
      {"2026-01-01T00:00:00+0100", "an offset of the form +HH:MM"},
      {"2026-01-01T00:00:00Zjunk", "nothing after the offset"},
      {" 2026-01-01T00:00:00Z", "a date YYYY-MM-DD"},
  };
  for (const auto& [text, expected] : syntax) {
    EXPECT_EQ(ErrorOf(ParseInstant(text)),
              std::string("instant: expected ") + expected + " in '" + text + "'" + kHint)
        << text;
  }
}

TEST(Instant_3_2, FormatsUtcWithFractionOnlyWhenNonZero) {
  EXPECT_EQ(FormatInstant(FromUnixNanos(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatInstant(FromUnixNanos(1798131600 * kSec)), "2026-12-24T17:00:00Z");
  EXPECT_EQ(FormatInstant(FromUnixNanos(1772964000 * kSec + 500'000'000)),
            "2026-03-08T10:00:00.5Z");
  EXPECT_EQ(FormatInstant(FromUnixNanos(1772964000 * kSec + 1)), "2026-03-08T10:00:00.000000001Z");
  EXPECT_EQ(FormatInstant(FromUnixNanos(-1)), "1969-12-31T23:59:59.999999999Z");
  EXPECT_EQ(FormatInstant(kInstantMax), "2262-04-11T23:47:16.854775807Z");
  EXPECT_EQ(FormatInstant(kInstantMin), "1677-09-21T00:12:43.145224192Z");
}

TEST(Instant_3_2, FormatsWholeSecondsTruncatingTowardThePast) {
  EXPECT_EQ(FormatInstantSeconds(FromUnixNanos(1772964000 * kSec)), "2026-03-08T10:00:00Z");
  EXPECT_EQ(FormatInstantSeconds(FromUnixNanos(1772964000 * kSec + 999'999'999)),
            "2026-03-08T10:00:00Z");
  EXPECT_EQ(FormatInstantSeconds(FromUnixNanos(-1)), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatInstantSeconds(kInstantMin), "1677-09-21T00:12:43Z");
}

TEST(Instant_3_2, FormatParsesBackToTheSameInstant) {
  int64_t v = 1;
  for (int i = 0; i < 22; ++i, v *= 7) {
    for (int64_t ns : {v, -v, v + 1, -v - 1, v / 1000 * 1000, -v / kSec * kSec}) {
      Result<Instant> back = ParseInstant(FormatInstant(FromUnixNanos(ns)));
      ASSERT_TRUE(back.ok()) << ns << ": " << back.status().ToString();
      EXPECT_EQ(ToUnixNanos(*back), ns);
    }
  }
}

}  // namespace
}  // namespace ax
