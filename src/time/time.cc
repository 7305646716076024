#include "ax/time.h"

namespace ax {

std::optional<Instant> AddDuration(Instant t, Duration d) {
  int64_t out = 0;
  if (__builtin_add_overflow(ToUnixNanos(t), d.count(), &out)) return std::nullopt;
  return FromUnixNanos(out);
}

std::optional<Duration> AddDurations(Duration a, Duration b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a.count(), b.count(), &out)) return std::nullopt;
  return Duration(out);
}

std::optional<Duration> MulDuration(Duration d, int64_t k) {
  int64_t out = 0;
  if (__builtin_mul_overflow(d.count(), k, &out)) return std::nullopt;
  return Duration(out);
}

}  // namespace ax
