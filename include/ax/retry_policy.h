// File: ax/retry_policy.h
//
// How a failed run is retried (SPEC 2.6): at most `max_attempts` attempts in
// all (1 = no retry), waiting a backoff between them:
//   kFixed:       base
//   kLinear:      base * n          (n = the attempt that failed: 10s, 20s, 30s…)
//   kExponential: base * 2^(n-1)
// capped at `cap`. With `jitter`, the wait is drawn uniformly from
// [wait/2, wait], so jitter never lengthens the capped wait.
//
// Example (payment notify: 10 s, 20 s, 30 s):
//   ax::RetryPolicy r = ax::RetryPolicy::Linear(4, std::chrono::seconds(10));
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "ax/status.h"
#include "ax/time.h"

namespace ax {

enum class Backoff : uint8_t { kFixed, kLinear, kExponential };
std::string_view BackoffName(Backoff b);

struct RetryPolicy {
  int max_attempts = 1;
  Backoff backoff = Backoff::kFixed;
  Duration base = std::chrono::seconds(1);
  Duration cap = std::chrono::hours(1);
  bool jitter = false;

  static RetryPolicy None() { return {}; }
  static RetryPolicy Fixed(int attempts, Duration wait) {
    return {attempts, Backoff::kFixed, wait, wait, false};
  }
  static RetryPolicy Linear(int attempts, Duration base, Duration cap = std::chrono::hours(1)) {
    return {attempts, Backoff::kLinear, base, cap, false};
  }
  static RetryPolicy Exponential(int attempts, Duration base,
                                 Duration cap = std::chrono::hours(1)) {
    return {attempts, Backoff::kExponential, base, cap, false};
  }

  // OK, or InvalidArgument naming the bad field.
  Status Validate() const;
  // The wait after failed attempt `attempt` (1-based). `unit` in [0, 1) is
  // the random draw used when jitter is on.
  Duration DelayAfter(int attempt, double unit) const;
};

}  // namespace ax
