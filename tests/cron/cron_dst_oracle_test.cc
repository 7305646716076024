// SPEC 3.3 DST rules, cross-checked against an independent oracle: glibc's
// localtime_r (its own TZif reader, footer rules included) stepped minute by
// minute around every transition of several zones and years. The oracle
// states the SPEC rules directly:
//  * interval: fire at each minute whose wall time matches;
//  * fixed-time: fire at a minute whose wall time matches and was never shown
//    before (above the high-water mark), or at the first minute after a jump
//    forward when a skipped wall time matched.
#include <cstdlib>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ax/cron.h"

namespace ax {
namespace {

constexpr int64_t kDay = 86400;

struct Wall {
  int hour;
  int minute;
};
using Predicate = std::function<bool(Wall)>;

struct Expr {
  const char* text;
  bool interval;
  Predicate match;
};

// Sets TZ for the process (glibc) and restores it afterwards.
class ScopedTz {
 public:
  explicit ScopedTz(const char* zone) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ScopedTz() {
    if (old_) {
      setenv("TZ", old_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> old_;
};

int64_t OffsetAt(int64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm.tm_gmtoff;
}

Wall WallOf(int64_t local_seconds) {
  const time_t t = static_cast<time_t>(local_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return {tm.tm_hour, tm.tm_min};
}

// Oracle fires in (from, to], minute granularity, starting its high-water
// mark at `warmup` < from.
std::vector<int64_t> OracleFires(const Expr& e, int64_t warmup, int64_t from, int64_t to) {
  std::vector<int64_t> fires;
  int64_t prev_local = warmup + OffsetAt(warmup);
  int64_t high_water = prev_local;
  for (int64_t u = warmup + 60; u <= to; u += 60) {
    const int64_t local = u + OffsetAt(u);
    bool fire = false;
    if (e.interval) {
      fire = e.match(WallOf(local));
    } else {
      fire = local > high_water && e.match(WallOf(local));
      for (int64_t m = std::max(prev_local, high_water) + 60; !fire && m < local; m += 60) {
        fire = e.match(WallOf(m));  // skipped by a jump forward
      }
    }
    if (fire && u > from) fires.push_back(u);
    high_water = std::max(high_water, local);
    prev_local = local;
  }
  return fires;
}

std::vector<int64_t> OurFires(const CronSchedule& s, int64_t from, int64_t to) {
  std::vector<int64_t> fires;
  Instant t = FromUnixNanos(from * 1'000'000'000);
  while (true) {
    std::optional<Instant> next = s.Next(t);
    if (!next || ToUnixNanos(*next) > to * 1'000'000'000) break;
    fires.push_back(ToUnixNanos(*next) / 1'000'000'000);
    t = *next;
  }
  return fires;
}

// Transition instants (to the hour, then the minute) in [begin, end).
std::vector<int64_t> Transitions(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t t = begin; t < end; t += 3600) {
    if (OffsetAt(t) == OffsetAt(t + 3600)) continue;
    int64_t u = t;
    while (OffsetAt(u + 60) == OffsetAt(t)) u += 60;
    out.push_back(u + 60);
  }
  return out;
}

const std::vector<Expr>& Expressions() {
  static const std::vector<Expr> kExprs = {
      {"*/15 * * * *", true, [](Wall w) { return w.minute % 15 == 0; }},
      {"0 * * * *", true, [](Wall w) { return w.minute == 0; }},
      {"15,45 * * * *", true, [](Wall w) { return w.minute == 15 || w.minute == 45; }},
      {"*/30 1-3 * * *", true,
       [](Wall w) { return w.minute % 30 == 0 && w.hour >= 1 && w.hour <= 3; }},
      {"* 2 * * *", true, [](Wall w) { return w.hour == 2; }},
      {"30 2 * * *", false, [](Wall w) { return w.hour == 2 && w.minute == 30; }},
      {"0,30 1,2 * * *", false,
       [](Wall w) { return (w.hour == 1 || w.hour == 2) && w.minute % 30 == 0; }},
      {"45 1 * * *", false, [](Wall w) { return w.hour == 1 && w.minute == 45; }},
      {"0 0 * * *", false, [](Wall w) { return w.hour == 0 && w.minute == 0; }},
      {"30 23 * * *", false, [](Wall w) { return w.hour == 23 && w.minute == 30; }},
      {"0 12 * * *", false, [](Wall w) { return w.hour == 12 && w.minute == 0; }},
      {"0 2-3 * * *", false, [](Wall w) { return w.minute == 0 && (w.hour == 2 || w.hour == 3); }},
  };
  return kExprs;
}

struct ZoneYears {
  const char* zone;
  int64_t begin;  // Unix seconds
  int64_t end;
};

TEST(Cron_3_3, DstRulesMatchAGlibcOracleAroundEveryTransition) {
  const ZoneYears cases[] = {
      {"America/New_York", 1767225600, 1830297600},     // 2026-2027
      {"America/New_York", 2208988800, 2240611200},     // 2040
      {"Europe/Berlin", 1767225600, 1830297600},        // 2026-2027
      {"Europe/Dublin", 1767225600, 1798761600},        // 2026 (negative DST in tzdata)
      {"Australia/Lord_Howe", 1767225600, 1830297600},  // 2026-2027
      {"Australia/Lord_Howe", 2208988800, 2240611200},  // 2040
      {"America/Sao_Paulo", 1514764800, 1577836800},    // 2018-2019 (midnight DST)
      {"Pacific/Chatham", 1767225600, 1798761600},      // 2026 (+12:45 / +13:45)
      {"Pacific/Apia", 1293840000, 1325376000},         // 2011 (skipped 30 December)
  };
  int windows = 0;
  for (const ZoneYears& z : cases) {
    ScopedTz tz(z.zone);
    for (int64_t transition : Transitions(z.begin, z.end)) {
      ++windows;
      const int64_t warmup = transition - 3 * kDay;
      const int64_t from = transition - 2 * kDay;
      const int64_t to = transition + 2 * kDay;
      for (const Expr& e : Expressions()) {
        Result<CronSchedule> s = CronSchedule::Parse(e.text, z.zone);
        ASSERT_TRUE(s.ok()) << s.status().ToString();
        ASSERT_EQ(s->is_interval(), e.interval) << e.text;
        EXPECT_EQ(OurFires(*s, from, to), OracleFires(e, warmup, from, to))
            << "'" << e.text << "' in " << z.zone << " around transition " << transition;
      }
    }
  }
  EXPECT_GE(windows, 20);
}

}  // namespace
}  // namespace ax
