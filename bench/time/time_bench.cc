// The system clock's reads, one after another on one thread. In a call that
// misses the cache they cost more than here (docs/performance.md): the exact
// read's serialising time-stamp read ends the overlap of one call's misses
// with the next's.
#include <benchmark/benchmark.h>

#include "ax/clock.h"

namespace {

void BM_Now(benchmark::State& state) {
  auto clock = ax::SystemClock::Get();
  for (auto _ : state) benchmark::DoNotOptimize(clock->Now());
}
BENCHMARK(BM_Now);

void BM_NowOrLater(benchmark::State& state) {
  auto clock = ax::SystemClock::Get();
  for (auto _ : state) benchmark::DoNotOptimize(clock->NowOrLater());
}
BENCHMARK(BM_NowOrLater);

void BM_NowApprox(benchmark::State& state) {
  auto clock = ax::SystemClock::Get();
  for (auto _ : state) benchmark::DoNotOptimize(clock->NowApprox());
}
BENCHMARK(BM_NowApprox);

void BM_NowCoarse(benchmark::State& state) {
  auto clock = ax::SystemClock::Get();
  for (auto _ : state) benchmark::DoNotOptimize(clock->NowCoarse());
}
BENCHMARK(BM_NowCoarse);

}  // namespace

BENCHMARK_MAIN();
