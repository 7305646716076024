// Micro-benchmarks of libax's public engine calls, on a real scheduler
// (SystemClock, 2 workers) holding `pending` far-future one-shot jobs
// (deadlines uniform in [60 s, 3600 s], so nothing fires):
//
//   AfterCancel/pending   After(d) + Cancel(id) of the new job, per pair
//   AtCancel/pending      At(t) + Cancel(id), per pair
//   After/pending         After(d) alone, per call (the pending set grows by
//                         the iteration count; the jobs are cancelled untimed)
//   CancelColdRandom/N    N jobs scheduled untimed, then all cancelled in a
//                         random order: per Cancel (cache-cold records)
//   AfterKeyed/N          N After(d, {.key = "order-<i>"}) into a fresh
//                         scheduler: per call, and the slowest call (max_us)
//   SetDelay/pending      SetDelay(random pending job, d), per call
//   Info/pending          Info(random pending job), per call
//   GetStats/pending      GetStats(), per call
//
// Wall time, single caller thread; the scheduler thread is idle apart from
// purging the cancelled jobs it retains (SchedulerOptions::max_retained).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "ax/scheduler.h"

namespace {

constexpr int64_t kSec = 1'000'000'000;

void Noop() {}

std::unique_ptr<ax::Scheduler> NewScheduler() {
  ax::SchedulerOptions o;
  o.workers = 2;
  return std::move(ax::Scheduler::Create(std::move(o)).value());
}

// A scheduler with `pending` jobs, shared by the benchmarks that keep the
// pending count unchanged (built once per size).
struct Loaded {
  std::unique_ptr<ax::Scheduler> s;
  std::vector<ax::JobId> ids;
};

Loaded& LoadedWith(int64_t pending) {
  static std::map<int64_t, Loaded> cache;
  auto it = cache.find(pending);
  if (it != cache.end()) return it->second;
  Loaded& l = cache[pending];
  l.s = NewScheduler();
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> d(60 * kSec, 3600 * kSec);
  l.ids.reserve(static_cast<size_t>(pending));
  for (int64_t i = 0; i < pending; ++i) {
    l.ids.push_back(l.s->After(ax::Duration(d(rng)), Noop).value());
  }
  return l;
}

std::vector<int64_t> Delays(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(60 * kSec, 3600 * kSec);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = d(rng);
  return v;
}

void BM_AfterCancel(benchmark::State& state) {
  Loaded& l = LoadedWith(state.range(0));
  const std::vector<int64_t> delays = Delays(1 << 16, 7);
  size_t i = 0;
  for (auto _ : state) {
    ax::Result<ax::JobId> id = l.s->After(ax::Duration(delays[i++ & 0xffff]), Noop);
    benchmark::DoNotOptimize(l.s->Cancel(*id));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AfterCancel)->Arg(0)->Arg(100'000)->Arg(1'000'000);

void BM_AtCancel(benchmark::State& state) {
  Loaded& l = LoadedWith(state.range(0));
  const std::vector<int64_t> delays = Delays(1 << 16, 8);
  const int64_t now = ax::ToUnixNanos(l.s->Now());
  size_t i = 0;
  for (auto _ : state) {
    ax::Result<ax::JobId> id = l.s->At(ax::FromUnixNanos(now + delays[i++ & 0xffff]), Noop);
    benchmark::DoNotOptimize(l.s->Cancel(*id));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AtCancel)->Arg(0)->Arg(100'000)->Arg(1'000'000);

void BM_After(benchmark::State& state) {
  Loaded& l = LoadedWith(state.range(0));
  const std::vector<int64_t> delays = Delays(1 << 16, 9);
  std::vector<ax::JobId> added;
  added.reserve(1 << 20);
  size_t i = 0;
  for (auto _ : state) {
    ax::Result<ax::JobId> id = l.s->After(ax::Duration(delays[i++ & 0xffff]), Noop);
    added.push_back(*id);
  }
  state.SetItemsProcessed(state.iterations());
  for (ax::JobId id : added) (void)l.s->Cancel(id);  // after the timed loop: untimed
}
BENCHMARK(BM_After)->Arg(0)->Arg(100'000)->Arg(1'000'000);

void BM_CancelColdRandom(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::unique_ptr<ax::Scheduler> s = NewScheduler();
  const std::vector<int64_t> delays = Delays(n, 10);
  std::mt19937_64 rng(11);
  std::vector<ax::JobId> ids(n);
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < n; ++i) ids[i] = s->After(ax::Duration(delays[i]), Noop).value();
    std::shuffle(ids.begin(), ids.end(), rng);
    state.ResumeTiming();
    for (ax::JobId id : ids) benchmark::DoNotOptimize(s->Cancel(id));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_cancel"] =
      benchmark::Counter(static_cast<double>(state.iterations() * static_cast<int64_t>(n)),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CancelColdRandom)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_AfterKeyed(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<int64_t> delays = Delays(n, 13);
  std::vector<ax::JobOptions> options(n);
  for (size_t i = 0; i < n; ++i) options[i].key = "order-" + std::to_string(i);
  int64_t worst_ns = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<ax::Scheduler> s = NewScheduler();
    state.ResumeTiming();
    for (size_t i = 0; i < n; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(s->After(ax::Duration(delays[i]), Noop, options[i]));
      worst_ns = std::max<int64_t>(worst_ns, (std::chrono::steady_clock::now() - t0).count());
    }
    state.PauseTiming();
    s.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["ns_per_call"] =
      benchmark::Counter(static_cast<double>(state.iterations() * static_cast<int64_t>(n)),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["max_us"] = static_cast<double>(worst_ns) / 1e3;
}
BENCHMARK(BM_AfterKeyed)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_SetDelay(benchmark::State& state) {
  Loaded& l = LoadedWith(state.range(0));
  const std::vector<int64_t> delays = Delays(1 << 16, 12);
  std::mt19937_64 rng(13);
  std::vector<uint32_t> pick(1 << 16);
  for (uint32_t& p : pick) p = static_cast<uint32_t>(rng() % l.ids.size());
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ & 0xffff;
    benchmark::DoNotOptimize(l.s->SetDelay(l.ids[pick[k]], ax::Duration(delays[k])));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SetDelay)->Arg(100'000)->Arg(1'000'000);

void BM_Info(benchmark::State& state) {
  Loaded& l = LoadedWith(state.range(0));
  std::mt19937_64 rng(14);
  std::vector<uint32_t> pick(1 << 16);
  for (uint32_t& p : pick) p = static_cast<uint32_t>(rng() % l.ids.size());
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(l.s->Info(l.ids[pick[i++ & 0xffff]]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Info)->Arg(100'000)->Arg(1'000'000);

// GetStats holds the engine lock (the daemon's /metrics and /stats call it).
void BM_GetStats(benchmark::State& state) {
  Loaded& l = LoadedWith(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(l.s->GetStats());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GetStats)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
