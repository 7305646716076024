// What two workers see at once: each runs `look` and then waits for the
// other, so both are running when they look (for what a worker thread is
// given: its CPUs, its time slice).
#pragma once

#include <latch>
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ax/scheduler.h"

namespace ax {

template <typename T, typename Look>
std::vector<T> SeenByTwoWorkers(SchedulerOptions o, Look look) {
  o.workers = 2;
  std::unique_ptr<Scheduler> s = Scheduler::Create(std::move(o)).value();
  std::latch both(2);
  std::mutex mu;
  std::vector<T> seen;
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(s->After(Duration(0), [&] {
                   const T mine = look();
                   {
                     std::lock_guard<std::mutex> l(mu);
                     seen.push_back(mine);
                   }
                   both.arrive_and_wait();
                 }).ok());
  }
  s->WaitIdle();
  return seen;
}

}  // namespace ax
