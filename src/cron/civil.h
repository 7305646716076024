// Proleptic-Gregorian civil-date arithmetic on int64 day and second counts
// (the algorithms of H. Hinnant, "chrono-Compatible Low-Level Date
// Algorithms"). "Local seconds" are seconds since 1970-01-01T00:00:00 of a
// wall clock, i.e. a civil time encoded as if it were UTC.
#pragma once

#include <cstdint>

namespace ax::internal {

inline constexpr int64_t kSecondsPerDay = 86400;

constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}
constexpr int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

constexpr bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

constexpr int DaysInMonth(int64_t y, int m) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of y-m-d. REQUIRES: 1 <= m <= 12, |y| < 2^40.
constexpr int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;                                    // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  int64_t year;
  int month;  // 1-12
  int day;    // 1-31
};

constexpr CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2), m, d};
}

// 0 = Sunday ... 6 = Saturday. 1970-01-01 was a Thursday.
constexpr int WeekdayFromDays(int64_t z) { return static_cast<int>(FloorMod(z + 4, 7)); }

// A civil second split into its fields.
struct CivilSecond {
  int64_t year;
  int month, day, hour, minute, second;
};

constexpr CivilSecond SplitLocalSeconds(int64_t local) {
  const int64_t days = FloorDiv(local, kSecondsPerDay);
  const int64_t sod = local - days * kSecondsPerDay;
  const CivilDate date = CivilFromDays(days);
  return {date.year,
          date.month,
          date.day,
          static_cast<int>(sod / 3600),
          static_cast<int>(sod / 60 % 60),
          static_cast<int>(sod % 60)};
}

constexpr int64_t JoinLocalSeconds(const CivilSecond& c) {
  return DaysFromCivil(c.year, c.month, c.day) * kSecondsPerDay + int64_t{c.hour} * 3600 +
         int64_t{c.minute} * 60 + c.second;
}

}  // namespace ax::internal
