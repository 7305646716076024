// W1 schedule-cancel: one thread schedules n one-shot no-op jobs with
// After(delay), delays uniform in [60 s, 3600 s] (none fires during the
// test), then cancels all of them with Cancel(JobId) in a shuffled order.
// Keys: schedule_ns_per_op, cancel_ns_per_op, rss_bytes_per_pending.
#include <atomic>
#include <cstdio>
#include <vector>

#include "cli/bench/bench_util.h"

namespace ax::cli::bench {
namespace {

std::atomic<long> fired{0};

}  // namespace

void RunW1(const BenchArgs& args) {
  const size_t n = static_cast<size_t>(args.n);
  Rng rng;
  std::unique_ptr<Scheduler> s = MakeScheduler(args);
  JsonLine j = Header(args, args.threads);

  const std::vector<int64_t> delays = rng.UniformDelaysNs(n, 60, 3600);
  const std::vector<uint32_t> order = rng.Permutation(n);
  // The caller keeps one JobId (8 bytes) per job to cancel it: reserved, not
  // touched, so its pages count in the RSS like the peers' timer handles.
  std::vector<JobId> ids;
  ids.reserve(n);
  long schedule_errors = 0;
  long cancel_errors = 0;

  const long rss0 = StatusBytes("VmRSS");
  const int64_t t0 = SteadyNs();
  for (size_t i = 0; i < n; ++i) {
    Result<JobId> id =
        s->After(Duration(delays[i]), [] { fired.fetch_add(1, std::memory_order_relaxed); });
    if (id.ok()) {
      ids.push_back(*id);
    } else {
      ++schedule_errors;
      ids.emplace_back();
    }
  }
  const int64_t t1 = SteadyNs();
  const long hwm = StatusBytes("VmHWM");
  const int64_t t2 = SteadyNs();
  for (size_t i = 0; i < n; ++i) {
    if (!s->Cancel(ids[order[i]]).ok()) ++cancel_errors;
  }
  const int64_t t3 = SteadyNs();

  j.Num("schedule_ns_per_op", static_cast<double>(t1 - t0) / static_cast<double>(n))
      .Num("cancel_ns_per_op", static_cast<double>(t3 - t2) / static_cast<double>(n))
      .Num("rss_bytes_per_pending", static_cast<double>(hwm - rss0) / static_cast<double>(n))
      .Int("fired_during_test", fired.load())
      .Int("cancelled", static_cast<long long>(n) - cancel_errors);
  Finish(j, schedule_errors != 0 || cancel_errors != 0
                ? std::to_string(schedule_errors) + " schedule and " +
                      std::to_string(cancel_errors) + " cancel calls failed"
                : "");
}

}  // namespace ax::cli::bench
