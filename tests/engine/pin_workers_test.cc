// SchedulerOptions::pin_workers: each worker runs on one CPU of those the
// creating thread may run on, a different one for each while there are
// enough; without it the workers may run on any of them.
#include <vector>

#include <gtest/gtest.h>
#include <sched.h>

#include "ax/scheduler.h"

#include "two_workers.h"

namespace ax {
namespace {

cpu_set_t ThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return set;
}

// The CPU sets of two workers, taken while both run at once.
std::vector<cpu_set_t> WorkerCpus(bool pin) {
  SchedulerOptions o;
  o.pin_workers = pin;
  return SeenByTwoWorkers<cpu_set_t>(std::move(o), ThreadCpus);
}

TEST(PinWorkers, Engine_2_4_EachWorkerRunsOnOneCpuOfTheCreatorsOwn) {
  cpu_set_t allowed = ThreadCpus();
  const std::vector<cpu_set_t> seen = WorkerCpus(true);
  ASSERT_EQ(seen.size(), 2u);
  for (cpu_set_t m : seen) {
    EXPECT_EQ(CPU_COUNT(&m), 1);
    cpu_set_t both;
    CPU_AND(&both, &m, &allowed);
    EXPECT_TRUE(CPU_EQUAL(&both, &m));  // within the creator's CPUs
  }
  if (CPU_COUNT(&allowed) >= 2) {
    EXPECT_FALSE(CPU_EQUAL(&seen[0], &seen[1]));  // one CPU each
  }
}

TEST(PinWorkers, Engine_2_4_OffByDefault) {
  EXPECT_FALSE(SchedulerOptions().pin_workers);
  cpu_set_t allowed = ThreadCpus();
  for (cpu_set_t m : WorkerCpus(false)) EXPECT_TRUE(CPU_EQUAL(&m, &allowed));
}

}  // namespace
}  // namespace ax
