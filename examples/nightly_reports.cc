// Report A, then report B only after A succeeded. A is retried when the
// warehouse is busy; B's own delay counts from A's success.
#include <atomic>
#include <cstdio>
#include <thread>

#include <ax/ax.h>

int main() {
  using std::chrono::milliseconds;
  auto scheduler = std::move(*ax::Scheduler::Create());

  ax::JobOptions a;
  a.key = "report-A";
  a.retry = ax::RetryPolicy::Fixed(3, milliseconds(200));
  std::atomic<int> tries{0};
  (void)scheduler->After(
      milliseconds(100),
      [&](const ax::RunContext& ctx) -> ax::Status {
        std::printf("report A, attempt %d\n", ctx.attempt());
        if (++tries == 1) return ax::Status::Unavailable("warehouse busy");
        return ax::Status();
      },
      a);

  ax::JobOptions b;
  b.key = "report-B";
  b.parent = "report-A";  // waits for A's success; cancelled if A is cancelled
  (void)scheduler->After(
      milliseconds(100), [] { std::printf("report B (after A)\n"); }, b);

  // Nightly: in production both would be cron jobs, e.g. Cron("0 2 * * *", "Asia/Shanghai").
  std::this_thread::sleep_for(milliseconds(800));
  return 0;
}
