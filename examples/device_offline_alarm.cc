// Raise an alarm when a device has been silent for 5 minutes; every heartbeat
// pushes the alarm back with set_delay. (Minutes scaled to 100 ms.)
#include <cstdio>
#include <thread>

#include <ax/ax.h>

int main() {
  const auto minute = std::chrono::milliseconds(100);
  auto scheduler = std::move(*ax::Scheduler::Create());
  ax::JobOptions o;
  o.key = "device-7-offline";
  (void)scheduler->After(
      5 * minute, [] { std::printf("ALARM: device 7 is offline\n"); }, o);

  for (int beat = 1; beat <= 4; ++beat) {  // heartbeats every 2 minutes, then silence
    std::this_thread::sleep_for(2 * minute);
    std::printf("heartbeat %d\n", beat);
    (void)scheduler->SetDelay("device-7-offline", 5 * minute);
  }
  std::this_thread::sleep_for(6 * minute);  // the alarm fires 5 minutes after the last beat
  std::printf("alarm job: %s\n",
              std::string(ax::JobStateName(scheduler->Info("device-7-offline")->state)).c_str());
  return 0;
}
