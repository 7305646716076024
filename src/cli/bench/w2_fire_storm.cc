// W2 fire-storm: n one-shot no-op jobs, all At(T0 + 2 s), T0 read on ax's
// clock just before the first schedule call. drain_ms = the instant (ax's
// clock) the callback that brings the counter to n read the clock − the
// deadline. Keys: schedule_ns_per_op, drain_ms, fires_per_s, cpu_ms.
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

#include "cli/bench/bench_util.h"

namespace ax::cli::bench {
namespace {

std::atomic<long> count{0};
std::atomic<int64_t> last_ns{0};
long target = 0;

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
      if (count.fetch_add(1, std::memory_order_relaxed) + 1 == target) last_ns.store(AxNowNs());
    });
    if (!id.ok()) ++schedule_errors;
  }
  const int64_t t1 = AxNowNs();
  const int64_t give_up =
      SteadyNs() + (deadline_ns - t1) + static_cast<int64_t>(args.timeout_s * 1e9);
  const bool ok = schedule_errors == 0 && WaitUntil(give_up, [] { return last_ns.load() != 0; });
  const double cpu = ProcessCpuMs();
  const double drain_ms = ok ? static_cast<double>(last_ns.load() - deadline_ns) / 1e6 : NAN;
  j.Num("schedule_ns_per_op", static_cast<double>(t1 - t0) / static_cast<double>(n))
      .Num("drain_ms", drain_ms, 2)
      .Num("fires_per_s", ok ? static_cast<double>(n) / (drain_ms / 1e3) : NAN, 0)
      .Num("cpu_ms", cpu)
      .Int("schedule_done_before_deadline", t1 <= deadline_ns ? 1 : 0)
      .Int("fired", count.load());
  Finish(j, FireError(ok, schedule_errors));
}

}  // namespace ax::cli::bench
