#include "cron/time_zone.h"

#include <limits>
#include <string>

#include <absl/time/civil_time.h>

namespace ax::internal {
namespace {

// IANA names are ASCII path components of letters, digits and "-+_"; this
// also keeps file paths and "localtime" away from the loader.
bool IsZoneName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '/' || name.back() == '/') return false;
  size_t component_start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/') {
      const std::string_view comp = name.substr(component_start, i - component_start);
      if (comp.empty() || comp.front() == '.') return false;  // "", ".", ".." and hidden files
      // Files in tzdata that are not zones, at the top or under posix/ and right/.
      if (comp == "localtime" || comp == "posixrules" || comp == "Factory") return false;
      component_start = i + 1;
      continue;
    }
    const char c = name[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '+' || c == '.';
    if (!ok) return false;
  }
  return true;
}

int64_t LocalSeconds(absl::CivilSecond c) { return c - absl::CivilSecond(1970, 1, 1, 0, 0, 0); }

}  // namespace

Result<Zone> Zone::Load(std::string_view name) {
  if (!IsZoneName(name)) {
    return Status::InvalidArgument("tz: '" + std::string(name) +
                                   "' is not an IANA time zone name (e.g. Europe/Berlin)");
  }
  Zone z;
  if (!absl::LoadTimeZone(std::string(name), &z.tz_)) {
    return Status::InvalidArgument("tz: unknown time zone '" + std::string(name) + "'");
  }
  absl::TimeZone::CivilTransition tr;
  if (!z.tz_.NextTransition(absl::InfinitePast(), &tr)) {
    z.fixed_ = true;
    z.fixed_offset_ = z.tz_.At(absl::UnixEpoch()).offset;
  }
  return z;
}

ZoneSegment Zone::SegmentAt(int64_t t, bool with_begin) const {
  if (fixed_) {
    return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), fixed_offset_,
            fixed_offset_};
  }
  const absl::Time at = absl::FromUnixSeconds(t);
  ZoneSegment seg{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                  tz_.At(at).offset, 0};
  seg.prev_offset = seg.offset;
  absl::TimeZone::CivilTransition tr;
  // CCTZ reports transitions strictly after / before the given time, with
  // `from` the wall time in the old offset and `to` in the new one.
  if (tz_.NextTransition(at, &tr)) seg.end = LocalSeconds(tr.from) - seg.offset;
  if (with_begin && tz_.PrevTransition(at + absl::Seconds(1), &tr)) {
    seg.begin = LocalSeconds(tr.to) - seg.offset;
    seg.prev_offset = static_cast<int32_t>(LocalSeconds(tr.from) - seg.begin);
  }
  return seg;
}

}  // namespace ax::internal
