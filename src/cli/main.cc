// The `ax` binary: the engine's demo, calendars, benchmarks, the daemon and
// its client, as subcommands.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/bench/workloads.h"
#include "cli/client.h"
#include "cli/cron_next.h"
#include "cli/demo.h"
#include "server/serve.h"

int main(int argc, char** argv) {
  CLI::App app{
      "ax: run any function at a future time — once, every interval, or on a cron "
      "calendar"};
  app.require_subcommand(1);

  double speed = 60;
  CLI::App* demo = app.add_subcommand("demo", "Run four example scenarios live until Ctrl-C");
  demo->add_option("--speed", speed, "How much faster than real time (60: a minute lasts 1 s)")
      ->check(CLI::Range(1.0, 100000.0));
  demo->callback([&] { std::exit(ax::cli::DemoCommand(speed)); });

  CLI::App* cron = app.add_subcommand("cron", "Cron expressions")->require_subcommand(1);
  std::string expr, tz = "UTC", from;
  int count = 5;
  CLI::App* next = cron->add_subcommand("next", "Print the next fire instants of an expression");
  next->add_option("expr", expr, "The cron expression, e.g. '0 2 * * *'")->required();
  next->add_option("--tz", tz, "IANA time zone the expression is read in")->capture_default_str();
  next->add_option("--from", from, "RFC 3339 instant to start after (default: now)");
  next->add_option("--count", count, "How many instants")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  next->callback(
      [&] { std::exit(ax::cli::CronNextCommand(expr, tz, from, count, std::cout, std::cerr)); });

  ax::server::AddServeCommand(app);
  ax::cli::AddClientCommands(app);

  ax::cli::BenchArgs bench_args;
  CLI::App* bench = app.add_subcommand(
      "bench", "Run a benchmark workload of bench/WORKLOADS.md; prints one JSON line");
  bench->add_option("workload", bench_args.workload, "W1, W2, W3, W4 or idle")
      ->required()
      ->check(CLI::IsMember({"W1", "W2", "W3", "W4", "idle"}));
  bench->add_option("--n", bench_args.n, "Timers (W1-W3, idle) or periodic tasks (W4)");
  bench->add_option("--threads", bench_args.threads, "Worker threads (default: cores)");
  bench->add_option("--background", bench_args.background, "W3: far-future timers first");
  bench->add_option("--duration", bench_args.duration_s,
                    "W4: seconds of mutation; idle: seconds of idling");
  bench->add_option("--timeout", bench_args.timeout_s, "Seconds to wait past the last deadline");
  bench->add_option("--timer-slack-ms", bench_args.timer_slack_ms,
                    "SchedulerOptions::timer_slack in ms (default 0: exact)");
  bench->add_option("--hand-ahead-ms", bench_args.hand_ahead_ms,
                    "SchedulerOptions::hand_ahead in ms (default: the engine's)");
  bench->add_flag("--probe", bench_args.probe, "W2: time calls made during the drain");
  bench->add_flag("--pin-workers", bench_args.pin_workers,
                  "SchedulerOptions::pin_workers: one CPU per worker");
  bench->add_option(
      "--worker-slice-us", bench_args.worker_slice_us,
      "SchedulerOptions::worker_slice in us (0: the kernel's; default: the engine's)");
  bench->callback([&] { std::exit(ax::cli::BenchCommand(bench_args)); });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
