#include "ax/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ax {

Status RetryPolicy::Validate() const {
  if (max_attempts < 1) {
    return Status::InvalidArgument("retry.max_attempts: must be at least 1, got " +
                                   std::to_string(max_attempts));
  }
  if (base.count() < 0) return Status::InvalidArgument("retry.base: must not be negative");
  if (cap.count() < 0) return Status::InvalidArgument("retry.cap: must not be negative");
  return Status();
}

Duration RetryPolicy::DelayAfter(int attempt, double unit) const {
  const int n = std::max(attempt, 1);
  // Saturating arithmetic: the cap bounds every result.
  const double b = static_cast<double>(base.count());
  double wait = b;
  switch (backoff) {
    case Backoff::kFixed:
      wait = b;
      break;
    case Backoff::kLinear:
      wait = b * n;
      break;
    case Backoff::kExponential:
      wait = b * std::pow(2.0, std::min(n - 1, 1000));
      break;
  }
  wait = std::min(wait, static_cast<double>(cap.count()));
  if (jitter) wait = wait / 2 + wait / 2 * std::clamp(unit, 0.0, 1.0);
  // 2^63 and more (a cap of Duration::max() is 2^63 as a double) do not
  // convert back: the longest duration there is.
  if (wait >= 9.2e18) return Duration::max();
  return Duration(static_cast<int64_t>(wait));
}

}  // namespace ax
