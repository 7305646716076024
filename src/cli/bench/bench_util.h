// Helpers shared by the `ax bench` workloads: seeded random inputs, RSS and
// CPU readings, nearest-rank percentiles and the one-line JSON output. They
// follow shared/peers/common/bench_common.hpp so that ax and the peers are
// measured alike.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ax/scheduler.h"

#include "cli/bench/workloads.h"

namespace ax::cli::bench {

// Monotonic nanoseconds (std::chrono::steady_clock), for durations measured
// on the calling thread.
int64_t SteadyNs();
// ax's clock (SystemClock, CLOCK_REALTIME) in nanoseconds: deadlines and
// lateness are measured on it.
int64_t AxNowNs();

// Seed 42 for everything; one generator per run, consumed in a fixed order
// (the same draws as the C++ peers).
class Rng {
 public:
  // Uniform real in [lo, hi).
  double Uniform(double lo, double hi);
  // Log-uniform real in [lo, hi).
  double LogUniform(double lo, double hi);
  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n);
  // A shuffled permutation of 0..n-1 (Fisher-Yates).
  std::vector<uint32_t> Permutation(size_t n);
  // n durations in ns, uniform in [lo_s, hi_s) seconds.
  std::vector<int64_t> UniformDelaysNs(size_t n, double lo_s, double hi_s);

 private:
  std::mt19937_64 gen_{42};
};

// Bytes of a /proc/self/status field ("VmRSS", "VmHWM"); -1 if absent.
long StatusBytes(const char* field);
// User + system CPU of the whole process (RUSAGE_SELF), in ms.
double ProcessCpuMs();
// User + system CPU of the calling thread (RUSAGE_THREAD), in ms.
double ThreadCpuMs();

// Nearest-rank percentile `p` (0..1] of an ascending vector; 0 when empty.
int64_t Percentile(const std::vector<int64_t>& sorted, double p);

// Sleeps 1 ms at a time until pred() holds or SteadyNs() passes
// `deadline_steady_ns`; returns whether pred() held.
bool WaitUntil(int64_t deadline_steady_ns, const std::function<bool()>& pred);

// One JSON object, keys in insertion order, printed as one stdout line.
class JsonLine {
 public:
  JsonLine& Str(const char* key, const std::string& value);
  JsonLine& Int(const char* key, long long value);
  // `precision` digits after the point; null when not finite.
  JsonLine& Num(const char* key, double value, int precision = 1);
  void Print();

 private:
  void Key(const char* key);
  std::string s_ = "{";
  bool first_ = true;
};

// The line's common keys: "system": "ax", "workload", "n", "threads".
// Called at the start of the run: Finish() then adds "host_steal_pct", the
// share of the machine's CPU time (all cores) that the hypervisor took from
// this guest meanwhile -- the noise of a shared VM, not ax's.
JsonLine Header(const BenchArgs& args, int threads);

// Lateness block (µs, nearest rank) over the callbacks that ran: p50, p99,
// p999, max, early_fires (negative lateness, counted), min, fired.
inline constexpr int64_t kNotFired = INT64_MIN;
void AddLateness(JsonLine& j, const std::vector<int64_t>& lateness_ns);

// Creates the scheduler the workloads measure (SystemClock, `threads`
// workers, the timer slack asked for, default options otherwise). Exits with
// a message on failure.
std::unique_ptr<Scheduler> MakeScheduler(const BenchArgs& args);

// Prints `j` with "host_steal_pct", and an "error" key when `error` is not
// empty; flushes stdout and _exit()s (no teardown of the pending jobs):
// status 0, or 1 on error.
[[noreturn]] void Finish(JsonLine& j, const std::string& error);
// W2, W3: the error of a run that scheduled n timers and waited for them
// (`ok`: all fired in time); empty when there is none.
std::string FireError(bool ok, long schedule_errors);

// The workloads. Each prints its line and calls Finish().
[[noreturn]] void RunW1(const BenchArgs& args);
[[noreturn]] void RunW2(const BenchArgs& args);
[[noreturn]] void RunW3(const BenchArgs& args);
[[noreturn]] void RunW4(const BenchArgs& args);
[[noreturn]] void RunIdle(const BenchArgs& args);

}  // namespace ax::cli::bench
