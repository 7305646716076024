#include "cli/bench/bench_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ratio>
#include <thread>
#include <utility>

#include <sys/resource.h>
#include <unistd.h>

namespace ax::cli::bench {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t AxNowNs() {
  static const std::shared_ptr<SystemClock> clock = SystemClock::Get();
  return ToUnixNanos(clock->Now());
}

double Rng::Uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(gen_);
}

double Rng::LogUniform(double lo, double hi) {
  return std::exp(Uniform(std::log(lo), std::log(hi)));
}

uint64_t Rng::Below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(gen_); }

std::vector<uint32_t> Rng::Permutation(size_t n) {
  std::vector<uint32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i);
  for (size_t i = n; i > 1; --i) {
    const size_t j = std::uniform_int_distribution<size_t>(0, i - 1)(gen_);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

std::vector<int64_t> Rng::UniformDelaysNs(size_t n, double lo_s, double hi_s) {
  std::vector<int64_t> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<int64_t>(Uniform(lo_s, hi_s) * 1e9);
  return d;
}

long StatusBytes(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(f, line)) {
    if (line.compare(0, len, field) == 0 && line.size() > len && line[len] == ':') {
      return std::atol(line.c_str() + len + 1) * 1024L;
    }
  }
  return -1;
}

static double RusageMs(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

double ProcessCpuMs() { return RusageMs(RUSAGE_SELF); }
double ThreadCpuMs() { return RusageMs(RUSAGE_THREAD); }

int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

bool WaitUntil(int64_t deadline_steady_ns, const std::function<bool()>& pred) {
  while (!pred()) {
    if (SteadyNs() > deadline_steady_ns) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void JsonLine::Key(const char* key) {
  if (!first_) s_ += ", ";
  first_ = false;
  s_ += '"';
  s_ += key;
  s_ += "\": ";
}

JsonLine& JsonLine::Str(const char* key, const std::string& value) {
  Key(key);
  s_ += '"';
  for (char c : value) {  // the values are ours; escape just in case
    if (c == '"' || c == '\\') s_ += '\\';
    s_ += c;
  }
  s_ += '"';
  return *this;
}

JsonLine& JsonLine::Int(const char* key, long long value) {
  Key(key);
  s_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Num(const char* key, double value, int precision) {
  Key(key);
  if (!std::isfinite(value)) {
    s_ += "null";
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, value);
  s_ += buf;
  return *this;
}

void JsonLine::Print() {
  s_ += "}";
  std::printf("%s\n", s_.c_str());
  std::fflush(stdout);
}

namespace {

// The machine's CPU time in /proc/stat's "cpu" line, in ticks: in all, and
// the part the hypervisor gave to other guests ("steal"). {0, 0} if unreadable.
struct CpuTicks {
  unsigned long long total = 0;
  unsigned long long steal = 0;
};

CpuTicks ReadCpuTicks() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  f >> cpu;
  if (cpu != "cpu") return {};
  CpuTicks t;
  // user nice system idle iowait irq softirq steal (guest time is in user).
  for (int i = 0; i < 8; ++i) {
    unsigned long long v = 0;
    if (!(f >> v)) return {};
    t.total += v;
    if (i == 7) t.steal = v;
  }
  return t;
}

CpuTicks run_start;  // at Header(): one workload per process

}  // namespace

JsonLine Header(const BenchArgs& args, int threads) {
  run_start = ReadCpuTicks();
  JsonLine j;
  j.Str("system", "ax").Str("workload", args.workload).Int("n", args.n).Int("threads", threads);
  if (args.workload == "W3") j.Int("background", args.background);
  // To the µs: with one decimal, a slack of 0.05 ms read 0.1.
  if (args.timer_slack_ms != 0) j.Num("timer_slack_ms", args.timer_slack_ms, 3);
  if (args.hand_ahead_ms >= 0) j.Num("hand_ahead_ms", args.hand_ahead_ms, 3);
  if (args.pin_workers) j.Int("pin_workers", 1);
  if (args.worker_slice_us >= 0) j.Num("worker_slice_us", args.worker_slice_us);
  return j;
}

void AddLateness(JsonLine& j, const std::vector<int64_t>& lateness_ns) {
  long long early = 0;
  std::vector<int64_t> v;
  v.reserve(lateness_ns.size());
  for (int64_t x : lateness_ns) {
    if (x == kNotFired) continue;
    if (x < 0) ++early;
    v.push_back(x);
  }
  std::sort(v.begin(), v.end());
  j.Num("lateness_us_p50", static_cast<double>(Percentile(v, 0.50)) / 1e3)
      .Num("lateness_us_p99", static_cast<double>(Percentile(v, 0.99)) / 1e3)
      .Num("lateness_us_p999", static_cast<double>(Percentile(v, 0.999)) / 1e3)
      .Num("lateness_us_max", static_cast<double>(v.empty() ? 0 : v.back()) / 1e3)
      .Int("early_fires", early)
      .Num("lateness_us_min", static_cast<double>(v.empty() ? 0 : v.front()) / 1e3)
      .Int("fired", static_cast<long long>(v.size()));
}

std::unique_ptr<Scheduler> MakeScheduler(const BenchArgs& args) {
  // Flags in ms or us, to the nearest ns (1.001 ms is 1,000,999.99... ns as a double).
  auto in = [](double count, auto unit) {
    return std::chrono::round<Duration>(std::chrono::duration<double, decltype(unit)>(count));
  };
  SchedulerOptions o;
  o.workers = args.threads;
  o.timer_slack = in(args.timer_slack_ms, std::milli{});
  if (args.hand_ahead_ms >= 0) o.hand_ahead = in(args.hand_ahead_ms, std::milli{});
  o.pin_workers = args.pin_workers;
  if (args.worker_slice_us >= 0) o.worker_slice = in(args.worker_slice_us, std::micro{});
  Result<std::unique_ptr<Scheduler>> s = Scheduler::Create(std::move(o));
  if (!s.ok()) {
    std::fprintf(stderr, "ax bench: %s\n", s.status().ToString().c_str());
    std::fflush(stderr);
    _exit(1);
  }
  return std::move(*s);
}

std::string FireError(bool ok, long schedule_errors) {
  if (ok) return "";
  return schedule_errors != 0 ? std::to_string(schedule_errors) + " schedule calls failed"
                              : "not all timers fired before timeout";
}

void Finish(JsonLine& j, const std::string& error) {
  const CpuTicks end = ReadCpuTicks();
  if (end.total > run_start.total) {
    j.Num("host_steal_pct", 100.0 * static_cast<double>(end.steal - run_start.steal) /
                                static_cast<double>(end.total - run_start.total));
  }
  if (!error.empty()) j.Str("error", error);
  j.Print();
  const int rc = error.empty() ? 0 : 1;
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(rc);
}

}  // namespace ax::cli::bench

namespace ax::cli {

int BenchCommand(const BenchArgs& in) {
  BenchArgs a = in;
  const bool known = a.workload == "W1" || a.workload == "W2" || a.workload == "W3" ||
                     a.workload == "W4" || a.workload == "idle";
  if (!known) {
    std::fprintf(stderr, "ax bench: unknown workload '%s' (W1, W2, W3, W4 or idle)\n",
                 a.workload.c_str());
    return 2;
  }
  if (a.n == -1) a.n = a.workload == "W3" ? 200'000 : a.workload == "W4" ? 20'000 : 1'000'000;
  if (a.background == -1) a.background = 1'000'000;
  if (a.threads <= 0)
    a.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (a.duration_s <= 0) a.duration_s = 10;
  if (a.n < 1 || a.n > 1'000'000'000) {
    std::fprintf(stderr, "ax bench: --n must be in [1, 10^9], got %ld\n", a.n);
    return 2;
  }
  if (a.background < 0 || a.background > 1'000'000'000) {
    std::fprintf(stderr, "ax bench: --background must be in [0, 10^9], got %ld\n", a.background);
    return 2;
  }
  if (a.threads > 4096) {
    std::fprintf(stderr, "ax bench: --threads must be at most 4096, got %d\n", a.threads);
    return 2;
  }
  if (!(a.timeout_s > 0)) {
    std::fprintf(stderr, "ax bench: --timeout must be positive\n");
    return 2;
  }
  if (a.workload == "W1") bench::RunW1(a);
  if (a.workload == "W2") bench::RunW2(a);
  if (a.workload == "W3") bench::RunW3(a);
  if (a.workload == "idle") bench::RunIdle(a);
  bench::RunW4(a);
}

}  // namespace ax::cli
