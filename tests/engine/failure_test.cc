// SPEC 2.6 (failure, retries, dead letters, auto-pause) and 2.7 (run
// context, timeouts, slow runs, stop on cancel).
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "fixture.h"

namespace ax::testing {
namespace {

using ::testing::HasSubstr;

class FailureTest : public EngineTest {};

TEST(RetryPolicy, Engine_2_6_BackoffShapes) {
  RetryPolicy fixed = RetryPolicy::Fixed(5, seconds(3));
  EXPECT_EQ(fixed.DelayAfter(1, 0), seconds(3));
  EXPECT_EQ(fixed.DelayAfter(4, 0), seconds(3));
  RetryPolicy linear = RetryPolicy::Linear(4, seconds(10));
  EXPECT_EQ(linear.DelayAfter(1, 0), seconds(10));
  EXPECT_EQ(linear.DelayAfter(2, 0), seconds(20));
  EXPECT_EQ(linear.DelayAfter(3, 0), seconds(30));
  RetryPolicy expo = RetryPolicy::Exponential(10, seconds(1), seconds(60));
  EXPECT_EQ(expo.DelayAfter(1, 0), seconds(1));
  EXPECT_EQ(expo.DelayAfter(2, 0), seconds(2));
  EXPECT_EQ(expo.DelayAfter(5, 0), seconds(16));
  EXPECT_EQ(expo.DelayAfter(7, 0), seconds(60));     // capped
  EXPECT_EQ(expo.DelayAfter(5000, 0), seconds(60));  // no overflow
  expo.jitter = true;
  EXPECT_EQ(expo.DelayAfter(5, 0), seconds(8));  // [wait/2, wait]
  EXPECT_EQ(expo.DelayAfter(5, 1), seconds(16));
  RetryPolicy bad;
  bad.max_attempts = 0;
  EXPECT_TRUE(HasCode(bad.Validate(), StatusCode::kInvalidArgument));
}

TEST_F(FailureTest, Engine_2_6_ThrowingCallbackNeitherKillsAWorkerNorStopsAPeriodicJob) {
  Start(1);
  std::atomic<int> runs{0};
  JobOptions o;
  o.auto_pause_after = 0;
  Result<JobId> a = s_->Every(
      seconds(1),
      [&] {
        ++runs;
        throw std::runtime_error("boom");
      },
      o);
  Result<JobId> b = s_->Every(
      seconds(1),
      [&](const RunContext&) -> Status {
        throw 42;  // not even a std::exception
      },
      o);
  for (int i = 0; i < 5; ++i) Advance(seconds(1));
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
  EXPECT_EQ(InfoOf(*a).failures, 5u);
  EXPECT_THAT(InfoOf(*a).last_error, HasSubstr("boom"));
  EXPECT_THAT(InfoOf(*b).last_error, HasSubstr("non-standard exception"));
  std::atomic<int> ok_runs{0};
  ASSERT_TRUE(s_->After(seconds(1), [&] { ++ok_runs; }).ok());
  Advance(seconds(1));
  EXPECT_EQ(ok_runs, 1);  // the one worker is alive
}

TEST_F(FailureTest, Engine_2_6_ErrorStatusFailsTheRun) {
  Result<JobId> a = s_->After(seconds(1), [] { return Status::Unavailable("down"); });
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*a).state, JobState::kDead);
  EXPECT_THAT(InfoOf(*a).last_error, HasSubstr("Unavailable: down"));
  EXPECT_EQ(s_->GetStats().failed, 1u);
}

TEST_F(FailureTest, Engine_2_6_SteppedRetriesSeeTheirAttemptNumber) {
  std::vector<std::pair<int, Instant>> attempts;
  std::mutex mu;
  JobOptions o;
  o.retry = RetryPolicy::Linear(4, seconds(10));
  Result<JobId> a = s_->After(
      seconds(1),
      [&](const RunContext& ctx) -> Status {
        std::lock_guard<std::mutex> l(mu);
        attempts.emplace_back(ctx.attempt(), clock_->Now());
        return ctx.attempt() < 4 ? Status::Unavailable("callback refused") : Status();
      },
      o);
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(11));
  Advance(seconds(10));
  Advance(seconds(20));
  Advance(seconds(29));
  EXPECT_EQ(attempts.size(), 3u);
  Advance(seconds(1));
  ASSERT_EQ(attempts.size(), 4u);
  EXPECT_EQ(attempts[0], std::make_pair(1, kStart + seconds(1)));
  EXPECT_EQ(attempts[1], std::make_pair(2, kStart + seconds(11)));
  EXPECT_EQ(attempts[2], std::make_pair(3, kStart + seconds(31)));
  EXPECT_EQ(attempts[3], std::make_pair(4, kStart + seconds(61)));
  EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted);
  EXPECT_EQ(s_->GetStats().retried, 3u);
  EXPECT_EQ(CountEvents(*a, EventType::kRetrying), 3u);
}

TEST_F(FailureTest, Engine_2_6_DeadAfterTheLastAttemptWithHookAndDeadLetter) {
  std::vector<Event> hooked;
  std::mutex mu;
  Start(2, [&](SchedulerOptions& o) {
    o.on_dead_letter = [&](const Event& e) {
      std::lock_guard<std::mutex> l(mu);
      hooked.push_back(e);
    };
  });
  JobOptions o;
  o.key = "pay-42";
  o.retry = RetryPolicy::Fixed(2, seconds(5));
  ASSERT_TRUE(s_->After(
                    seconds(1), [] { return Status::Internal("no"); }, o)
                  .ok());
  Advance(seconds(1));
  Advance(seconds(5));
  EXPECT_EQ(InfoOf("pay-42").state, JobState::kDead);
  ASSERT_EQ(hooked.size(), 1u);
  EXPECT_EQ(hooked[0].key, "pay-42");
  EXPECT_EQ(hooked[0].attempt, 2);
  ASSERT_EQ(s_->DeadLetters().size(), 1u);
  EXPECT_THAT(s_->DeadLetters()[0].message, HasSubstr("failed after 2 attempt(s)"));
  EXPECT_EQ(s_->GetStats().dead, 1u);
}

TEST_F(FailureTest, Engine_2_6_APeriodicOccurrenceDiesButTheScheduleGoesOn) {
  std::atomic<int> runs{0};
  JobOptions o;
  o.auto_pause_after = 0;
  Result<JobId> a = s_->Every(
      seconds(10),
      [&] {
        ++runs;
        return Status::Internal("no");
      },
      o);
  Advance(seconds(10));
  Advance(seconds(10));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
  EXPECT_EQ(s_->DeadLetters().size(), 2u);
}

TEST_F(FailureTest, Engine_2_6_PeriodicRetriesHappenBeforeTheNextTick) {
  std::vector<Instant> at;
  std::mutex mu;
  JobOptions o;
  o.retry = RetryPolicy::Fixed(3, seconds(1));
  Result<JobId> a = s_->Every(
      seconds(60),
      [&](const RunContext& ctx) -> Status {
        std::lock_guard<std::mutex> l(mu);
        at.push_back(clock_->Now());
        return ctx.attempt() < 3 ? Status::Unavailable("x") : Status();
      },
      o);
  Advance(seconds(60));
  Advance(seconds(1));
  Advance(seconds(1));
  EXPECT_EQ(at.size(), 3u);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(120));  // anchoring kept
  Advance(seconds(58));
  EXPECT_EQ(at.size(), 4u);
}

TEST_F(FailureTest, Engine_2_6_AutoPauseAfterNConsecutiveFailures) {
  std::atomic<int> runs{0};
  JobOptions o;
  o.auto_pause_after = 3;
  Result<JobId> a = s_->Every(
      seconds(1),
      [&] {
        ++runs;
        return Status::Unavailable("sensor offline");
      },
      o);
  for (int i = 0; i < 5; ++i) Advance(seconds(1));
  EXPECT_EQ(runs, 3);
  JobInfo info = InfoOf(*a);
  EXPECT_EQ(info.state, JobState::kPaused);
  EXPECT_THAT(info.reason, HasSubstr("3 consecutive failed runs"));
  EXPECT_THAT(info.reason, HasSubstr("sensor offline"));
  EXPECT_EQ(CountEvents(*a, EventType::kAutoPaused), 1u);
  AX_ASSERT_OK(s_->Resume(*a));
  Advance(seconds(1));
  EXPECT_EQ(runs, 4);
}

TEST_F(FailureTest, Engine_2_6_SuccessResetsTheConsecutiveCount) {
  std::atomic<int> runs{0};
  JobOptions o;
  o.auto_pause_after = 2;
  Result<JobId> a = s_->Every(
      seconds(1), [&] { return ++runs % 2 == 0 ? Status() : Status::Internal("odd"); }, o);
  for (int i = 0; i < 6; ++i) Advance(seconds(1));
  EXPECT_EQ(runs, 6);
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
}

TEST_F(FailureTest, Engine_2_7_RunContextCarriesIdKeyAttemptScheduledInstant) {
  JobOptions o;
  o.key = "ctx";
  std::optional<RunContext> seen;
  std::mutex mu;
  Result<JobId> a = s_->After(
      seconds(2),
      [&](const RunContext& ctx) {
        std::lock_guard<std::mutex> l(mu);
        seen.emplace(ctx.id(), "", ctx.attempt(), ctx.scheduled_at(), StopToken());
        EXPECT_EQ(ctx.key(), "ctx");
        EXPECT_FALSE(ctx.stop_requested());
      },
      o);
  Advance(seconds(3));
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->id(), *a);
  EXPECT_EQ(seen->attempt(), 1);
  EXPECT_EQ(seen->scheduled_at(), kStart + seconds(2));
}

TEST_F(FailureTest, Engine_2_7_TimeoutRequestsStopAndFailsWithoutWaiting) {
  Gate started, release;
  std::atomic<bool> stop_seen{false};
  JobOptions o;
  o.timeout = seconds(30);
  Result<JobId> a = s_->After(
      seconds(1),
      [&](const RunContext& ctx) {
        started.Open();
        release.Wait();
        stop_seen = ctx.stop_requested();
      },
      o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  clock_->Advance(seconds(30));
  ASSERT_TRUE(s_->WaitDispatched());
  // Still running, but the attempt already counts as failed (timed out).
  JobInfo info = InfoOf(*a);
  EXPECT_EQ(info.state, JobState::kDead);
  EXPECT_THAT(info.last_error, HasSubstr("timed out"));
  EXPECT_EQ(s_->GetStats().timed_out, 1u);
  release.Open();
  Settle();
  EXPECT_TRUE(stop_seen);
  EXPECT_EQ(CountEvents(*a, EventType::kTimedOut), 1u);
}

TEST_F(FailureTest, Engine_2_7_TimedOutAttemptIsRetried) {
  std::atomic<int> runs{0};
  Gate started, release;
  JobOptions o;
  o.timeout = seconds(5);
  o.retry = RetryPolicy::Fixed(2, seconds(1));
  Result<JobId> a = s_->After(
      seconds(1),
      [&](const RunContext& ctx) {
        ++runs;
        if (ctx.attempt() == 1) {
          started.Open();
          release.Wait();
        }
      },
      o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  clock_->Advance(seconds(5));
  ASSERT_TRUE(s_->WaitDispatched());
  clock_->Advance(seconds(1));
  ASSERT_TRUE(s_->WaitDispatched());
  for (int spins = 0; InfoOf(*a).state != JobState::kCompleted && spins < 10'000'000; ++spins) {
    std::this_thread::yield();
  }
  EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted);
  EXPECT_EQ(runs, 2);
  release.Open();
  Settle();
}

TEST_F(FailureTest, Engine_2_7_SlowRunRaisesAnEvent) {
  Gate started, release;
  JobOptions o;
  o.slow_after = seconds(10);
  Result<JobId> a = s_->After(
      seconds(1),
      [&] {
        started.Open();
        release.Wait();
      },
      o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  clock_->Advance(seconds(10));
  ASSERT_TRUE(s_->WaitDispatched());
  release.Open();
  Settle();
  EXPECT_EQ(CountEvents(*a, EventType::kSlow), 1u);
  EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted);  // slow is not failed
}

// Pausing and resuming a one-shot job between its attempts keeps its count:
// the callback saw attempt 1 twice, and the job made three of its two.
TEST_F(FailureTest, Engine_2_6_PauseAndResumeBetweenAttemptsKeepsTheAttemptCount) {
  std::mutex mu;
  std::vector<int> attempts;
  JobOptions o;
  o.retry = RetryPolicy::Fixed(2, seconds(10));
  Result<JobId> a = s_->After(
      seconds(1),
      [&](const RunContext& ctx) -> Status {
        std::lock_guard<std::mutex> l(mu);
        attempts.push_back(ctx.attempt());
        return Status::Internal("fail");
      },
      o);
  Advance(seconds(1));
  AX_ASSERT_OK(s_->Pause(*a));
  AX_ASSERT_OK(s_->Resume(*a));
  Advance(seconds(10));
  Advance(seconds(10));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(attempts, (std::vector<int>{1, 2}));
  EXPECT_EQ(InfoOf(*a).state, JobState::kDead);
}

// A throwing observer is ignored (engine.md), and the dead-letter hook is
// still called: both were in one try block.
TEST_F(FailureTest, Engine_2_6_AThrowingObserverDoesNotKeepTheDeadLetterHookFromItsCall) {
  std::atomic<int> hooks{0};
  Start(2, [&](SchedulerOptions& so) {
    so.observer = [](const Event&) { throw std::runtime_error("observer bug"); };
    so.on_dead_letter = [&](const Event&) { ++hooks; };
  });
  Result<JobId> a = s_->After(seconds(1), [] { throw std::runtime_error("x"); });
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*a).state, JobState::kDead);
  EXPECT_EQ(hooks, 1);
}

// A backoff past int64 (a cap of Duration::max()) is the longest duration,
// not a negative one that retried at once.
TEST_F(FailureTest, Engine_2_12_AHugeBackoffIsTheLongestDurationNotANegativeOne) {
  EXPECT_EQ(RetryPolicy::Fixed(2, Duration::max()).DelayAfter(1, 0), Duration::max());
  EXPECT_EQ(RetryPolicy::Exponential(100, hours(1), Duration::max()).DelayAfter(40, 0),
            Duration::max());
  std::atomic<int> runs{0};
  JobOptions o;
  o.retry = RetryPolicy::Fixed(2, Duration::max());
  Result<JobId> a = s_->After(
      seconds(1),
      [&]() -> Status {
        ++runs;
        return Status::Internal("f");
      },
      o);
  Advance(seconds(1));
  Advance(hours(24 * 365));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
  EXPECT_EQ(InfoOf(*a).next_run, kInstantMax);
}

// The children that die with their parent are dead letters within
// max_dead_letters, like any other.
TEST_F(FailureTest, Engine_2_6_ChildrenDeadWithTheirParentKeepTheDeadLetterBound) {
  Start(2, [](SchedulerOptions& so) { so.max_dead_letters = 1; });
  Result<JobId> p = s_->After(seconds(1), [] { throw std::runtime_error("x"); });
  JobOptions o;
  o.parent = p->ToString();
  ASSERT_TRUE(s_->After(
                    seconds(1), [] {}, o)
                  .ok());
  Result<JobId> last = s_->After(
      seconds(1), [] {}, o);
  Advance(seconds(1));
  EXPECT_EQ(s_->GetStats().dead, 3u);
  ASSERT_EQ(s_->DeadLetters().size(), 1u);
  EXPECT_EQ(s_->DeadLetters()[0].id, *last);
}

// The failure that auto-pauses a periodic job ends its occurrence like any
// other last attempt: dead, a dead letter, then paused.
TEST_F(FailureTest, Engine_2_6_TheFailureThatAutoPausesIsADeadLetterToo) {
  JobOptions o;
  o.auto_pause_after = 2;
  Result<JobId> a = s_->Every(
      seconds(1), []() -> Status { return Status::Internal("bad"); }, o);
  Advance(seconds(1));
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*a).state, JobState::kPaused);
  EXPECT_EQ(s_->GetStats().dead, 2u);
  EXPECT_EQ(s_->DeadLetters().size(), 2u);
  EXPECT_EQ(CountEvents(*a, EventType::kDead), 2u);
}

// The callables of children that die with their parent are destroyed after
// the engine lock is let go: one whose destructor calls the scheduler
// deadlocked the worker.
struct CallsTheSchedulerWhenDestroyed {
  Scheduler* s;
  explicit CallsTheSchedulerWhenDestroyed(Scheduler* sched) : s(sched) {}
  CallsTheSchedulerWhenDestroyed(CallsTheSchedulerWhenDestroyed&& o) noexcept : s(o.s) {
    o.s = nullptr;
  }
  ~CallsTheSchedulerWhenDestroyed() {
    if (s != nullptr) (void)s->GetStats();
  }
  void operator()() const {}
};
TEST_F(FailureTest, Engine_2_4_ChildrenOfADeadParentAreDestroyedUnlocked) {
  std::promise<void> done;
  std::thread watchdog([f = done.get_future()] {
    if (f.wait_for(seconds(20)) == std::future_status::timeout) {
      std::fprintf(stderr, "deadlock: a child's destructor waited for the engine lock\n");
      std::_Exit(1);
    }
  });
  Result<JobId> p = s_->After(seconds(1), [] { throw std::runtime_error("x"); });
  JobOptions o;
  o.parent = p->ToString();
  Result<JobId> c = s_->After(seconds(1), CallsTheSchedulerWhenDestroyed(s_.get()), o);
  Advance(seconds(1));
  done.set_value();
  watchdog.join();
  EXPECT_EQ(InfoOf(*c).state, JobState::kDead);
}

}  // namespace
}  // namespace ax::testing
