// `ax demo` runs four "do this later" scenarios on a real scheduler and prints
// every lifecycle event with its lateness, until Ctrl-C (SIGINT) or SIGTERM;
// then it shuts down gracefully. Times are scaled down (minutes become
// seconds) so that something happens every few seconds.
#include "cli/demo.h"

#include <csignal>
#include <cstdio>
#include <random>
#include <semaphore>
#include <string>

#include "ax/ax.h"

namespace ax::cli {
namespace {

std::binary_semaphore g_stop{0};
extern "C" void OnSignal(int) { g_stop.release(); }

Instant g_start;

void Print(const Event& e) {
  const double t = std::chrono::duration<double>(e.at - g_start).count();
  const std::string who = e.key.empty() ? e.id.ToString() : e.key;
  std::printf("[%8.3fs] %-11s %-18s", t, std::string(EventTypeName(e.type)).c_str(), who.c_str());
  if (e.type == EventType::kStarted) {
    std::printf(" attempt %d, lateness %.3f ms", e.attempt,
                std::chrono::duration<double, std::milli>(e.lateness).count());
  }
  if (e.type == EventType::kRetrying) {
    std::printf(" attempt %d in %.1f s", e.attempt,
                std::chrono::duration<double>(e.next_run - e.at).count());
  }
  if (e.type == EventType::kSkipped)
    std::printf(" %llu tick(s)", static_cast<unsigned long long>(e.count));
  if (!e.message.empty()) std::printf(" (%s)", e.message.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

Duration Scaled(Duration d, double speed) {
  return Duration(static_cast<int64_t>(static_cast<double>(d.count()) / speed));
}

using std::chrono::minutes;
using std::chrono::seconds;

// 1. Orders close after 30 minutes unless paid; every other one pays.
void AddOrders(Scheduler& s, double speed) {
  JobOptions every;
  every.key = "new-orders";
  (void)s.Every(
      Scaled(minutes(10), speed),
      [&s, speed, n = 0]() mutable {
        const std::string key = "order-" + std::to_string(1000 + ++n);
        JobOptions close;
        close.key = key;
        (void)s.After(
            Scaled(minutes(30), speed), [] {}, close);  // close the unpaid order
        if (n % 2 == 0) {
          JobOptions pay;
          pay.key = key + "-paid";
          (void)s.After(
              Scaled(minutes(12), speed), [&s, key] { (void)s.Cancel(key); }, pay);
        }
      },
      every);
}

// 2. A device-offline alarm, reset by heartbeats (set_delay) until they stop.
void AddDeviceAlarm(Scheduler& s, double speed) {
  JobOptions alarm;
  alarm.key = "device-7-offline";
  (void)s.After(
      Scaled(minutes(5), speed), [] {}, alarm);
  JobOptions beat;
  beat.key = "device-7-heartbeat";
  beat.auto_pause_after = 1;
  (void)s.Every(
      Scaled(minutes(2), speed),
      [&s, speed, n = 0]() mutable -> Status {
        if (++n > 5) return Status::Unavailable("device 7 went quiet");  // auto-pauses
        return s.SetDelay("device-7-offline", Scaled(minutes(5), speed));
      },
      beat);
}

// 3. Nightly report A, then B once A succeeded (A fails once, retries).
void AddReports(Scheduler& s, double speed) {
  JobOptions a;
  a.key = "report-A";
  a.retry = RetryPolicy::Fixed(3, Scaled(minutes(1), speed));
  (void)s.After(
      Scaled(minutes(3), speed),
      [n = 0]() mutable { return ++n == 1 ? Status::Unavailable("warehouse busy") : Status(); }, a);
  JobOptions b;
  b.key = "report-B";
  b.parent = "report-A";
  (void)s.After(
      Scaled(minutes(1), speed), [] {}, b);
}

// 4. A payment callback retried at 10 s, 20 s, 30 s until the merchant answers.
void AddPaymentNotify(Scheduler& s) {
  JobOptions notify;
  notify.key = "pay-notify-42";
  notify.retry = RetryPolicy::Linear(4, seconds(10));
  (void)s.After(
      seconds(1),
      [](const RunContext& ctx) {
        return ctx.attempt() < 3 ? Status::Unavailable("merchant returned 503") : Status();
      },
      notify);
}

void PrintSummary(const Stats& st, const ShutdownReport& r) {
  using ull = unsigned long long;
  std::printf(
      "fired %llu, succeeded %llu, failed %llu, retried %llu, cancelled %llu, "
      "p99 lateness <= %.3f ms; unfinished runs: %zu\n",
      static_cast<ull>(st.fired), static_cast<ull>(st.succeeded), static_cast<ull>(st.failed),
      static_cast<ull>(st.retried), static_cast<ull>(st.cancelled),
      static_cast<double>(st.lateness.QuantileUpperBoundNs(0.99)) / 1e6, r.unfinished.size());
}

}  // namespace

int DemoCommand(double speed) {
  SchedulerOptions o;
  o.workers = 4;
  o.observer = [](const Event& e) {
    if (e.type != EventType::kScheduled) Print(e);
  };
  Result<std::unique_ptr<Scheduler>> created = Scheduler::Create(o);
  if (!created.ok()) {
    std::fprintf(stderr, "ax demo: %s\n", created.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Scheduler> s = std::move(*created);
  g_start = s->Now();
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::printf("ax demo: four scenarios, %gx speed (a minute lasts %.1f s). Ctrl-C stops.\n", speed,
              60 / speed);
  AddOrders(*s, speed);
  AddDeviceAlarm(*s, speed);
  AddReports(*s, speed);
  AddPaymentNotify(*s);

  g_stop.acquire();
  std::printf("\nax demo: shutting down\n");
  ShutdownReport r = s->Shutdown(seconds(5));
  PrintSummary(s->GetStats(), r);
  return 0;
}

}  // namespace ax::cli
