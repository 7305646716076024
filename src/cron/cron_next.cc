// The next-fire calculator (SPEC 3.3).
//
// Civil matching jumps field by field (month, day, hour, minute, second) over
// bit sets, so finding the next matching wall time costs a handful of
// count-trailing-zeros operations rather than a minute-by-minute scan.
//
// Time zones are handled segment by segment: a segment is a stretch of time
// with one UTC offset, so within it wall time and instants map one to one.
// For a segment [begin, end) with offset o that follows a segment with offset
// p, the wall times reached before `begin` end at the "high water" mark
// begin + p:
//  * p < o (spring forward): wall times [begin + p, begin + o) never occur.
//    Fixed-time expressions that match one of them fire once at `begin`;
//    interval expressions skip them.
//  * p > o (fall back): wall times [begin + o, begin + p) occur a second time.
//    Interval expressions fire again; fixed-time expressions do not (their
//    search starts at the high-water mark).
// Only the previous segment is consulted for the high-water mark; no real zone
// has two backward transitions within one overlap.
#include <algorithm>
#include <limits>

#include "cron/civil.h"
#include "cron/cron_program.h"

namespace ax::internal {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;
// Each step of NextFire moves to a later segment; zones have at most a few
// transitions a year, so this bounds a search across the whole Instant range.
constexpr int kMaxSegments = 10'000;

// The lowest set bit of `mask` at position >= from, or -1.
inline int NextBit(uint64_t mask, int from) {
  if (from >= 64) return -1;
  const uint64_t m = mask & (~uint64_t{0} << from);
  return m != 0 ? __builtin_ctzll(m) : -1;
}

std::optional<Instant> FromUnixSeconds(int64_t secs) {
  int64_t ns = 0;
  if (__builtin_mul_overflow(secs, kNanosPerSecond, &ns)) return std::nullopt;
  return FromUnixNanos(ns);
}

// The smallest epoch + k*period strictly after `after`, if the range has one
// (with a 1 ns period, `after` = the last instant has none).
std::optional<Instant> NextOnGrid(Instant after, Duration period) {
  int64_t k = 0;
  int64_t ns = 0;
  if (__builtin_add_overflow(FloorDiv(ToUnixNanos(after), period.count()), 1, &k) ||
      __builtin_mul_overflow(k, period.count(), &ns)) {
    return std::nullopt;
  }
  return FromUnixNanos(ns);
}

}  // namespace

std::optional<int64_t> NextLocalMatch(const CronFields& f, int64_t from_local) {
  const CivilSecond c = SplitLocalSeconds(from_local);
  int64_t y = c.year;
  int mo = c.month, d = c.day, h = c.hour, mi = c.minute, s = c.second;
  while (y <= kLastSearchYear) {
    const int next_month = NextBit(f.months, mo);
    if (next_month < 0) {
      ++y, mo = 1, d = 1, h = 0, mi = 0, s = 0;
      continue;
    }
    if (next_month != mo) mo = next_month, d = 1, h = 0, mi = 0, s = 0;
    const int len = DaysInMonth(y, mo);
    const int first_weekday = WeekdayFromDays(DaysFromCivil(y, mo, 1));
    const int next_day = NextBit(f.days[len - 28][first_weekday], d);
    if (next_day < 0) {
      ++mo, d = 1, h = 0, mi = 0, s = 0;
      if (mo > 12) ++y, mo = 1;
      continue;
    }
    if (next_day != d) d = next_day, h = 0, mi = 0, s = 0;
    // Within the chosen day, hours/minutes/seconds only roll forward; a
    // roll-over past the day's end re-enters the loop at day d + 1.
    const int next_hour = NextBit(f.hours, h);
    if (next_hour < 0) {
      ++d, h = 0, mi = 0, s = 0;
      continue;
    }
    if (next_hour != h) h = next_hour, mi = 0, s = 0;
    const int next_minute = NextBit(f.minutes, mi);
    if (next_minute < 0) {
      ++h, mi = 0, s = 0;
      continue;
    }
    if (next_minute != mi) mi = next_minute, s = 0;
    const int next_second = NextBit(f.seconds, s);
    if (next_second < 0) {
      ++mi, s = 0;
      continue;
    }
    return JoinLocalSeconds({y, mo, d, h, mi, next_second});
  }
  return std::nullopt;
}

std::optional<Instant> NextFire(const CronProgram& p, Instant after) {
  if (p.every) return NextOnGrid(after, *p.every);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const bool fixed_time = !p.fields.interval;
  // Fires are whole seconds: the first candidate is the next whole second.
  int64_t t = FloorDiv(ToUnixNanos(after), kNanosPerSecond) + 1;
  for (int step = 0; step < kMaxSegments; ++step) {
    const ZoneSegment seg = p.zone.SegmentAt(t, /*with_begin=*/fixed_time);
    int64_t from_local = t + seg.offset;
    if (fixed_time && seg.begin != kMin) {
      const int64_t high_water = seg.begin + seg.prev_offset;
      const int64_t local_begin = seg.begin + seg.offset;
      if (t == seg.begin && high_water < local_begin) {
        const std::optional<int64_t> skipped = NextLocalMatch(p.fields, high_water);
        if (skipped && *skipped < local_begin) return FromUnixSeconds(seg.begin);
      }
      from_local = std::max(from_local, high_water);
    }
    const std::optional<int64_t> match = NextLocalMatch(p.fields, from_local);
    if (!match) return std::nullopt;
    if (seg.end == kMax || *match < seg.end + seg.offset) {
      return FromUnixSeconds(*match - seg.offset);
    }
    t = seg.end;
  }
  return std::nullopt;
}

}  // namespace ax::internal
