// File: ax/time.h
//
// Time in ax (SPEC 2.1): an instant is int64 nanoseconds since the Unix epoch
// (UTC) and a duration is int64 nanoseconds. Jobs store absolute instants
// only; time zones matter only where a calendar is evaluated (ax/cron.h).
//
// Example:
//   ax::Instant t = ax::FromUnixNanos(1'700'000'000'000'000'000);
//   std::optional<ax::Instant> later = ax::AddDuration(t, std::chrono::minutes(30));
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace ax {

using Duration = std::chrono::nanoseconds;
using Instant = std::chrono::sys_time<std::chrono::nanoseconds>;

inline constexpr Instant FromUnixNanos(int64_t ns) { return Instant(Duration(ns)); }
inline constexpr int64_t ToUnixNanos(Instant t) { return t.time_since_epoch().count(); }

// The largest and smallest representable instants.
inline constexpr Instant kInstantMax = Instant::max();
inline constexpr Instant kInstantMin = Instant::min();

// t + d, or nullopt when the sum does not fit in int64 nanoseconds.
inline std::optional<Instant> AddDuration(Instant t, Duration d) {
  int64_t out = 0;
  if (__builtin_add_overflow(ToUnixNanos(t), d.count(), &out)) return std::nullopt;
  return FromUnixNanos(out);
}
// a + b, or nullopt on overflow.
inline std::optional<Duration> AddDurations(Duration a, Duration b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a.count(), b.count(), &out)) return std::nullopt;
  return Duration(out);
}
// d * k, or nullopt on overflow.
inline std::optional<Duration> MulDuration(Duration d, int64_t k) {
  int64_t out = 0;
  if (__builtin_mul_overflow(d.count(), k, &out)) return std::nullopt;
  return Duration(out);
}

}  // namespace ax
