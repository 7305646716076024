// W3 lateness: `background` far-future one-shot jobs (After, delays uniform
// in [1 h, 2 h]) first; then T0 on ax's clock and n jobs At(T0 + U[1 s,
// 11 s]). Each callback writes ax's clock − its deadline (ns) into its own
// slot of a preallocated array, and checks that RunContext::scheduled_at()
// is that deadline. Keys: lateness_us_p50/p99/p999/max, early_fires, cpu_ms.
#include <atomic>
#include <vector>

#include "cli/bench/bench_util.h"

namespace ax::cli::bench {
namespace {

std::atomic<long> count{0};
std::atomic<long> scheduled_mismatch{0};
const int64_t* deadlines = nullptr;
int64_t* lateness = nullptr;

}  // namespace

void RunW3(const BenchArgs& args) {
  const size_t n = static_cast<size_t>(args.n);
  const size_t bg = static_cast<size_t>(args.background);
  Rng rng;
  std::unique_ptr<Scheduler> s = MakeScheduler(args);
  JsonLine j = Header(args, args.threads);

  const std::vector<int64_t> bg_delays = rng.UniformDelaysNs(bg, 3600, 7200);
  const std::vector<int64_t> offsets = rng.UniformDelaysNs(n, 1, 11);
  std::vector<int64_t> deadline_ns(n);
  std::vector<int64_t> lat(n, kNotFired);
  deadlines = deadline_ns.data();
  lateness = lat.data();
  long schedule_errors = 0;

  for (size_t i = 0; i < bg; ++i) {
    if (!s->After(Duration(bg_delays[i]), [] {}).ok()) ++schedule_errors;
  }
  const int64_t t0 = AxNowNs();
  for (size_t i = 0; i < n; ++i) {
    deadline_ns[i] = t0 + offsets[i];
    Result<JobId> id = s->At(FromUnixNanos(deadline_ns[i]), [i](const RunContext& ctx) {
      const int64_t now = AxNowNs();
      lateness[i] = now - deadlines[i];
      if (ToUnixNanos(ctx.scheduled_at()) != deadlines[i]) {
        scheduled_mismatch.fetch_add(1, std::memory_order_relaxed);
      }
      count.fetch_add(1, std::memory_order_release);
    });
    if (!id.ok()) ++schedule_errors;
  }
  const int64_t give_up =
      SteadyNs() + (t0 + 11'000'000'000 - AxNowNs()) + static_cast<int64_t>(args.timeout_s * 1e9);
  const bool ok = schedule_errors == 0 && WaitUntil(give_up, [n] {
                    return count.load(std::memory_order_acquire) >= static_cast<long>(n);
                  });
  const double cpu = ProcessCpuMs();
  AddLateness(j, lat);
  j.Num("cpu_ms", cpu).Int("scheduled_at_mismatch", scheduled_mismatch.load());
  Finish(j, FireError(ok, schedule_errors));
}

}  // namespace ax::cli::bench
