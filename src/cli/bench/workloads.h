// `ax bench W1|W2|W3|W4|idle`: ax on the workloads of shared/bench/WORKLOADS.md,
// measured by the same rules as the peers under shared/peers/ (seed 42
// mt19937_64, inputs generated before timing and before the RSS baseline,
// nearest-rank percentiles), printing one JSON object per line on stdout
// with "system": "ax".
//
// Example:
//   ax::cli::BenchArgs a;
//   a.workload = "W2";
//   return ax::cli::BenchCommand(a);  // prints one line, then _exit()s
#pragma once

#include <string>

namespace ax::cli {

struct BenchArgs {
  // "W1" | "W2" | "W3" | "W4" | "idle" (n far-future jobs, then
  // duration_s of idling: process CPU and scheduler wake-ups).
  std::string workload;
  // Timers (W1-W3) or periodic tasks (W4). -1: the workload's default
  // (W1, W2: 1,000,000; W3: 200,000; W4: 20,000).
  long n = -1;
  // ax worker threads. <= 0: the number of cores.
  int threads = -1;
  // W3: far-future timers scheduled first. -1: 1,000,000.
  long background = -1;
  // W4: how long the mutator runs, in seconds. <= 0: 10.
  double duration_s = -1;
  // W2, W3: how long past the last deadline to wait for fires before giving
  // up and reporting what fired (an "error" key).
  double timeout_s = 180;
  // SchedulerOptions::timer_slack, in milliseconds. 0: exact (the default).
  double timer_slack_ms = 0;
  // SchedulerOptions::hand_ahead, in milliseconds. < 0: the engine's default.
  double hand_ahead_ms = -1;
  // SchedulerOptions::pin_workers.
  bool pin_workers = false;
  // SchedulerOptions::worker_slice, in microseconds. < 0: the engine's default.
  double worker_slice_us = -1;
  // W2: a second thread makes one call pair (After an hour, then Cancel)
  // every 100 µs from the deadline until the drain ends, and reports how long
  // the calls took (probe_* keys): whether the scheduler keeps answering
  // during the storm. Off by default, as the probe's thread competes for the
  // cores with the drain.
  bool probe = false;
};

// BenchCommand()
//
// Runs one workload and prints its JSON line on stdout. On a completed run it
// does not return: like the peers it flushes stdout and calls _exit() (exit
// status 0, or 1 when the line carries an "error" key), because tearing down
// 10^6 jobs is not part of the measurement. Returns 2, after a message on
// stderr, when `args` are invalid (unknown workload, n < 1, ...).
int BenchCommand(const BenchArgs& args);

}  // namespace ax::cli
