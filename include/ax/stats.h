// File: ax/stats.h
//
// `Scheduler::GetStats()` (SPEC 2.10): gauges, totals and a lateness
// histogram (start of a run minus its scheduled instant). A plain run's
// start is read with Clock::NowApprox, within a few microseconds of Now().
#pragma once

#include <array>
#include <cstdint>

#include "ax/time.h"

namespace ax {

// Log-spaced buckets: bucket i counts lateness < kBoundsNs[i]; the last
// bucket is everything above.
struct LatenessHistogram {
  static constexpr std::array<int64_t, 20> kBoundsNs = {
      1'000,      2'000,       5'000,       10'000,      20'000,        50'000,        100'000,
      200'000,    500'000,     1'000'000,   2'000'000,   5'000'000,     10'000'000,    20'000'000,
      50'000'000, 100'000'000, 200'000'000, 500'000'000, 1'000'000'000, 10'000'000'000};
  std::array<uint64_t, kBoundsNs.size() + 1> counts{};
  uint64_t count = 0;
  int64_t sum_ns = 0;
  int64_t max_ns = 0;

  void Record(int64_t lateness_ns);
  // Adds another histogram's runs (the engine's workers each keep one).
  void Add(const LatenessHistogram& other);
  // Upper bound of the bucket holding quantile q (0..1), in ns; max_ns for
  // the overflow bucket; 0 when empty.
  int64_t QuantileUpperBoundNs(double q) const;
};

struct Stats {
  // Gauges.
  uint64_t pending = 0;  // Waiting jobs (incl. those waiting for a parent)
  uint64_t running = 0;  // jobs Running (runs on workers now: busy_workers)
  uint64_t paused = 0;
  uint64_t queue_depth = 0;  // runs handed to the pool, not yet started
  uint64_t busy_workers = 0;
  uint64_t workers = 0;
  // Totals since start.
  uint64_t fired = 0;  // runs handed to workers
  uint64_t succeeded = 0;
  uint64_t failed = 0;  // failed attempts
  uint64_t retried = 0;
  uint64_t dead = 0;
  uint64_t skipped = 0;
  uint64_t cancelled = 0;
  uint64_t timed_out = 0;
  uint64_t wakeups = 0;  // scheduler thread wake-ups
  // Jobs handed ahead of their deadline (SchedulerOptions::hand_ahead), and
  // runs a worker started after sleeping until their deadline itself.
  uint64_t handed_ahead = 0;
  uint64_t started_ahead = 0;
  // Runs a worker fired itself in a storm (more jobs due at once than the
  // scheduler thread takes in one pass).
  uint64_t fired_by_workers = 0;
  LatenessHistogram lateness;
};

}  // namespace ax
