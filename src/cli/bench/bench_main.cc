// ax_bench_standalone: `ax bench` as its own program, for running the
// workloads before (or without) the `ax` binary.
//   ax_bench_standalone W1|W2|W3|W4 [--n N] [--threads T] [--background B]
//                       [--duration S] [--timeout S] [--timer-slack-ms MS]
//                       [--hand-ahead-ms MS] [--worker-slice-us US] [--probe]
//                       [--pin-workers]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/bench/workloads.h"

int main(int argc, char** argv) {
  auto usage = [&] {
    std::fprintf(stderr,
                 "usage: %s W1|W2|W3|W4 [--n N] [--threads T] [--background B] "
                 "[--duration S] [--timeout S] [--timer-slack-ms MS] [--hand-ahead-ms MS] "
                 "[--worker-slice-us US] [--probe] [--pin-workers]\n",
                 argv[0]);
    return 2;
  };
  if (argc < 2) return usage();
  ax::cli::BenchArgs a;
  a.workload = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--probe") {
      a.probe = true;
      continue;
    }
    if (k == "--pin-workers") {
      a.pin_workers = true;
      continue;
    }
    if (i + 1 >= argc) return usage();
    const char* v = argv[++i];
    if (k == "--n") {
      a.n = std::atol(v);
    } else if (k == "--threads") {
      a.threads = std::atoi(v);
    } else if (k == "--background") {
      a.background = std::atol(v);
    } else if (k == "--duration") {
      a.duration_s = std::atof(v);
    } else if (k == "--timeout") {
      a.timeout_s = std::atof(v);
    } else if (k == "--timer-slack-ms") {
      a.timer_slack_ms = std::atof(v);
    } else if (k == "--hand-ahead-ms") {
      a.hand_ahead_ms = std::atof(v);
    } else if (k == "--worker-slice-us") {
      a.worker_slice_us = std::atof(v);
    } else {
      return usage();
    }
  }
  return ax::cli::BenchCommand(a);
}
