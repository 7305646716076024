// SPEC 3.1: durations.
#include "ax/duration.h"

#include <chrono>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "cron/cron_test_util.h"

namespace ax {
namespace {

using namespace std::chrono_literals;
using testing::ErrorOf;

constexpr Duration kMax{std::numeric_limits<int64_t>::max()};
constexpr Duration kMin{std::numeric_limits<int64_t>::min()};

struct Accepted {
  const char* text;
  Duration want;
};

TEST(Duration_3_1, ParsesIsoAndShortForms) {
  const Accepted cases[] = {
      // ISO 8601 (a day is 24 h; a week alone is 7 days).
      {"PT15M", 15min},
      {"P1DT2H", 26h},
      {"PT0.5S", 500ms},
      {"PT0,5S", 500ms},
      {"P2D", 48h},
      {"P2W", 14 * 24h},
      {"PT1.5H", 90min},
      {"PT36H", 36h},
      {"P1DT0.5S", 24h + 500ms},
      {"PT1H2M3S", 1h + 2min + 3s},
      {"PT0S", 0s},
      {"PT0.000000001S", 1ns},
      {"P0.5D", 12h},
      // Short forms.
      {"500ms", 500ms},
      {"10s", 10s},
      {"1.5s", 1500ms},
      {"1h30m", 90min},
      {"2d", 48h},
      {"1d2h3m4s5ms6us7ns", 24h + 2h + 3min + 4s + 5ms + 6us + 7ns},
      {"0", 0s},
      {"0s", 0s},
      {"1.000000001s", 1s + 1ns},
      {"0.5us", 500ns},
      {"1.25m", 75s},
      {"106751d23h47m16s854ms775us807ns", kMax},
      {"9223372036854775807ns", kMax},
  };
  for (const Accepted& c : cases) {
    Result<Duration> d = ParseDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().ToString();
    EXPECT_EQ(d->count(), c.want.count()) << c.text;
  }
}

struct Refused {
  const char* text;
  const char* message;
};

TEST(Duration_3_1, RefusesWithTheReason) {
  const Refused cases[] = {
      {"", "duration: empty text"},
      {"-5m", "duration: negative durations are not allowed in '-5m'"},
      {"+5m", "duration: a sign is not allowed in '+5m'"},
      {"PT-5M", "duration: negative durations are not allowed in 'PT-5M'"},
      {"10", "duration: missing unit (one of ns, us, ms, s, m, h, d) in '10'"},
      {"10x", "duration: unknown unit 'x' (expected ns, us, ms, s, m, h or d) in '10x'"},
      {"10M", "duration: unknown unit 'M' (expected ns, us, ms, s, m, h or d) in '10M'"},
      {"30m1h",
       "duration: unit 'h' repeated or out of order (write larger units first) in '30m1h'"},
      {"1h1h", "duration: unit 'h' repeated or out of order (write larger units first) in '1h1h'"},
      {"1.s", "duration: a decimal point needs digits on both sides in '1.s'"},
      {"h", "duration: expected a number in 'h'"},
      {"1 h", "duration: missing unit (one of ns, us, ms, s, m, h, d) in '1 h'"},
      {"0.5ns", "duration: value is finer than 1ns in '0.5ns'"},
      {"PT0.0000000001S", "duration: value is finer than 1ns in 'PT0.0000000001S'"},
      {"106752d", "duration: value overflows the maximum duration (about 292 years) in '106752d'"},
      {"9223372036854775808ns",
       "duration: value overflows the maximum duration (about 292 years) in "
       "'9223372036854775808ns'"},
      {"106751d23h47m16s854ms775us808ns",
       "duration: value overflows the maximum duration (about 292 years) in "
       "'106751d23h47m16s854ms775us808ns'"},
      {"P1Y", "duration: years (Y) have no fixed length; use days (D) in 'P1Y'"},
      {"P1M", "duration: months (M before T) have no fixed length; use days (D) in 'P1M'"},
      {"P1W2D", "duration: weeks (W) cannot be combined with other components in 'P1W2D'"},
      {"P1DT1H1W",
       "duration: unexpected designator 'W' after T (expected H, M or S) in 'P1DT1H1W'"},
      {"P", "duration: 'P' must be followed by at least one component in 'P'"},
      {"PT", "duration: 'T' must be followed by at least one component in 'PT'"},
      {"P1H", "duration: unexpected designator 'H' (expected D, W or T) in 'P1H'"},
      {"PT1D", "duration: unexpected designator 'D' after T (expected H, M or S) in 'PT1D'"},
      {"PT1M1H", "duration: components repeated or out of order in 'PT1M1H'"},
      {"PT1.5M30S", "duration: only the last component may have a fraction in 'PT1.5M30S'"},
      {"PT5", "duration: number without a designator at the end in 'PT5'"},
      {"pt5m", "duration: ISO 8601 durations start with an uppercase 'P' in 'pt5m'"},
  };
  for (const Refused& c : cases) {
    EXPECT_EQ(ErrorOf(ParseDuration(c.text)), c.message) << c.text;
  }
}

TEST(Duration_3_1, FormatsTheShortForm) {
  EXPECT_EQ(FormatDuration(0s), "0s");
  EXPECT_EQ(FormatDuration(90min), "1h30m");
  EXPECT_EQ(FormatDuration(500ms), "500ms");
  EXPECT_EQ(FormatDuration(1500ms), "1s500ms");
  EXPECT_EQ(FormatDuration(26h), "1d2h");
  EXPECT_EQ(FormatDuration(1ns), "1ns");
  EXPECT_EQ(FormatDuration(48h + 1s), "2d1s");
  EXPECT_EQ(FormatDuration(kMax), "106751d23h47m16s854ms775us807ns");
  EXPECT_EQ(FormatDuration(-90min), "-1h30m");
  EXPECT_EQ(FormatDuration(kMin), "-106751d23h47m16s854ms775us808ns");
}

TEST(Duration_3_1, FormatParsesBackToTheSameValue) {
  // A spread of values: powers of 7 plus the unit boundaries around them.
  int64_t v = 1;
  for (int i = 0; i < 22; ++i, v *= 7) {
    for (int64_t scale : {int64_t{1}, int64_t{1000}, int64_t{60'000'000'000}}) {
      int64_t base = 0;
      if (__builtin_mul_overflow(v, scale, &base)) continue;
      for (int64_t d : {base - 1, base, base + 1}) {
        const Duration dur(d);
        Result<Duration> back = ParseDuration(FormatDuration(dur));
        ASSERT_TRUE(back.ok()) << FormatDuration(dur) << ": " << back.status().ToString();
        EXPECT_EQ(back->count(), d) << FormatDuration(dur);
      }
    }
  }
}

}  // namespace
}  // namespace ax
