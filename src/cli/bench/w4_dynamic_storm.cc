// W4 dynamic-storm: n periodic no-op tasks (Every(period), periods
// log-uniform in [100 ms, 1 h], first run one period from the start). For
// duration_s a mutator thread changes randomly chosen tasks at n/3 changes
// per second, alternately SetPeriod(new period) and SetDelay(new delay)
// (both log-uniform in [100 ms, 1 h]), timing each public call on the steady
// clock (each burst's ids are read from the harness's table before its first
// call is timed). Callbacks record ax's clock − RunContext::scheduled_at().
// Keys: changes_per_s, change_ns_p50, change_ns_p99, fires, lateness_us_p99,
// early_fires, cpu_ms.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "cli/bench/bench_util.h"

namespace ax::cli::bench {
namespace {

// Lateness slots for the fires of the measured phase (about 10 per task in
// 10 s at the default distribution); fires beyond it are counted, not kept.
constexpr size_t kMaxRecorded = 8'000'000;
// Changes made back to back after a sleep, at most (about 7 at the default
// rate).
constexpr size_t kMaxBurst = 256;

std::atomic<long> fires{0};
std::atomic<long> early{0};
int64_t* lateness = nullptr;

struct Change {
  uint32_t task;
  bool period;  // SetPeriod, else SetDelay
  int64_t value_ns;
};

// Schedules one periodic task per period; each fire records its lateness
// (its first `cap` fires). Returns how many Every calls failed.
long ScheduleTasks(Scheduler& s, const std::vector<int64_t>& periods, size_t cap,
                   std::vector<JobId>& ids) {
  long errors = 0;
  for (size_t i = 0; i < periods.size(); ++i) {
    Result<JobId> id = s.Every(Duration(periods[i]), [cap](const RunContext& ctx) {
      const int64_t l = AxNowNs() - ToUnixNanos(ctx.scheduled_at());
      const size_t k = static_cast<size_t>(fires.fetch_add(1, std::memory_order_relaxed));
      if (k < cap) lateness[k] = l;
      if (l < 0) early.fetch_add(1, std::memory_order_relaxed);
    });
    if (id.ok()) {
      ids[i] = *id;
    } else {
      ++errors;
    }
  }
  return errors;
}

// Alternately SetPeriod and SetDelay of random tasks, values log-uniform in
// [100 ms, 1 h].
std::vector<Change> MakeChanges(Rng& rng, size_t n, size_t total) {
  std::vector<Change> changes(total);
  for (size_t k = 0; k < total; ++k) {
    changes[k].task = static_cast<uint32_t>(rng.Below(n));
    changes[k].period = k % 2 == 0;
    changes[k].value_ns = static_cast<int64_t>(rng.LogUniform(0.1, 3600) * 1e9);
  }
  return changes;
}

// Makes changes [from, to) back to back, timing each call.
// The burst's ids are looked up before any call is timed: a random read of
// the harness's own table of ids missed the cache after the mutator's sleep,
// and cost a quarter of a change's time inside its timing.
void ChangeBurst(Scheduler& s, const std::vector<Change>& changes, const std::vector<JobId>& ids,
                 size_t from, size_t to, std::vector<int64_t>& change_ns, long& errors) {
  std::array<JobId, kMaxBurst> burst_ids;
  for (size_t k = from; k < to; ++k) burst_ids[k - from] = ids[changes[k].task];
  for (size_t k = from; k < to; ++k) {
    const Change& c = changes[k];
    const int64_t a = SteadyNs();
    const Status st = c.period ? s.SetPeriod(burst_ids[k - from], Duration(c.value_ns))
                               : s.SetDelay(burst_ids[k - from], Duration(c.value_ns));
    change_ns[k] = SteadyNs() - a;
    if (!st.ok()) ++errors;
  }
}

// The first `recorded` lateness slots that a fire wrote, sorted.
std::vector<int64_t> SortedLateness(const std::vector<int64_t>& lat, size_t recorded) {
  std::vector<int64_t> v;
  v.reserve(recorded);
  for (size_t k = 0; k < recorded; ++k) {
    if (lat[k] != kNotFired) v.push_back(lat[k]);
  }
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

void RunW4(const BenchArgs& args) {
  const size_t n = static_cast<size_t>(args.n);
  const double rate = static_cast<double>(n) / 3.0;  // one third of the tasks per second
  const size_t total = static_cast<size_t>(std::ceil(rate * args.duration_s));
  const int64_t interval_ns = static_cast<int64_t>(1e9 / rate);
  const int64_t duration_ns = static_cast<int64_t>(args.duration_s * 1e9);
  Rng rng;
  std::unique_ptr<Scheduler> s = MakeScheduler(args);
  JsonLine j = Header(args, args.threads);

  std::vector<int64_t> periods(n);
  for (size_t i = 0; i < n; ++i) periods[i] = static_cast<int64_t>(rng.LogUniform(0.1, 3600) * 1e9);
  const std::vector<Change> changes = MakeChanges(rng, n, total);
  const size_t cap = std::min<size_t>(kMaxRecorded, std::max<size_t>(total * 4, n * 200));
  std::vector<int64_t> lat(cap, kNotFired);
  lateness = lat.data();
  std::vector<int64_t> change_ns(total, 0);
  std::vector<JobId> ids(n);

  const long errors = ScheduleTasks(*s, periods, cap, ids);

  const double cpu_start = ProcessCpuMs();
  const long fires_start = fires.load();
  size_t done = 0;
  long change_errors = 0;
  double mutator_cpu = 0;
  const int64_t p0 = SteadyNs();
  int64_t p1 = p0;
  std::thread mutator([&] {
    const double cpu0 = ThreadCpuMs();
    for (;;) {
      const int64_t now = SteadyNs();
      if (now - p0 >= duration_ns) break;
      const size_t due = std::min(total, static_cast<size_t>((now - p0) / interval_ns) + 1);
      const size_t to = std::min(due, done + kMaxBurst);
      ChangeBurst(*s, changes, ids, done, to, change_ns, change_errors);
      done = to;
      if (done < due) continue;  // more than a burst due: no sleep
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    p1 = SteadyNs();
    mutator_cpu = ThreadCpuMs() - cpu0;
  });
  mutator.join();
  const double cpu = ProcessCpuMs();
  const long fired = fires.load() - fires_start;

  std::vector<int64_t> times(change_ns.begin(), change_ns.begin() + static_cast<ptrdiff_t>(done));
  std::sort(times.begin(), times.end());
  const std::vector<int64_t> v =
      SortedLateness(lat, std::min(cap, static_cast<size_t>(fires.load())));
  const double phase_ms = static_cast<double>(p1 - p0) / 1e6;
  const double phase_cpu = cpu - cpu_start;

  j.Num("duration_s", args.duration_s, 1)
      .Num("changes_per_s", static_cast<double>(done) / (phase_ms / 1e3), 0)
      .Num("change_ns_p50", static_cast<double>(Percentile(times, 0.50)), 0)
      .Num("change_ns_p99", static_cast<double>(Percentile(times, 0.99)), 0)
      .Num("change_ns_p999", static_cast<double>(Percentile(times, 0.999)), 0)
      .Num("change_ns_max", static_cast<double>(times.empty() ? 0 : times.back()), 0)
      .Int("changes", static_cast<long long>(done))
      .Int("fires", fired)
      .Num("lateness_us_p50", static_cast<double>(Percentile(v, 0.50)) / 1e3)
      .Num("lateness_us_p99", static_cast<double>(Percentile(v, 0.99)) / 1e3)
      .Num("lateness_us_max", static_cast<double>(v.empty() ? 0 : v.back()) / 1e3)
      .Int("early_fires", early.load())
      .Num("cpu_ms", cpu)
      .Num("cpu_phase_ms", phase_cpu)
      .Num("mutator_cpu_ms", mutator_cpu)
      .Num("cpu_pct_of_core", 100.0 * phase_cpu / phase_ms, 2)
      .Num("engine_cpu_pct_of_core", 100.0 * (phase_cpu - mutator_cpu) / phase_ms, 2);
  Finish(j, errors != 0 || change_errors != 0
                ? std::to_string(errors) + " schedule and " + std::to_string(change_errors) +
                      " change calls failed"
                : "");
}

}  // namespace ax::cli::bench
