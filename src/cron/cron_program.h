// The immutable state behind ax::CronSchedule and the next-fire calculator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ax/time.h"

#include "cron/cron_fields.h"
#include "cron/time_zone.h"

namespace ax::internal {

struct CronProgram {
  std::string expr;
  std::string tz;
  CronFields fields;              // unused when `every` is set
  Zone zone;                      // loaded once at Parse
  std::optional<Duration> every;  // @every <duration>
};

// The first local second >= `from_local` (a wall time encoded as seconds
// since 1970-01-01T00:00:00) whose fields match, ignoring time zones; nullopt
// when there is none before year kLastSearchYear.
inline constexpr int64_t kLastSearchYear = 2300;  // past Instant's range (2262)
std::optional<int64_t> NextLocalMatch(const CronFields& f, int64_t from_local);

// CronSchedule::Next: see ax/cron.h.
std::optional<Instant> NextFire(const CronProgram& p, Instant after);

}  // namespace ax::internal
