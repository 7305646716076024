// An outside project using the installed libax on a manual clock.
#include <atomic>
#include <cstdio>

#include <ax/ax.h>

int main() {
  auto clock = std::make_shared<ax::ManualClock>();
  ax::SchedulerOptions o;
  o.clock = clock;
  auto s = std::move(*ax::Scheduler::Create(o));
  std::atomic<int> runs{0};
  if (!s->After(std::chrono::seconds(5), [&] { ++runs; }).ok()) return 1;
  clock->Advance(std::chrono::seconds(5));
  if (!s->WaitIdle()) return 1;
  std::printf("ran %d job\n", runs.load());
  return runs == 1 ? 0 : 1;
}
