// The parsed fields of a cron expression as bit sets, and the per-month day
// table the next-fire calculator uses (SPEC 3.3).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "ax/status.h"

namespace ax::internal {

// The day masks of every month shape: [month_length - 28][first_weekday],
// bit d (1-31) set for each matching day.
using DayTable = std::array<std::array<uint32_t, 7>, 4>;

struct CronFields {
  uint64_t seconds = 0;  // bit s, 0-59
  uint64_t minutes = 0;  // bit m, 0-59
  uint32_t hours = 0;    // bit h, 0-23
  uint16_t months = 0;   // bit m, 1-12

  // Day-of-month. Unrestricted only when the field is exactly `*` or `?`.
  bool dom_any = false;
  uint32_t dom_days = 0;             // bit d, 1-31
  bool dom_last = false;             // L
  bool dom_last_weekday = false;     // LW
  uint32_t dom_nearest_weekday = 0;  // bit n for nW

  // Day-of-week (0 = Sunday; 7 is folded into 0).
  bool dow_any = false;
  uint8_t dow_days = 0;              // bit w
  uint8_t dow_last = 0;              // bit w for wL: the last w of the month
  std::array<uint8_t, 7> dow_nth{};  // dow_nth[w] bit k for w#k (k 1-5)

  // SPEC 3.3: the seconds, minutes or hours field begins with `*`.
  bool interval = false;

  // DayMask() of every month shape, filled by ParseCronFields.
  DayTable days{};
};

// White space between and around fields: ASCII space, tab and line breaks
// (an expression read from a file or a JSON string may end in "\n").
constexpr std::string_view kCronSpace = " \t\n\r\v\f";
inline bool IsCronSpace(char c) { return kCronSpace.find(c) != std::string_view::npos; }

// Parses the 5- or 6-field text `expr` (no macros). Errors name the field:
// "day-of-week: 8 is out of range 0-7"; expressions that can never fire are
// refused ("day-of-month: '30' never matches a day of month '2', ...").
Result<CronFields> ParseCronFields(std::string_view expr);

// Bit d (1-31) set for each day that matches the day fields in a month of
// `month_length` days (28-31) whose first day is weekday `first_weekday`
// (0 = Sunday), applying the Vixie OR rule.
uint32_t DayMask(const CronFields& f, int month_length, int first_weekday);

}  // namespace ax::internal
