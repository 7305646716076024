// Access to IANA time zones from the system's tzdata, through abseil's CCTZ
// (which, unlike date/tz 3.0.1 on the OS database, applies a zone's POSIX
// rule to instants after the last listed transition, i.e. past 2037).
#pragma once

#include <cstdint>
#include <string_view>

#include <absl/time/time.h>

#include "ax/status.h"

namespace ax::internal {

// A stretch of time with one UTC offset: [begin, end) in Unix seconds.
struct ZoneSegment {
  int64_t begin;        // INT64_MIN when there is no earlier transition
  int64_t end;          // INT64_MAX when there is no later transition
  int32_t offset;       // seconds east of UTC in this segment
  int32_t prev_offset;  // offset just before `begin` (== offset when none)
};

// A loaded zone. A cheap copyable handle; thread-safe.
class Zone {
 public:
  // Loads `name` ("UTC", "Europe/Berlin"). Errors: "tz: unknown time zone
  // 'Mars/Base'" and "tz: 'x' is not an IANA time zone name".
  static Result<Zone> Load(std::string_view name);

  // The segment containing Unix second `t`. Without `with_begin`, `begin`
  // and `prev_offset` are left as if there were no earlier transition (saves
  // a lookup for callers that never look back).
  ZoneSegment SegmentAt(int64_t t, bool with_begin = true) const;

  // True for zones without transitions (UTC, Etc/GMT+5).
  bool fixed() const { return fixed_; }
  int32_t fixed_offset() const { return fixed_offset_; }

 private:
  absl::TimeZone tz_;
  bool fixed_ = false;
  int32_t fixed_offset_ = 0;
};

}  // namespace ax::internal
