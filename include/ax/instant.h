// File: ax/instant.h
//
// Instants as users write them (SPEC 3.2): RFC 3339 timestamps with `Z` or a
// numeric offset, optionally with fractional seconds down to nanoseconds.
//
// Example:
//   ax::Result<ax::Instant> t = ax::ParseInstant("2026-12-24T18:00:00+01:00");
//   if (t.ok()) std::cout << ax::FormatInstant(*t);  // "2026-12-24T17:00:00Z"
#pragma once

#include <string>
#include <string_view>

#include "ax/status.h"
#include "ax/time.h"

namespace ax {

// ParseInstant()
//
// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`. Per RFC 3339 the
// `T` and `Z` may be lowercase and the `T` may be a single space; `-00:00`
// means UTC. The fraction has 1 to 9 digits.
//
// Errors (kInvalidArgument, message starting "instant: "): syntax errors that
// name what was expected, fields out of range ("instant: month 13 is out of
// range 1-12", "instant: day 30 is out of range 1-29 for 2028-02"), a leap
// second (:60, which Unix time cannot represent), and instants outside the
// int64-nanosecond range (1677-09-21T00:12:43.145224192Z to
// 2262-04-11T23:47:16.854775807Z).
Result<Instant> ParseInstant(std::string_view text);

// FormatInstant()
//
// `t` in UTC as RFC 3339 with `Z`: "2026-03-08T10:00:00Z", with a fraction only
// when non-zero and without trailing zeros ("2026-03-08T10:00:00.5Z").
// ParseInstant(FormatInstant(t)) == t for every t.
std::string FormatInstant(Instant t);

// FormatInstantSeconds()
//
// `t` in UTC to whole seconds (the fraction is truncated toward the past):
// "2026-03-08T10:00:00Z". The format of `ax cron next` (SPEC 3.6).
std::string FormatInstantSeconds(Instant t);

}  // namespace ax
