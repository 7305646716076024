// Notify a merchant of a payment, retrying at 10 s, 20 s, 30 s (linear
// backoff) until it answers. (Seconds scaled to 50 ms.)
#include <cstdio>
#include <thread>

#include <ax/ax.h>

int main() {
  const auto second = std::chrono::milliseconds(50);
  ax::SchedulerOptions so;
  so.on_dead_letter = [](const ax::Event& e) {
    std::printf("dead letter %s: %s\n", e.key.c_str(), e.message.c_str());
  };
  auto scheduler = std::move(*ax::Scheduler::Create(so));

  ax::JobOptions o;
  o.key = "notify-payment-42";
  o.retry = ax::RetryPolicy::Linear(4, 10 * second);  // waits 10, 20, 30
  o.timeout = 5 * second;                             // a hung merchant counts as failed
  (void)scheduler->After(
      second,
      [](const ax::RunContext& ctx) -> ax::Status {
        std::printf("notify attempt %d\n", ctx.attempt());
        if (ctx.attempt() < 3) return ax::Status::Unavailable("merchant answered 503");
        return ax::Status();
      },
      o);

  std::this_thread::sleep_for(40 * second);
  auto info = scheduler->Info("notify-payment-42");
  std::printf("state %s after %llu runs\n", std::string(ax::JobStateName(info->state)).c_str(),
              static_cast<unsigned long long>(info->runs));
  return 0;
}
