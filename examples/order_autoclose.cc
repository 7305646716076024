// Close an order 30 minutes after it was placed, unless it is paid first.
// (Minutes are scaled to 100 ms here so the example finishes quickly.)
#include <cstdio>
#include <string>
#include <thread>

#include <ax/ax.h>

int main() {
  const auto minute = std::chrono::milliseconds(100);
  auto scheduler = std::move(*ax::Scheduler::Create());

  for (int order = 1001; order <= 1003; ++order) {
    ax::JobOptions o;
    o.key = "close-order-" + std::to_string(order);  // the order id names the job
    auto id = scheduler->After(
        30 * minute, [order] { std::printf("order %d: unpaid after 30 min, closed\n", order); }, o);
    if (!id.ok()) std::printf("%s\n", id.status().ToString().c_str());
  }

  std::this_thread::sleep_for(10 * minute);  // the customer pays order 1002...
  if (scheduler->Cancel("close-order-1002").ok()) std::printf("order 1002: paid, stays open\n");

  std::this_thread::sleep_for(25 * minute);
  auto info = scheduler->Info("close-order-1001");
  std::printf("order 1001 job is %s\n", std::string(ax::JobStateName(info->state)).c_str());
  return 0;
}
