// File: ax/duration.h
//
// Durations as users write them (SPEC 3.1): ISO-8601 (`PT15M`, `P1DT2H`,
// `PT0.5S`, `P2W`) or the short form (`500ms`, `10s`, `1.5s`, `1h30m`, `2d`).
// A day is always 24 hours: a duration is elapsed time, not a calendar step.
//
// Example:
//   ax::Result<ax::Duration> d = ax::ParseDuration("1h30m");
//   if (d.ok()) std::cout << ax::FormatDuration(*d);  // "1h30m"
#pragma once

#include <string>
#include <string_view>

#include "ax/status.h"
#include "ax/time.h"

namespace ax {

// ParseDuration()
//
// Parses a non-negative duration with nanosecond resolution.
//
// Short form: one or more `<number>[.<fraction>]<unit>` terms, units strictly
// in decreasing size and each at most once: `ns us ms s m h d` (`1h30m`,
// `1.5s`, `2d12h`). A bare `0` is accepted as zero.
//
// ISO-8601 form: `P[nD][T[nH][nM][nS]]` or `PnW` (1 W = 7 D = 168 H). Only the
// last component may carry a fraction (`.` or `,`). Years (`Y`) and months
// (`M` before `T`) are refused because their length depends on the calendar;
// a week count mixed with other components (`P1W2D`) is refused as ISO 8601
// allows weeks only alone.
//
// Errors (all kInvalidArgument, message starting "duration: "): empty text,
// a sign (durations are never negative), unknown or repeated units, units out
// of order, a fraction finer than 1 ns, or a value above the int64-nanosecond
// range (about 292 years).
Result<Duration> ParseDuration(std::string_view text);

// FormatDuration()
//
// The short form of `d`: each non-zero unit from days down to nanoseconds,
// e.g. "1d2h", "1h30m", "1s500ms", "500ms"; zero is "0s". For d >= 0 the result
// parses back to exactly `d`. A negative d is rendered with a leading '-'
// (which ParseDuration refuses).
std::string FormatDuration(Duration d);

}  // namespace ax
