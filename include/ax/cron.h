// File: ax/cron.h
//
// Cron expressions evaluated in an IANA time zone (SPEC 3.3).
//
// A CronSchedule is parsed once and then answers "when is the first fire
// strictly after t?" in well under a microsecond. It supports 5 fields
// (minute hour day-of-month month day-of-week) or 6 with leading seconds;
// `*`, `?` (day fields only), values, names (JAN-DEC, SUN-SAT, any case),
// ranges, lists and steps (`*/5`, `1-30/7`, `5/15`); `L`, `LW` and `nW` in
// day-of-month; `nL` and `n#k` in day-of-week; the macros @yearly @annually
// @monthly @weekly @daily @midnight @hourly and `@every <duration>`.
//
// Day fields follow Vixie cron: a day field is unrestricted only when it is
// exactly `*` or `?`; when both are restricted a day matches if either does.
//
// Daylight-saving time follows Vixie cron (see docs/calendars.md):
//  * an *interval* expression (its seconds, minutes or hours field begins
//    with `*`) fires at every matching local time that exists: in both passes
//    of a repeated hour and never for a skipped local time;
//  * every other expression is *fixed-time*: matching local times skipped by
//    a gap fire once, at the first instant after the gap (several coalesce
//    into that one fire); a repeated local time fires once, at its first
//    occurrence.
//
// Example:
//   ax::Result<ax::CronSchedule> nightly =
//       ax::CronSchedule::Parse("0 2 * * *", "Asia/Shanghai");
//   if (!nightly.ok()) return nightly.status();
//   std::optional<ax::Instant> next = nightly->Next(now);  // 02:00 +08:00
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ax/status.h"
#include "ax/time.h"

namespace ax {

namespace internal {
struct CronProgram;
}  // namespace internal

// CronSchedule
//
// An immutable, parsed cron expression bound to a time zone. A cheap-to-copy
// value type (copies share the parsed program); concurrent use of const
// members from any number of threads is safe.
class CronSchedule {
 public:
  // CronSchedule::Parse()
  //
  // Parses `expr` for evaluation in the IANA zone `tz` (from the system's
  // tzdata). Surrounding white space is ignored; fields are separated by
  // white space (spaces, tabs or line breaks).
  //
  // Errors (kInvalidArgument) name the field and the reason, e.g.
  //   "day-of-week: 8 is out of range 0-7", "minute: step must be at least 1
  //   in '*/0'", "hour: range 5-1 is reversed", "day-of-week: bare 'L' is
  //   ambiguous; write nL (e.g. 5L = the last Friday)", "cron: expected 5
  //   fields (minute hour day-of-month month day-of-week) or 6 with a leading
  //   second, got 4", "day-of-month: '30' never matches a day of month '2',
  //   so the expression can never fire", "tz: unknown time zone 'Mars/Base'".
  static Result<CronSchedule> Parse(std::string_view expr, std::string_view tz = "UTC");

  // CronSchedule::Next()
  //
  // The first fire instant strictly after `after`, applying the DST rules
  // above. Fire instants of field expressions are whole seconds.
  //
  // For `@every d` the schedule is the grid anchored at the Unix epoch: Next
  // returns the smallest 1970-01-01T00:00:00Z + k*d (k an integer) strictly
  // after `after`, independent of the zone. (The engine runs @every jobs as
  // periodic jobs whose grid starts at submission; see every().)
  //
  // Returns nullopt only when the next fire would lie beyond the representable
  // range of Instant (year 2262); Parse refuses expressions that never fire.
  std::optional<Instant> Next(Instant after) const;

  // True for @every and for expressions whose seconds, minutes or hours field
  // begins with `*` (SPEC 3.3); they follow the interval DST rule.
  bool is_interval() const;

  // The period of an `@every <duration>` expression; nullopt otherwise.
  std::optional<Duration> every() const;

  // The expression and zone exactly as given to Parse (surrounding white
  // space removed from the expression).
  const std::string& expr() const;
  const std::string& tz() const;

 private:
  explicit CronSchedule(std::shared_ptr<const internal::CronProgram> program);

  std::shared_ptr<const internal::CronProgram> program_;  // never null
};

}  // namespace ax
