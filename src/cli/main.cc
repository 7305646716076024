// The `ax` binary: the engine's demo, calendars, benchmarks, the daemon and
// its client, as subcommands.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/cron_next.h"
#include "cli/demo.h"
#ifdef AX_HAVE_SERVER
#include "cli/client.h"
#include "server/serve.h"
#endif
#ifdef AX_HAVE_BENCH
#include "cli/bench/workloads.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"ax: run any function at a future time — once, every interval, or on a cron "
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
  next->add_option("--count", count, "How many instants")->check(CLI::Range(1, 100000))
      ->capture_default_str();
  next->callback([&] {
    std::exit(ax::cli::CronNextCommand(expr, tz, from, count, std::cout, std::cerr));
  });

#ifdef AX_HAVE_SERVER
  ax::server::AddServeCommand(app);
  ax::cli::AddClientCommands(app);
#endif
#ifdef AX_HAVE_BENCH
  ax::cli::AddBenchCommand(app);
#endif
  CLI11_PARSE(app, argc, argv);
  return 0;
}
