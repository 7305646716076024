// SPEC 2.8 (live changes) and 2.9 (dependencies).
#include <thread>

#include "fixture.h"

namespace ax::testing {
namespace {

using ::testing::HasSubstr;

class ChangesTest : public EngineTest {};

TEST_F(ChangesTest, Engine_2_8_SetDelayResetsADeviceOfflineAlarm) {
  std::atomic<int> alarms{0};
  JobOptions o;
  o.key = "device-7-offline";
  ASSERT_TRUE(s_->After(
                    minutes(5), [&] { ++alarms; }, o)
                  .ok());
  for (int i = 0; i < 10; ++i) {  // a heartbeat every 4 minutes
    Advance(minutes(4));
    AX_ASSERT_OK(s_->SetDelay("device-7-offline", minutes(5)));
  }
  EXPECT_EQ(alarms, 0);
  Advance(minutes(5));  // heartbeats stopped
  EXPECT_EQ(alarms, 1);
}

TEST_F(ChangesTest, Engine_2_8_SetDelayOnAPeriodicJobMovesTheNextRunThenThePeriodResumes) {
  std::vector<Instant> at;
  std::mutex mu;
  Result<JobId> a = s_->Every(seconds(10), [&](const RunContext& c) {
    std::lock_guard<std::mutex> l(mu);
    at.push_back(c.scheduled_at());
  });
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(3)));
  Advance(seconds(3));
  Advance(seconds(10));
  EXPECT_EQ(at, (std::vector<Instant>{kStart + seconds(3), kStart + seconds(13)}));
}

TEST_F(ChangesTest, Engine_2_8_SetPeriodKeepsTheCurrentDeadline) {
  std::vector<Instant> at;
  std::mutex mu;
  Result<JobId> a = s_->Every(seconds(10), [&](const RunContext& c) {
    std::lock_guard<std::mutex> l(mu);
    at.push_back(c.scheduled_at());
  });
  Advance(seconds(4));
  AX_ASSERT_OK(s_->SetPeriod(*a, seconds(3)));
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(10));
  EXPECT_EQ(InfoOf(*a).period, seconds(3));
  Advance(seconds(6));
  Advance(seconds(3));
  EXPECT_EQ(at, (std::vector<Instant>{kStart + seconds(10), kStart + seconds(13)}));
  Result<JobId> once = s_->After(seconds(1), [] {});
  EXPECT_TRUE(HasCode(s_->SetPeriod(*once, seconds(1)), StatusCode::kInvalidState));
}

TEST_F(ChangesTest, Engine_2_8_PauseResumeHasNoCatchUp) {
  std::vector<Instant> at;
  std::mutex mu;
  Result<JobId> a = s_->Every(seconds(10), [&](const RunContext& c) {
    std::lock_guard<std::mutex> l(mu);
    at.push_back(c.scheduled_at());
  });
  Advance(seconds(10));
  AX_ASSERT_OK(s_->Pause(*a));
  Advance(seconds(95));
  AX_ASSERT_OK(s_->Resume(*a));
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(115));
  Advance(seconds(10));
  EXPECT_EQ(at, (std::vector<Instant>{kStart + seconds(10), kStart + seconds(115)}));
  EXPECT_EQ(CountEvents(*a, EventType::kPaused), 1u);
  EXPECT_EQ(CountEvents(*a, EventType::kResumed), 1u);
}

TEST_F(ChangesTest, Engine_2_8_OneShotWhoseDeadlinePassedWhilePausedRunsAtOnce) {
  std::atomic<int> runs{0};
  Result<JobId> a = s_->After(seconds(10), [&] { ++runs; });
  AX_ASSERT_OK(s_->Pause(*a));
  Advance(seconds(60));
  EXPECT_EQ(runs, 0);
  AX_ASSERT_OK(s_->Resume(*a));
  Settle();
  EXPECT_EQ(runs, 1);
}

TEST_F(ChangesTest, Engine_2_8_OneShotNotYetDueKeepsItsDeadlineAcrossPause) {
  std::atomic<int> runs{0};
  Result<JobId> a = s_->After(seconds(10), [&] { ++runs; });
  AX_ASSERT_OK(s_->Pause(*a));
  Advance(seconds(5));
  AX_ASSERT_OK(s_->Resume(*a));
  Advance(seconds(4));
  EXPECT_EQ(runs, 0);
  Advance(seconds(1));
  EXPECT_EQ(runs, 1);
}

TEST_F(ChangesTest, Engine_2_8_ResetStormsNeverStarveDueJobs) {
  Start(2);
  std::atomic<int> due_runs{0};
  std::atomic<bool> stop{false};
  JobOptions o;
  o.key = "reset-me";
  ASSERT_TRUE(s_->After(
                    seconds(30), [] {}, o)
                  .ok());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(s_->After(seconds(1), [&] { ++due_runs; }).ok());
  std::vector<std::thread> storm;
  storm.reserve(2);
  std::atomic<uint64_t> changes{0};
  for (int t = 0; t < 2; ++t) {
    storm.emplace_back([&] {
      while (!stop) {
        (void)s_->SetDelay("reset-me", seconds(30));
        ++changes;
      }
    });
  }
  // The storm is under way before the jobs fall due: with workers draining
  // 1,000 runs in bulk, they could all be done before a storm thread ran.
  for (int spins = 0; changes == 0 && spins < 50'000'000; ++spins) std::this_thread::yield();
  clock_->Advance(seconds(1));
  // The due jobs run while the storm goes on.
  for (int spins = 0; due_runs < 1000 && spins < 50'000'000; ++spins) std::this_thread::yield();
  stop = true;
  for (auto& t : storm) t.join();
  EXPECT_EQ(due_runs, 1000);
  EXPECT_GT(changes.load(), 0u);
  Settle();
}

class DependencyTest : public EngineTest {};

TEST_F(DependencyTest, Engine_2_9_ChildRunsOnlyAfterTheParentSucceeds) {
  std::vector<std::string> order;
  std::mutex mu;
  auto log = [&](std::string s) {
    std::lock_guard<std::mutex> l(mu);
    order.push_back(std::move(s));
  };
  JobOptions a_opts;
  a_opts.key = "report-A";
  a_opts.retry = RetryPolicy::Fixed(3, minutes(1));
  std::atomic<int> a_runs{0};
  ASSERT_TRUE(s_->At(
                    kStart + hours(2),
                    [&]() -> Status {
                      log("A");
                      return ++a_runs < 2 ? Status::Unavailable("db busy") : Status();
                    },
                    a_opts)
                  .ok());
  JobOptions b_opts;
  b_opts.key = "report-B";
  b_opts.parent = "report-A";
  ASSERT_TRUE(s_->After(
                    minutes(5), [&] { log("B"); }, b_opts)
                  .ok());
  EXPECT_EQ(InfoOf("report-B").parent, InfoOf("report-A").id.ToString());
  EXPECT_FALSE(InfoOf("report-B").next_run.has_value());
  Advance(hours(2));    // A fails
  Advance(minutes(1));  // A succeeds; B's 5 minutes start now
  Advance(minutes(4));
  EXPECT_EQ(order, (std::vector<std::string>{"A", "A"}));
  Advance(minutes(1));
  EXPECT_EQ(order, (std::vector<std::string>{"A", "A", "B"}));
  // Its release is an event naming the parent (it once named the child).
  const std::vector<Event> scheduled = EventsOf(InfoOf("report-B").id, EventType::kScheduled);
  ASSERT_EQ(scheduled.size(), 2u);
  EXPECT_EQ(scheduled.back().message, "parent 'report-A' completed");
}

// A parent without options may be running when its child is submitted: the
// child waits for the parent's success all the same, and the parent's
// callable is not moved under its run.
TEST_F(DependencyTest, Engine_2_9_ChildOfARunningParentWaitsForIt) {
  for (const bool observed : {true, false}) {
    StartObserved(observed);
    Gate started;
    Gate release;
    auto capture = std::make_shared<int>(9);
    std::atomic<int> child_runs{0};
    Result<JobId> a = s_->After(seconds(1), [&, capture] {
      started.Open();
      release.Wait();
      EXPECT_EQ(*capture, 9);
    });
    clock_->Advance(seconds(1));
    ASSERT_TRUE(started.Wait());
    JobOptions o;
    o.parent = a->ToString();
    Result<JobId> b = s_->After(
        seconds(2), [&] { ++child_runs; }, o);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_FALSE(InfoOf(*b).next_run.has_value());
    release.Open();
    Settle();
    EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted) << observed;
    EXPECT_EQ(InfoOf(*b).next_run, kStart + seconds(3));
    EXPECT_EQ(capture.use_count(), 1);
    Advance(seconds(2));
    EXPECT_EQ(child_runs.load(), 1);
  }
}

// Without an observer a parent with no options takes the short paths of a
// plain job (Cancel, CompletePlain): its children still follow it. A
// plain cancel once left the child waiting for ever.
TEST_F(DependencyTest, Engine_2_9_ChildIsCancelledWhenTheParentIsCancelled) {
  for (const bool observed : {true, false}) {
    StartObserved(observed);
    auto capture = std::make_shared<int>(3);
    Result<JobId> a = s_->After(hours(1), [] {});
    JobOptions o;
    o.parent = a->ToString();
    Result<JobId> b = s_->After(
        seconds(1), [capture] {}, o);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    AX_ASSERT_OK(s_->Cancel(*a));
    EXPECT_EQ(InfoOf(*b).state, JobState::kCancelled) << observed;
    EXPECT_THAT(InfoOf(*b).reason, HasSubstr("cancelled"));
    EXPECT_EQ(capture.use_count(), 1) << observed;
    EXPECT_EQ(s_->GetStats().pending, 0u) << observed;
  }
}

TEST_F(DependencyTest, Engine_2_9_ChildDiesWhenTheParentDies) {
  for (const bool observed : {true, false}) {
    StartObserved(observed);
    Result<JobId> a = s_->After(seconds(1), [] { return Status::Internal("nope"); });
    JobOptions o;
    o.parent = a->ToString();
    Result<JobId> b = s_->After(
        seconds(1), [] {}, o);
    Advance(seconds(1));
    EXPECT_EQ(InfoOf(*b).state, JobState::kDead) << observed;
    EXPECT_THAT(InfoOf(*b).reason, HasSubstr("is dead"));
  }
}

TEST_F(DependencyTest, Engine_2_9_ChainsABC) {
  std::string order;
  std::mutex mu;
  auto step = [&](char c) {
    return [&, c] {
      std::lock_guard<std::mutex> l(mu);
      order += c;
    };
  };
  Result<JobId> a = s_->After(seconds(1), step('A'));
  JobOptions ob;
  ob.parent = a->ToString();
  Result<JobId> b = s_->After(seconds(1), step('B'), ob);
  JobOptions oc;
  oc.parent = b->ToString();
  Result<JobId> c = s_->After(seconds(1), step('C'), oc);
  JobOptions od;
  od.parent = c->ToString();
  ASSERT_TRUE(s_->Every(seconds(10), step('D'), od).ok());
  for (int i = 0; i < 4; ++i) Advance(seconds(1));
  EXPECT_EQ(order, "ABC");
  Advance(seconds(9));
  EXPECT_EQ(order, "ABCD");
}

TEST_F(DependencyTest, Engine_2_9_ParentMustBeALiveOneShotJob) {
  Result<JobId> p = s_->Every(seconds(1), [] {});
  JobOptions o;
  o.parent = p->ToString();
  EXPECT_TRUE(HasCode(s_->After(
                            seconds(1), [] {}, o)
                          .status(),
                      StatusCode::kInvalidArgument));
  Result<JobId> gone = s_->After(seconds(1), [] {});
  AX_ASSERT_OK(s_->Cancel(*gone));
  o.parent = gone->ToString();
  EXPECT_TRUE(HasCode(s_->After(
                            seconds(1), [] {}, o)
                          .status(),
                      StatusCode::kInvalidState));
  Result<JobId> done = s_->After(seconds(1), [] {});
  Advance(seconds(1));
  std::atomic<int> runs{0};
  o.parent = done->ToString();  // already completed: starts counting now
  ASSERT_TRUE(s_->After(
                    seconds(2), [&] { ++runs; }, o)
                  .ok());
  Advance(seconds(2));
  EXPECT_EQ(runs, 1);
}

// A child that waits for its parent and is paused and resumed meanwhile goes
// back to waiting for it: it ran at once before, scheduled at the epoch.
TEST_F(ChangesTest, Engine_2_9_AChildResumedBeforeItsParentCompletesStillWaitsForIt) {
  std::atomic<int> once{0};
  std::atomic<int> every{0};
  Result<JobId> p = s_->After(seconds(100), [] {});
  ASSERT_TRUE(p.ok());
  JobOptions o;
  o.parent = p->ToString();
  Result<JobId> c = s_->After(
      seconds(5), [&] { ++once; }, o);
  Result<JobId> e = s_->Every(
      seconds(5), [&] { ++every; }, o);
  ASSERT_TRUE(c.ok() && e.ok());
  for (JobId id : {*c, *e}) {
    AX_ASSERT_OK(s_->Pause(id));
    AX_ASSERT_OK(s_->Resume(id));
    EXPECT_EQ(InfoOf(id).state, JobState::kWaiting);
    EXPECT_FALSE(InfoOf(id).next_run.has_value());
  }
  AX_ASSERT_OK(s_->SetDelay(*c, seconds(1)));  // from the parent's success, still
  for (int i = 0; i < 10; ++i) Advance(seconds(5));
  EXPECT_EQ(once, 0);
  EXPECT_EQ(every, 0);
  Advance(seconds(50));  // the parent completes at +100 s
  EXPECT_EQ(InfoOf(*c).next_run, kStart + seconds(101));
  Advance(seconds(5));
  EXPECT_EQ(once, 1);
  EXPECT_EQ(every, 1);
}

// SetDelay on a cron child waiting for its parent: its first run comes that
// long after the parent's success, then the calendar. It was accepted and
// ignored.
TEST_F(ChangesTest, Engine_2_9_SetDelayOnACronChildCountsFromItsRelease) {
  std::mutex mu;
  std::vector<Instant> scheduled;
  Result<JobId> p = s_->After(seconds(10), [] {});
  JobOptions o;
  o.parent = p->ToString();
  Result<JobId> c = s_->Cron(
      "0 * * * *", "UTC",
      [&](const RunContext& ctx) {
        std::lock_guard<std::mutex> l(mu);
        scheduled.push_back(ctx.scheduled_at());
      },
      o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  AX_ASSERT_OK(s_->SetDelay(*c, seconds(5)));
  Advance(seconds(10));
  EXPECT_EQ(InfoOf(*c).next_run, kStart + seconds(15));
  Advance(seconds(5));
  EXPECT_EQ(InfoOf(*c).next_run, kStart + hours(1));
  Advance(hours(1));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(scheduled, (std::vector<Instant>{kStart + seconds(15), kStart + hours(1)}));
}

// A child paused while it waits, released by its parent meanwhile: it stays
// paused with no next run, and its deadline (parent's success + delay) holds
// at the resume.
TEST_F(ChangesTest, Engine_2_9_APausedChildReleasedByItsParentRunsAtItsDeadlineAfterResume) {
  std::mutex mu;
  std::vector<Instant> scheduled;
  std::vector<Instant> ran;
  Result<JobId> p = s_->After(seconds(10), [] {});
  JobOptions o;
  o.parent = p->ToString();
  Result<JobId> c = s_->After(
      seconds(5),
      [&](const RunContext& ctx) {
        std::lock_guard<std::mutex> l(mu);
        scheduled.push_back(ctx.scheduled_at());
        ran.push_back(s_->Now());
      },
      o);
  AX_ASSERT_OK(s_->Pause(*c));
  Advance(seconds(10));  // the parent completes: the child is due at +15 s
  EXPECT_EQ(InfoOf(*c).state, JobState::kPaused);
  EXPECT_FALSE(InfoOf(*c).next_run.has_value());
  Advance(seconds(1));
  AX_ASSERT_OK(s_->Resume(*c));
  EXPECT_EQ(InfoOf(*c).next_run, kStart + seconds(15));
  Advance(seconds(4));
  std::lock_guard<std::mutex> l(mu);
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0], kStart + seconds(15));
  EXPECT_EQ(scheduled[0], kStart + seconds(15));
}

// SetDelay on a running one-shot job whose run then fails with retries left:
// the retry goes to the delay set (engine.md: "runs again at now + delay
// after the current run, whatever its outcome"), not to both.
TEST_F(ChangesTest, Engine_2_8_SetDelayOnARunningOneShotThatFailsRetriesAtTheDelay) {
  Gate started;
  Gate release;
  std::mutex mu;
  std::vector<Instant> scheduled;
  std::vector<int> attempts;
  JobOptions o;
  o.retry = RetryPolicy::Fixed(3, seconds(10));
  Result<JobId> a = s_->After(
      seconds(1),
      [&](const RunContext& ctx) -> Status {
        bool first = false;
        {
          std::lock_guard<std::mutex> l(mu);
          scheduled.push_back(ctx.scheduled_at());
          attempts.push_back(ctx.attempt());
          first = scheduled.size() == 1;
        }
        if (!first) return Status();
        started.Open();
        release.Wait();
        return Status::Internal("fail");
      },
      o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(5)));
  release.Open();
  Settle();
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(6));
  Advance(seconds(30));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(scheduled, (std::vector<Instant>{kStart + seconds(1), kStart + seconds(6)}));
  EXPECT_EQ(attempts, (std::vector<int>{1, 2}));
  EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted);
}

// SetDelay on a running periodic job that pauses after this run: the delay
// counts from the resume, as for a paused job (2.3's table).
TEST_F(ChangesTest, Engine_2_8_SetDelayOnARunningJobThatPausesCountsFromTheResume) {
  Gate started;
  Gate release;
  std::atomic<int> n{0};
  Result<JobId> a = s_->Every(seconds(10), [&] {
    if (++n == 1) {
      started.Open();
      release.Wait();
    }
  });
  clock_->Advance(seconds(10));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->Pause(*a));
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(3)));
  release.Open();
  Settle();
  EXPECT_EQ(InfoOf(*a).state, JobState::kPaused);
  Advance(seconds(50));
  AX_ASSERT_OK(s_->Resume(*a));
  EXPECT_EQ(InfoOf(*a).next_run, clock_->Now() + seconds(3));
}

// A period whose next tick would overflow is refused; accepted, the job
// stopped for good after its next run.
TEST_F(ChangesTest, Engine_2_12_SetPeriodThatWouldOverflowIsInvalid) {
  std::atomic<int> runs{0};
  Result<JobId> a = s_->Every(seconds(1), [&] { ++runs; });
  EXPECT_TRUE(HasCode(s_->SetPeriod(*a, Duration::max()), StatusCode::kInvalidArgument));
  Advance(seconds(1));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(2));
}

}  // namespace
}  // namespace ax::testing
