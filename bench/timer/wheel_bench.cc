// TimerWheel vs ReferenceQueue (std::set) on the engine's workload: N pending
// timers with deadlines uniform in [60 s, 3600 s], single thread.
//
// Each benchmark iteration is a whole batch (fill, remove all, drain ...) on a
// long-lived queue, after one untimed warm-up batch; only the measured phase
// is timed (manual time) and the `ns_per_op` counter divides it by the number
// of operations. Set-up work is excluded.
//
//   InsertCold   N inserts into a fresh queue (array growth, page faults)
//   Insert       N inserts into a long-lived queue (steady state)
//   RemoveRandom remove all N in random order
//   HotPair      with N pending: remove the timer armed 1,024 ops earlier and
//                arm a new one (request-timeout pattern), per pair
//   PopDrain     PopExpired(3600 s, 4096) until empty: per entry, incl.
//                cascades
//   PopEngine    an engine loop: now = NextDeadline(); PopExpired(now, 4096);
//                per entry, incl. empty wake-ups at coarse slot starts
//   Cascade      n entries in one level-2 slot (68.7 s of deadlines), then the
//                PopExpired call at the slot's start that re-files them all:
//                per entry (a due job can wait behind this call)
//   Memory       bytes per pending entry: capacity arithmetic (wheel) and
//                RSS delta (both)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <time.h>

#include "timer/reference_queue.h"
#include "timer/wheel.h"

namespace ax::internal {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kMax = 3600 * kSec;
constexpr size_t kBatch = 4096;

// Thread CPU time, not wall time: this 2-vCPU VM is shared with builds, and
// wall time would count the periods the benchmark is descheduled.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
};

double Seconds(double start) { return Clock::now() - start; }

const std::vector<int64_t>& Deadlines(size_t n) {
  static std::vector<int64_t> deadlines;
  if (deadlines.size() < n) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<int64_t> dist(kMin, kMax);
    deadlines.resize(n);
    for (int64_t& d : deadlines) d = dist(rng);
  }
  return deadlines;
}

const std::vector<uint32_t>& Permutation(size_t n) {
  static std::vector<uint32_t> ids;
  if (ids.size() != n) {
    ids.resize(n);
    std::iota(ids.begin(), ids.end(), 0u);
    std::shuffle(ids.begin(), ids.end(), std::mt19937_64(7));
  }
  return ids;
}

// Inserts ids [0, n) with deadlines `base` + [60 s, 3600 s].
template <typename Queue>
void Fill(Queue& queue, size_t n, int64_t base = 0) {
  const std::vector<int64_t>& deadlines = Deadlines(n);
  for (size_t i = 0; i < n; ++i) queue.Insert(static_cast<uint32_t>(i), base + deadlines[i]);
}

// Runs `batch` once untimed (a long-lived queue has grown its arrays and the
// VM has backed its pages), then once per benchmark iteration. `batch` returns
// {seconds timed, operations}.
template <typename Batch>
void RunBatches(benchmark::State& state, Batch batch) {
  batch();
  double seconds = 0;
  double ops = 0;
  for (auto _ : state) {
    auto [s, n] = batch();
    state.SetIterationTime(s);
    seconds += s;
    ops += static_cast<double>(n);
  }
  state.counters["ns_per_op"] = seconds * 1e9 / ops;
}

// Fresh queue per batch: includes growing the arrays and first-touch page
// faults (expensive in this VM).
template <typename Queue>
void BM_InsertCold(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<int64_t>& deadlines = Deadlines(n);
  RunBatches(state, [&] {
    auto queue = std::make_unique<Queue>(0);
    const auto start = Clock::now();
    for (size_t i = 0; i < n; ++i) queue->Insert(static_cast<uint32_t>(i), deadlines[i]);
    const double s = Seconds(start);
    benchmark::DoNotOptimize(queue->size());
    return std::pair{s, n};
  });
}

template <typename Queue>
void BM_Insert(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<int64_t>& deadlines = Deadlines(n);
  Queue queue(0);
  RunBatches(state, [&] {
    const auto start = Clock::now();
    for (size_t i = 0; i < n; ++i) queue.Insert(static_cast<uint32_t>(i), deadlines[i]);
    const double s = Seconds(start);
    for (size_t i = 0; i < n; ++i) queue.Remove(static_cast<uint32_t>(i));
    return std::pair{s, n};
  });
}

template <typename Queue>
void BM_RemoveRandom(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<uint32_t>& order = Permutation(n);
  Queue queue(0);
  RunBatches(state, [&] {
    Fill(queue, n);
    const auto start = Clock::now();
    for (uint32_t id : order) queue.Remove(id);
    const double s = Seconds(start);
    benchmark::DoNotOptimize(queue.size());
    return std::pair{s, n};
  });
}

template <typename Queue>
void BM_HotPair(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  constexpr size_t kRing = 1024;
  constexpr size_t kPairs = 1 << 20;
  Queue queue(0);
  Fill(queue, n);
  const std::vector<int64_t>& deadlines = Deadlines(std::max(n, kPairs));
  for (size_t i = 0; i < kRing; ++i) queue.Insert(static_cast<uint32_t>(n + i), deadlines[i]);
  RunBatches(state, [&] {
    const auto start = Clock::now();
    for (size_t i = 0; i < kPairs; ++i) {
      const uint32_t id = static_cast<uint32_t>(n + (i & (kRing - 1)));
      queue.Remove(id);
      queue.Insert(id, deadlines[i]);
    }
    return std::pair{Seconds(start), kPairs};
  });
}

// Fills at `base`, then empties the queue with `pop(queue, end)`; the queue's
// time moves on by an hour per batch.
template <typename Queue, typename PopAll>
void PopBatches(benchmark::State& state, PopAll pop) {
  const size_t n = static_cast<size_t>(state.range(0));
  Queue queue(0);
  int64_t base = 0;
  RunBatches(state, [&] {
    Fill(queue, n, base);
    const auto start = Clock::now();
    pop(queue, base + kMax);
    const double s = Seconds(start);
    if (queue.size() != 0) state.SkipWithError("queue not drained");
    base += kMax;
    return std::pair{s, n};
  });
}

template <typename Queue>
void BM_PopDrain(benchmark::State& state) {
  std::vector<uint32_t> out;
  out.reserve(kBatch);
  PopBatches<Queue>(state, [&](Queue& queue, int64_t end) {
    while (queue.size() > 0) {
      out.clear();
      queue.PopExpired(end, kBatch, out);
    }
  });
}

template <typename Queue>
void BM_PopEngine(benchmark::State& state) {
  std::vector<uint32_t> out;
  out.reserve(kBatch);
  double wakeups = 0;
  double entries = 0;
  PopBatches<Queue>(state, [&](Queue& queue, int64_t) {
    entries += static_cast<double>(queue.size());
    while (queue.size() > 0) {
      const int64_t now = queue.NextDeadline();
      out.clear();
      queue.PopExpired(now, kBatch, out);
      ++wakeups;
    }
  });
  state.counters["wakeups_per_entry"] = wakeups / entries;
}

void BM_Cascade(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  constexpr int64_t kTick = int64_t{1} << kTickShift;
  const int64_t start = 4096 * kTick;  // level-2 slot 1 of a wheel at 0
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> dist(start + kTick, start + 4096 * kTick - 1);
  std::vector<int64_t> deadlines(n);
  for (int64_t& d : deadlines) d = dist(rng);
  std::vector<uint32_t> out;
  RunBatches(state, [&] {
    auto wheel = std::make_unique<TimerWheel>(0);
    for (size_t i = 0; i < n; ++i) wheel->Insert(static_cast<uint32_t>(i), deadlines[i]);
    const auto t = Clock::now();
    out.clear();
    wheel->PopExpired(start, kBatch, out);
    const double s = Seconds(t);
    if (!out.empty() || wheel->size() != n) state.SkipWithError("cascade fired or lost entries");
    return std::pair{s, static_cast<double>(n)};
  });
}

size_t RssBytes() {
  long pages = 0;
  long resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<size_t>(resident) * 4096;
}

size_t CapacityBytes(const TimerWheel& wheel) { return wheel.MemoryBytes(); }
size_t CapacityBytes(const ReferenceQueue&) { return 0; }

template <typename Queue>
void BM_Memory(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Deadlines(n);
  double rss = 0;
  double capacity = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const size_t before = RssBytes();
    const auto start = Clock::now();
    auto queue = std::make_unique<Queue>(0);
    Fill(*queue, n);
    rss = static_cast<double>(RssBytes() - before) / static_cast<double>(n);
    capacity = static_cast<double>(CapacityBytes(*queue)) / static_cast<double>(n);
    state.SetIterationTime(Seconds(start));
  }
  state.counters["rss_bytes_per_entry"] = rss;
  if (capacity > 0) state.counters["capacity_bytes_per_entry"] = capacity;
}

// With --benchmark_repetitions=N the minimum is reported too: on a shared VM
// it is the least disturbed run.
double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

void Sizes(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->ComputeStatistics("min", Min);
  b->Arg(100'000)->Arg(1'000'000)->Arg(10'000'000);
}

void MemorySizes(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
  b->Arg(100'000)->Arg(1'000'000)->Arg(10'000'000);
}

// Memory first, while the process heap is fresh.
BENCHMARK(BM_Memory<TimerWheel>)->Apply(MemorySizes);
BENCHMARK(BM_Memory<ReferenceQueue>)->Apply(MemorySizes);
BENCHMARK(BM_InsertCold<TimerWheel>)->Apply(Sizes);
BENCHMARK(BM_InsertCold<ReferenceQueue>)->Apply(Sizes);
BENCHMARK(BM_Insert<TimerWheel>)->Apply(Sizes);
BENCHMARK(BM_Insert<ReferenceQueue>)->Apply(Sizes);
BENCHMARK(BM_RemoveRandom<TimerWheel>)->Apply(Sizes);
BENCHMARK(BM_RemoveRandom<ReferenceQueue>)->Apply(Sizes);
BENCHMARK(BM_HotPair<TimerWheel>)->Apply(Sizes);
BENCHMARK(BM_HotPair<ReferenceQueue>)->Apply(Sizes);
BENCHMARK(BM_PopDrain<TimerWheel>)->Apply(Sizes);
BENCHMARK(BM_PopDrain<ReferenceQueue>)->Apply(Sizes);
BENCHMARK(BM_PopEngine<TimerWheel>)->Apply(Sizes);
BENCHMARK(BM_PopEngine<ReferenceQueue>)->Apply(Sizes);
BENCHMARK(BM_Cascade)->Apply(Sizes);

}  // namespace
}  // namespace ax::internal

int main(int argc, char** argv) {
  // WHEEL_BENCH_RSS=1 fixes the mmap threshold, so large arrays are mapped and
  // unmapped and the Memory benchmark's RSS deltas measure what a queue holds.
  // Off by default: it makes every large allocation fault in fresh pages,
  // which no long-running engine would see.
  if (std::getenv("WHEEL_BENCH_RSS") != nullptr) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
