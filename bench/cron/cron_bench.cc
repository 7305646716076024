// Parse and next-fire cost of cron expressions, durations and instants, per
// expression class. Next() is measured chained (t = Next(t)), as the engine
// uses it, restarting from the same instant when the chain reaches 2100.
#include <string>

#include <benchmark/benchmark.h>

#include "ax/cron.h"
#include "ax/duration.h"
#include "ax/instant.h"

namespace {

struct Class {
  const char* name;
  const char* expr;
  const char* tz;
};

// Index order is the benchmark argument.
constexpr Class kClasses[] = {
    {"interval */15 UTC", "*/15 * * * *", "UTC"},
    {"interval */15 New_York", "*/15 * * * *", "America/New_York"},
    {"interval */15 Lord_Howe", "*/15 * * * *", "Australia/Lord_Howe"},
    {"fixed 0 2 * * * Shanghai", "0 2 * * *", "Asia/Shanghai"},
    {"fixed 30 2 * * * New_York", "30 2 * * *", "America/New_York"},
    {"fixed 30 2 * * * Berlin", "30 2 * * *", "Europe/Berlin"},
    {"seconds */10 * * * * * UTC", "*/10 * * * * *", "UTC"},
    {"lists 0 9-17/2 1,15,L * MON-FRI", "0 9-17/2 1,15,L * MON-FRI", "Europe/Berlin"},
    {"weekday forms 0 0 LW * 5#3", "0 0 LW * 5#3", "America/New_York"},
    {"month end 0 0 31 * *", "0 0 31 * *", "UTC"},
    {"leap day 0 0 29 2 *", "0 0 29 2 *", "UTC"},
    {"rare 0 0 * 2 5#5 (28-year gaps)", "0 0 * 2 5#5", "America/New_York"},
    {"macro @daily", "@daily", "Europe/Berlin"},
    {"@every 90s", "@every 90s", "UTC"},
};

void BM_CronParse(benchmark::State& state) {
  const Class& c = kClasses[state.range(0)];
  state.SetLabel(c.name);
  for (auto _ : state) {
    ax::Result<ax::CronSchedule> s = ax::CronSchedule::Parse(c.expr, c.tz);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_CronParse)->DenseRange(0, std::size(kClasses) - 1);

void BM_CronNext(benchmark::State& state) {
  const Class& c = kClasses[state.range(0)];
  state.SetLabel(c.name);
  const ax::CronSchedule s = *ax::CronSchedule::Parse(c.expr, c.tz);
  const ax::Instant start = *ax::ParseInstant("2026-01-01T00:00:00Z");
  const ax::Instant stop = *ax::ParseInstant("2100-01-01T00:00:00Z");
  ax::Instant t = start;
  for (auto _ : state) {
    std::optional<ax::Instant> next = s.Next(t);
    t = (!next || *next > stop) ? start : *next;
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_CronNext)->DenseRange(0, std::size(kClasses) - 1);

void BM_ParseDuration(benchmark::State& state) {
  const char* kTexts[] = {"1h30m", "PT15M", "P1DT2H30M0.5S", "500ms"};
  const char* text = kTexts[state.range(0)];
  state.SetLabel(text);
  for (auto _ : state) benchmark::DoNotOptimize(ax::ParseDuration(text));
}
BENCHMARK(BM_ParseDuration)->DenseRange(0, 3);

void BM_FormatDuration(benchmark::State& state) {
  const ax::Duration d = *ax::ParseDuration("1d2h3m4s5ms");
  for (auto _ : state) benchmark::DoNotOptimize(ax::FormatDuration(d));
}
BENCHMARK(BM_FormatDuration);

void BM_ParseInstant(benchmark::State& state) {
  const char* kTexts[] = {"2026-12-24T18:00:00+01:00", "2026-03-08T10:00:00.123456789Z"};
  const char* text = kTexts[state.range(0)];
  state.SetLabel(text);
  for (auto _ : state) benchmark::DoNotOptimize(ax::ParseInstant(text));
}
BENCHMARK(BM_ParseInstant)->DenseRange(0, 1);

void BM_FormatInstant(benchmark::State& state) {
  const ax::Instant t = *ax::ParseInstant("2026-03-08T10:00:00.5Z");
  for (auto _ : state) benchmark::DoNotOptimize(ax::FormatInstant(t));
}
BENCHMARK(BM_FormatInstant);

}  // namespace

BENCHMARK_MAIN();
