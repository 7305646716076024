// SPEC 2.4: firing by one scheduler thread and a pool of workers.
#include <thread>

#include "fixture.h"

namespace ax::testing {
namespace {

class FiringTest : public EngineTest {};

TEST_F(FiringTest, Engine_2_4_SameDeadlineKeepsSubmissionOrder) {
  Start(1);
  std::vector<int> order;
  std::mutex mu;
  const Instant t = kStart + seconds(5);
  for (int i = 0; i < 500; ++i) {
    // Interleave far and near submissions so entries reach the deadline by
    // different routes through the timer structure.
    ASSERT_TRUE(s_->At(t, [&, i] {
                    std::lock_guard<std::mutex> l(mu);
                    order.push_back(i);
                  }).ok());
    if (i == 250) Advance(seconds(4));
  }
  Advance(seconds(1));
  ASSERT_EQ(order.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(order[i], i);
}

TEST_F(FiringTest, Engine_2_4_StormBeyondTheHandOffLimitRunsOnceEachInOrder) {
  // More same-deadline jobs than the scheduler hands off at once (it holds
  // the rest back until the workers catch up), behind a blocked worker.
  Start(1);
  Gate gate;
  ASSERT_TRUE(s_->At(kStart + seconds(1), [&] { gate.Wait(); }).ok());
  const int n = 20'000;
  std::vector<int> order;
  order.reserve(n);
  std::mutex mu;
  std::vector<JobId> ids;
  for (int i = 0; i < n; ++i) {
    Result<JobId> id = s_->At(kStart + seconds(1), [&, i] {
      std::lock_guard<std::mutex> l(mu);
      order.push_back(i);
    });
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  clock_->Advance(seconds(1));
  ASSERT_TRUE(s_->Cancel(ids[n - 1]).ok());  // still waiting: held back or queued
  gate.Open();
  Settle();
  ASSERT_EQ(order.size(), static_cast<size_t>(n - 1));
  for (int i = 0; i < n - 1; ++i) ASSERT_EQ(order[i], i);
  EXPECT_EQ(InfoOf(ids[n - 1]).state, JobState::kCancelled);
}

TEST_F(FiringTest, Engine_2_4_EarlierDeadlinesStartFirst) {
  Start(1);
  std::vector<int> order;
  std::mutex mu;
  for (int i : {5, 3, 9, 1, 7}) {
    ASSERT_TRUE(s_->At(kStart + milliseconds(i), [&, i] {
                    std::lock_guard<std::mutex> l(mu);
                    order.push_back(i);
                  }).ok());
  }
  Advance(seconds(1));
  EXPECT_EQ(order, (std::vector<int>{1, 3, 5, 7, 9}));
}

TEST_F(FiringTest, Engine_2_4_SlowCallbackDoesNotDelayOtherDueJobs) {
  Start(2);
  Gate slow_started, release;
  std::atomic<int> fast_runs{0};
  ASSERT_TRUE(s_->After(seconds(1), [&] {
                  slow_started.Open();
                  release.Wait();
                }).ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(s_->After(seconds(2), [&] { ++fast_runs; }).ok());
  }
  clock_->Advance(seconds(1));
  ASSERT_TRUE(slow_started.Wait());
  clock_->Advance(seconds(1));
  // All 100 run on the other worker while the slow one is still blocked.
  for (int spins = 0; fast_runs < 100 && spins < 10'000'000; ++spins) std::this_thread::yield();
  EXPECT_EQ(fast_runs, 100);
  release.Open();
  Settle();
}

TEST_F(FiringTest, Engine_2_4_SchedulerKeepsWorkingWhileEveryWorkerIsBusy) {
  Start(1);
  Gate started, release;
  JobOptions o;
  o.timeout = seconds(5);
  Result<JobId> stuck = s_->After(
      seconds(1),
      [&] {
        started.Open();
        release.Wait();
      },
      o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  // Calls return, and the scheduler thread still fires the timeout.
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(s_->After(hours(1), [] {}).ok());
  clock_->Advance(seconds(5));
  for (int spins = 0; InfoOf(*stuck).failures == 0 && spins < 10'000'000; ++spins) {
    std::this_thread::yield();
  }
  EXPECT_EQ(InfoOf(*stuck).failures, 1u);
  release.Open();
  Settle();
  EXPECT_EQ(CountEvents(*stuck, EventType::kTimedOut), 1u);
}

TEST_F(FiringTest, Engine_2_4_CallbacksMayScheduleCancelAndChangeJobsWithoutDeadlock) {
  Start(2);
  std::atomic<int> inner_runs{0};
  JobOptions victim_opts;
  victim_opts.key = "victim";
  ASSERT_TRUE(s_->After(
                    hours(1), [] {}, victim_opts)
                  .ok());
  Result<JobId> periodic = s_->Every(seconds(10), [&] { ++inner_runs; });
  Result<JobId> outer = s_->After(seconds(1), [&](const RunContext& ctx) {
    EXPECT_TRUE(s_->After(seconds(1), [&] { ++inner_runs; }).ok());
    EXPECT_TRUE(s_->Cancel("victim").ok());
    EXPECT_TRUE(s_->SetDelay(*periodic, seconds(1)).ok());
    EXPECT_TRUE(s_->Pause(*periodic).ok());
    EXPECT_TRUE(s_->Resume(*periodic).ok());
    EXPECT_TRUE(s_->SetDelay(*periodic, seconds(1)).ok());
    EXPECT_TRUE(s_->SetPeriod(*periodic, seconds(5)).ok());
    EXPECT_TRUE(s_->Info(ctx.id()).ok());
    (void)s_->GetStats();
    (void)s_->List(std::nullopt, 10);
  });
  Advance(seconds(1));
  Advance(seconds(1));
  EXPECT_EQ(inner_runs, 2);
  EXPECT_EQ(InfoOf("victim").state, JobState::kCancelled);
  EXPECT_EQ(InfoOf(*outer).state, JobState::kCompleted);
}

TEST_F(FiringTest, Engine_2_4_ObserverMayCallBackIntoTheScheduler) {
  std::atomic<int> seen{0};
  Start(2, [&](SchedulerOptions& o) {
    o.observer = [&](const Event& e) {
      if (e.type == EventType::kCompleted) {
        (void)s_->Info(e.id);
        ++seen;
      }
    };
  });
  ASSERT_TRUE(s_->After(seconds(1), [] {}).ok());
  Advance(seconds(1));
  EXPECT_EQ(seen, 1);
}

TEST_F(FiringTest, Engine_2_4_FireStormAllRunAndCallsStillAnswer) {
  Start(2);
  std::atomic<int> runs{0};
#ifdef __SANITIZE_THREAD__
  const int n = 20'000;  // TSan runs ~20x slower
#else
  const int n = 200'000;
#endif
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s_->At(kStart + seconds(1), [&] { ++runs; }).ok());
  clock_->Advance(seconds(1));
  // While the storm drains, calls keep being answered.
  Result<JobId> late = s_->After(seconds(1), [] {});
  EXPECT_TRUE(late.ok());
  Settle();
  EXPECT_EQ(runs, n);
}

}  // namespace
}  // namespace ax::testing
