// idle (not in WORKLOADS.md; issue 3's idle target): n one-shot no-op jobs
// due 1-2 h out, then `duration_s` seconds of waiting. An engine that does
// not tick uses (almost) no CPU meanwhile.
// Keys: idle_cpu_ms (process CPU over the idle stretch), wakeups (scheduler
// thread wake-ups over it), rss_bytes_per_pending.
#include <chrono>
#include <thread>
#include <vector>

#include "cli/bench/bench_util.h"

namespace ax::cli::bench {

void RunIdle(const BenchArgs& args) {
  const size_t n = static_cast<size_t>(args.n);
  Rng rng;
  std::unique_ptr<Scheduler> s = MakeScheduler(args);
  JsonLine j = Header(args, args.threads);
  const std::vector<int64_t> delays = rng.UniformDelaysNs(n, 3600, 7200);
  const long rss0 = StatusBytes("VmRSS");
  long errors = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!s->After(Duration(delays[i]), [] {}).ok()) ++errors;
  }
  const long rss1 = StatusBytes("VmRSS");
  const uint64_t wakeups0 = s->GetStats().wakeups;
  const double cpu0 = ProcessCpuMs();
  std::this_thread::sleep_for(std::chrono::duration<double>(args.duration_s));
  const double cpu1 = ProcessCpuMs();
  const uint64_t wakeups1 = s->GetStats().wakeups;
  j.Num("duration_s", args.duration_s)
      .Num("idle_cpu_ms", cpu1 - cpu0, 2)
      .Int("wakeups", static_cast<long long>(wakeups1 - wakeups0))
      .Num("rss_bytes_per_pending", static_cast<double>(rss1 - rss0) / static_cast<double>(n));
  Finish(j, errors != 0 ? std::to_string(errors) + " schedule calls failed" : "");
}

}  // namespace ax::cli::bench
