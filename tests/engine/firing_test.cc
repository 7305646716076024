// SPEC 2.4: firing by one scheduler thread and a pool of workers.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "fixture.h"

namespace ax::testing {
namespace {

class FiringTest : public EngineTest {};

// Delegates to the fixture's ManualClock and records what the scheduler
// thread last asked to sleep until.
class SleepRecorder final : public Clock {
 public:
  explicit SleepRecorder(std::shared_ptr<ManualClock> inner) : inner_(std::move(inner)) {}
  Instant Now() const override { return inner_->Now(); }
  void WaitUntil(Instant deadline, Interrupt& interrupt) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      last_ = deadline;
      cv_.notify_all();
    }
    inner_->WaitUntil(deadline, interrupt);
  }
  bool IsManual() const override { return true; }
  // Whether the scheduler thread goes to sleep until `deadline` (10 s cap: a
  // broken engine, not timing).
  bool SleepsUntil(Instant deadline) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, seconds(10), [&] { return last_ == deadline; });
  }

 private:
  std::shared_ptr<ManualClock> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  Instant last_{};
};

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

// Plain one-shot jobs reach the wheel in batches (SchedulerImpl::FileNew);
// submissions that take the other path, with options or periodic, go in at
// once. Same-deadline order must not depend on which way a job went.
TEST_F(FiringTest, Engine_2_4_SameDeadlineOrderHoldsAcrossPlainAndOptionedSubmissions) {
  Start(1);
  std::vector<int> order;
  std::mutex mu;
  const Instant t = kStart + seconds(5);
  auto record = [&](int i) {
    return [&, i] {
      std::lock_guard<std::mutex> l(mu);
      order.push_back(i);
    };
  };
  for (int i = 0; i < 300; ++i) {
    if (i % 7 == 3) {
      JobOptions o;
      o.key = "k" + std::to_string(i);
      ASSERT_TRUE(s_->At(t, record(i), o).ok());
    } else {
      ASSERT_TRUE(s_->After(seconds(5), record(i)).ok());
    }
  }
  Advance(seconds(5));
  ASSERT_EQ(order.size(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(order[i], i);
}

// A job just made by After, before anything else has used the wheel, is
// already what every other call sees: waiting, with its next run, and open
// to changes and to cancellation.
TEST_F(FiringTest, Engine_2_4_AJobJustSubmittedCanBeReadChangedAndCancelled) {
  Start(1);
  std::atomic<int> runs{0};
  Result<JobId> a = s_->After(seconds(10), [&] { ++runs; });
  Result<JobId> b = s_->After(seconds(10), [&] { ++runs; });
  Result<JobId> c = s_->After(seconds(10), [&] { ++runs; });
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(10));
  AX_ASSERT_OK(s_->SetDelay(*b, seconds(2)));
  EXPECT_EQ(InfoOf(*b).next_run, kStart + seconds(2));
  AX_ASSERT_OK(s_->Cancel(*c));
  Advance(seconds(2));
  EXPECT_EQ(runs, 1);
  Advance(seconds(8));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(InfoOf(*c).state, JobState::kCancelled);
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

TEST_F(FiringTest, Engine_2_4_InAStormTheWorkerFiresTooInSubmissionOrder) {
  // More same-deadline jobs than the scheduler thread fires in one pass
  // (4,096): it then leaves the firing to the idle worker, which takes the
  // rest from the wheel in order (dispatch.cc, "Storms").
  Start(1);
  Gate gate;
  ASSERT_TRUE(s_->At(kStart + seconds(1), [&] { gate.Wait(); }).ok());
  const int n = 5 * 4096;
  std::vector<int> order;
  order.reserve(n);
  std::mutex mu;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(s_->At(kStart + seconds(1), [&, i] {
                    std::lock_guard<std::mutex> l(mu);
                    order.push_back(i);
                  }).ok());
  }
  clock_->Advance(seconds(1));
  gate.Open();
  Settle();
  ASSERT_EQ(order.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(order[i], i);
  // The scheduler thread fires again only when no worker has since its last
  // pass; how many passes it made before the worker's first take depends on
  // when WaitIdle asks it to look.
  EXPECT_GT(s_->GetStats().fired_by_workers, 0u);
}

TEST_F(FiringTest, Engine_2_5_PeriodicJobsFiredInAStormKeepTheirTicks) {
  Start(2);
  const int n = 3 * 4096;
  std::atomic<int> runs{0};
  std::vector<JobId> ids;
  for (int i = 0; i < n; ++i) {
    Result<JobId> id = s_->Every(seconds(1), [&] { ++runs; });
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  Advance(seconds(1));
  EXPECT_EQ(runs, n);
  EXPECT_GT(s_->GetStats().fired_by_workers, 0u);
  for (JobId id : {ids.front(), ids[n / 2], ids.back()}) {
    EXPECT_EQ(InfoOf(id).next_run, kStart + seconds(2));
  }
  Advance(seconds(1));
  EXPECT_EQ(runs, 2 * n);
  EXPECT_EQ(s_->GetStats().skipped, 0u);
}

TEST_F(FiringTest, Engine_2_4_TimerSlackSharesOneWakeUpAndNeverRunsEarly) {
  std::shared_ptr<SleepRecorder> recorder;
  Start(1, [&](SchedulerOptions& o) {
    recorder = std::make_shared<SleepRecorder>(clock_);
    o.clock = recorder;
    o.timer_slack = milliseconds(3);
    // The scheduler thread's own wake-ups; with a worker sleeping until a
    // lone deadline: HandAheadTest.
    o.hand_ahead = Duration::zero();
  });
  // Work inside one 16.8 ms tick of the wheel, where its next deadline is
  // exact rather than a slot's start (timer/wheel.h): from the tick boundary
  // that follows kStart (kStart is 16,384,000 ns into its tick).
  Advance(nanoseconds(393'216));
  const Instant p = clock_->Now();
  ASSERT_EQ(ToUnixNanos(p) % (int64_t{1} << 24), 0);
  std::atomic<int> ran{0};  // bit i: job i ran
  const int offsets_ms[] = {1, 2, 8};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s_->At(p + milliseconds(offsets_ms[i]), [&ran, i] { ran.fetch_or(1 << i); }).ok());
  }
  // Asleep until the first deadline plus the slack, not the deadline itself.
  EXPECT_TRUE(recorder->SleepsUntil(p + milliseconds(4)));
  // The clock reaches that wake-up: both jobs due by then run on it, the
  // 8 ms job does not run early, and the next sleep ends at 8 + 3 ms. (The
  // clock stops only at wake-ups: in between, whether the manual clock's
  // step wakes the scheduler is a race, and either outcome is allowed.)
  Advance(milliseconds(4));
  EXPECT_EQ(ran.load(), 0b011);
  EXPECT_TRUE(recorder->SleepsUntil(p + milliseconds(11)));
  // A job submitted with an earlier deadline moves the wake-up forward.
  ASSERT_TRUE(s_->At(p + milliseconds(5), [&ran] { ran.fetch_or(1 << 3); }).ok());
  EXPECT_TRUE(recorder->SleepsUntil(p + milliseconds(8)));
  Advance(milliseconds(4));
  EXPECT_EQ(ran.load(), 0b1111);
}

// WaitIdle once returned false after its whole timeout here: a job filed
// into a wheel slot that starts within the load-ahead (100 ms) after the
// scheduler thread's last pass made the wheel's next instant (a lower bound:
// the slot's start less the load-ahead) already past, while the thread slept
// until an earlier-armed instant (a retained job's expiry) and nothing woke
// it, so the engine never looked idle.
TEST_F(FiringTest, Engine_2_4_WaitIdleSeesALateFiledSlotAsIdle) {
  Start(1, [](SchedulerOptions& o) { o.retention = seconds(2); });
  // b: the start of a level-1 slot (64 ticks of 2^24 ns) well after kStart.
  const int64_t block = int64_t{1} << 30;
  const Instant b = FromUnixNanos((ToUnixNanos(kStart) / block + 3) * block);
  Advance((b - seconds(2) + milliseconds(50)) - clock_->Now());
  Result<JobId> retained = s_->After(hours(1), [] {});
  AX_ASSERT_OK(s_->Cancel(*retained));  // forgotten at b + 50 ms
  Advance((b - milliseconds(50)) - clock_->Now());
  std::atomic<int> runs{0};
  ASSERT_TRUE(s_->At(b + milliseconds(500), [&] { ++runs; }).ok());
  ASSERT_TRUE(s_->WaitIdle(seconds(5)));
  EXPECT_EQ(runs.load(), 0);
  Advance(milliseconds(100));
  EXPECT_TRUE(HasCode(s_->Info(*retained).status(), StatusCode::kNotFound));
  Advance(milliseconds(450));
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(FiringTest, Engine_2_4_TimerSlackOutsideItsRangeIsRefused) {
  for (Duration slack : {Duration(-1), Duration(hours(1) + nanoseconds(1))}) {
    SchedulerOptions o;
    o.clock = std::make_shared<ManualClock>(kStart);
    o.timer_slack = slack;
    Result<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), ::testing::HasSubstr("timer_slack"));
  }
}

// Jobs at 5, 3, 9, 1 and 7 ms, the clock moved 1 s at once, 200 times. The
// worker asleep for a job handed ahead and the scheduler thread holding
// earlier ones wake together; the earlier ones still start first. (When the
// worker started its own job first, 10 runs of 10 failed, at rounds 1 to 16;
// the first round alone failed about once in 300 runs.)
TEST_F(FiringTest, Engine_2_4_EarlierDeadlinesStartFirst) {
  Start(1);
  std::vector<int> order;
  std::mutex mu;
  for (int round = 0; round < 200; ++round) {
    const Instant now = clock_->Now();
    for (int i : {5, 3, 9, 1, 7}) {
      ASSERT_TRUE(s_->At(now + milliseconds(i), [&, i] {
                      std::lock_guard<std::mutex> l(mu);
                      order.push_back(i);
                    }).ok());
    }
    Advance(seconds(1));
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(order, (std::vector<int>{1, 3, 5, 7, 9})) << "round " << round;
    order.clear();
  }
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
  const Stats stats = s_->GetStats();
  EXPECT_GT(stats.fired_by_workers, 0u);  // the workers took part
  // Every run resolved, those a worker resolved in its next take's hold too.
  EXPECT_EQ(stats.succeeded, static_cast<uint64_t>(n));
}

}  // namespace
}  // namespace ax::testing
