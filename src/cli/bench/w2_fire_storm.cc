// W2 fire-storm: n one-shot no-op jobs, all At(T0 + 2 s), T0 read on ax's
// clock just before the first schedule call. drain_ms = the instant (ax's
// clock) the callback that brings the counter to n read the clock − the
// deadline. Keys: schedule_ns_per_op, drain_ms, fires_per_s, cpu_ms, and
// first_fire_late_ms (the first callback's clock read − the deadline: how
// much of the drain is the storm starting late); with
// --probe, also probe_calls, probe_call_us_p50/p99/max, probe_errors (calls
// made during the drain, see BenchArgs::probe) and probe_cpu_ms.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "cli/bench/bench_util.h"

namespace ax::cli::bench {
namespace {

std::atomic<long> count{0};
std::atomic<int64_t> first_ns{0};
std::atomic<int64_t> last_ns{0};
long target = 0;
std::atomic<bool> probe_stop{false};

// From `start` (steady clock) until told to stop: every 100 µs, one After and
// one Cancel, each timed. `cpu_ms`: the probe thread's own CPU from `start`
// (its wake-ups among it), taken from the two vCPUs the drain runs on.
void Probe(Scheduler* s, int64_t start, std::vector<int64_t>& ns, long& errors, double& cpu_ms) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(start - SteadyNs()));
  const double cpu0 = ThreadCpuMs();
  while (!probe_stop.load()) {
    int64_t t = SteadyNs();
    Result<JobId> id = s->After(std::chrono::hours(1), [] {});
    ns.push_back(SteadyNs() - t);
    if (id.ok()) {
      t = SteadyNs();
      if (!s->Cancel(*id).ok()) ++errors;
      ns.push_back(SteadyNs() - t);
    } else {
      ++errors;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  cpu_ms = ThreadCpuMs() - cpu0;
}

}  // namespace

void RunW2(const BenchArgs& args) {
  const size_t n = static_cast<size_t>(args.n);
  target = args.n;
  std::unique_ptr<Scheduler> s = MakeScheduler(args);
  JsonLine j = Header(args, args.threads);
  long schedule_errors = 0;

  const int64_t t0 = AxNowNs();
  const int64_t deadline_ns = t0 + 2'000'000'000;
  const Instant deadline = FromUnixNanos(deadline_ns);
  for (size_t i = 0; i < n; ++i) {
    Result<JobId> id = s->At(deadline, [] {
      const long done = count.fetch_add(1, std::memory_order_relaxed) + 1;
      if (done == 1) first_ns.store(AxNowNs());
      if (done == target) last_ns.store(AxNowNs());
    });
    if (!id.ok()) ++schedule_errors;
  }
  const int64_t t1 = AxNowNs();
  std::vector<int64_t> probe_ns;
  long probe_errors = 0;
  double probe_cpu_ms = 0;
  std::thread probe;
  if (args.probe) {
    probe = std::thread(Probe, s.get(), SteadyNs() + (deadline_ns - t1), std::ref(probe_ns),
                        std::ref(probe_errors), std::ref(probe_cpu_ms));
  }
  const int64_t give_up =
      SteadyNs() + (deadline_ns - t1) + static_cast<int64_t>(args.timeout_s * 1e9);
  const bool ok = schedule_errors == 0 && WaitUntil(give_up, [] { return last_ns.load() != 0; });
  const double cpu = ProcessCpuMs();
  if (probe.joinable()) {
    probe_stop.store(true);
    probe.join();
  }
  const double drain_ms = ok ? static_cast<double>(last_ns.load() - deadline_ns) / 1e6 : NAN;
  j.Num("schedule_ns_per_op", static_cast<double>(t1 - t0) / static_cast<double>(n))
      .Num("drain_ms", drain_ms, 2)
      .Num("fires_per_s", ok ? static_cast<double>(n) / (drain_ms / 1e3) : NAN, 0)
      .Num("cpu_ms", cpu)
      .Num("first_fire_late_ms",
           ok ? static_cast<double>(first_ns.load() - deadline_ns) / 1e6 : NAN, 2)
      .Int("schedule_done_before_deadline", t1 <= deadline_ns ? 1 : 0)
      .Int("fired", count.load());
  if (args.probe) {
    std::sort(probe_ns.begin(), probe_ns.end());
    j.Int("probe_calls", static_cast<long long>(probe_ns.size()))
        .Num("probe_call_us_p50", static_cast<double>(Percentile(probe_ns, 0.50)) / 1e3, 2)
        .Num("probe_call_us_p99", static_cast<double>(Percentile(probe_ns, 0.99)) / 1e3, 2)
        .Num("probe_call_us_max", static_cast<double>(Percentile(probe_ns, 1.0)) / 1e3, 2)
        .Int("probe_errors", probe_errors)
        .Num("probe_cpu_ms", probe_cpu_ms);
  }
  Finish(j, FireError(ok, schedule_errors));
}

}  // namespace ax::cli::bench
