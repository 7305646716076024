// Handing ahead (SchedulerOptions::hand_ahead): the scheduler thread hands a
// job due within the window to an idle worker, which sleeps until the
// deadline and starts it. Until it starts, the job is Waiting like any other:
// it never starts early, and a change, pause or cancel takes it back.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fixture.h"

namespace ax::testing {
namespace {

using std::chrono::microseconds;

class HandAheadTest : public EngineTest {
 protected:
  // Deadlines within hand_ahead (8 ms) of the clock are handed ahead once
  // the clock is within half of it: 10 ms from the start, so by 9.5.
  static constexpr Duration kDue = milliseconds(10);
  static constexpr Duration kNear = microseconds(9500);

  uint64_t Handed() { return s_->GetStats().handed_ahead; }

  // A job that counts its runs and records the clock when it started.
  Result<JobId> Counting(Duration delay, std::atomic<int>& runs, JobOptions o = {}) {
    return s_->After(
        delay,
        [this, &runs](const RunContext& ctx) {
          EXPECT_GE(clock_->Now(), ctx.scheduled_at()) << "started before its deadline";
          runs.fetch_add(1);
          return Status();
        },
        std::move(o));
  }
};

TEST_F(HandAheadTest, Engine_2_4_HandedAheadJobStartsAtItsDeadlineNotBefore) {
  for (bool observed : {true, false}) {
    SCOPED_TRACE(observed ? "observed" : "plain");
    StartObserved(observed);
    std::atomic<int> runs{0};
    Result<JobId> id = Counting(kDue, runs);
    ASSERT_TRUE(id.ok());
    Advance(kNear);
    EXPECT_EQ(Handed(), 1u);
    EXPECT_EQ(runs.load(), 0);
    const JobInfo info = InfoOf(*id);
    EXPECT_EQ(info.state, JobState::kWaiting);
    ASSERT_TRUE(info.next_run.has_value());
    EXPECT_EQ(*info.next_run, kStart + kDue);
    Advance(microseconds(499));
    EXPECT_EQ(runs.load(), 0);
    Advance(microseconds(1));
    EXPECT_EQ(runs.load(), 1);
    EXPECT_EQ(InfoOf(*id).state, JobState::kCompleted);
  }
}

TEST_F(HandAheadTest, Engine_2_8_SetDelayTakesBackAHandedAheadJob) {
  std::atomic<int> runs{0};
  Result<JobId> id = Counting(kDue, runs);
  ASSERT_TRUE(id.ok());
  Advance(kNear);
  ASSERT_EQ(Handed(), 1u);
  AX_ASSERT_OK(s_->SetDelay(*id, milliseconds(5)));
  EXPECT_EQ(InfoOf(*id).next_run, clock_->Now() + milliseconds(5));
  Advance(milliseconds(1));  // past the old deadline
  EXPECT_EQ(runs.load(), 0);
  Advance(milliseconds(4));
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(HandAheadTest, Engine_2_3_PauseTakesBackAHandedAheadJobAndResumeRunsIt) {
  std::atomic<int> runs{0};
  Result<JobId> id = Counting(kDue, runs);
  ASSERT_TRUE(id.ok());
  Advance(kNear);
  ASSERT_EQ(Handed(), 1u);
  AX_ASSERT_OK(s_->Pause(*id));
  Advance(milliseconds(5));
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(InfoOf(*id).state, JobState::kPaused);
  AX_ASSERT_OK(s_->Resume(*id));  // its deadline passed while paused: at once
  Advance(Duration::zero());
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(HandAheadTest, Engine_2_3_CancelledHandedAheadJobNeverRunsAndIsReleased) {
  for (bool observed : {true, false}) {
    SCOPED_TRACE(observed ? "observed (locked cancel)" : "plain (cancel without the lock)");
    StartObserved(observed);
    auto capture = std::make_shared<int>(0);
    std::atomic<int> runs{0};
    Result<JobId> id = s_->After(kDue, [capture, &runs](const RunContext&) {
      runs.fetch_add(1);
      return Status();
    });
    ASSERT_TRUE(id.ok());
    Advance(kNear);
    ASSERT_EQ(Handed(), 1u);
    AX_ASSERT_OK(s_->Cancel(*id));
    EXPECT_EQ(capture.use_count(), 1) << "the callback's captures outlive the cancel";
    Advance(milliseconds(5));
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(InfoOf(*id).state, JobState::kCancelled);
  }
}

TEST_F(HandAheadTest, Engine_2_4_DeadlineOrderHoldsAcrossHandedAheadAndLaterJobs) {
  Start(1);  // one worker: start order is run order
  std::mutex mu;
  std::vector<std::string> order;
  auto job = [&](const std::string& name) {
    return [&, name](const RunContext&) {
      std::lock_guard<std::mutex> l(mu);
      order.push_back(name);
      return Status();
    };
  };
  ASSERT_TRUE(s_->After(kDue, job("x")).ok());
  // Three of one deadline: all three are held for the scheduler thread,
  // which starts them in submission order.
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(s_->After(kDue + microseconds(500), job(name)).ok());
  }
  Advance(kNear);
  EXPECT_EQ(Handed(), 4u);  // x, and a, b and c held
  // Filed after the hand-off, inside the window: x's deadline but after x,
  // and earlier than a's.
  ASSERT_TRUE(s_->After(microseconds(500), job("y")).ok());
  ASSERT_TRUE(s_->After(microseconds(700), job("z")).ok());
  Advance(milliseconds(2));  // everything is due at once
  EXPECT_THAT(order, ::testing::ElementsAre("x", "y", "z", "a", "b", "c"));
}

// A job filed inside the window after a hand-off is handed ahead too, in
// its place by deadline. Here the one worker already sleeps until a later
// job's deadline and would not wake for it, so the scheduler thread starts
// it, on time.
TEST_F(HandAheadTest, Engine_2_4_JobFiledInsideTheWindowIsHandedAheadInDeadlineOrder) {
  Start(1);
  std::mutex mu;
  std::vector<std::pair<std::string, Instant>> started;
  auto job = [&](const std::string& name) {
    return [&, name](const RunContext& ctx) {
      std::lock_guard<std::mutex> l(mu);
      started.emplace_back(name, clock_->Now());
      EXPECT_GE(clock_->Now(), ctx.scheduled_at()) << name << " started before its deadline";
      return Status();
    };
  };
  ASSERT_TRUE(s_->After(kDue, job("x")).ok());
  Advance(kNear);
  ASSERT_EQ(Handed(), 1u);
  ASSERT_TRUE(s_->After(microseconds(300), job("y")).ok());  // before x
  Settle();
  EXPECT_EQ(Handed(), 2u) << "the job filed inside the window stayed in the wheel";
  Advance(microseconds(300));
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(started.size(), 1u) << "y did not start at its deadline";
    EXPECT_EQ(started[0].first, "y");
    EXPECT_EQ(started[0].second, kStart + kNear + microseconds(300));
  }
  Advance(microseconds(200));
  std::lock_guard<std::mutex> l(mu);
  ASSERT_EQ(started.size(), 2u);
  EXPECT_EQ(started[1].first, "x");
  EXPECT_EQ(started[1].second, kStart + kDue);
}

TEST_F(HandAheadTest, Engine_2_4_SlowCallbackDoesNotHoldUpTheNextHandedAheadJob) {
  Start(2);
  Gate slow_started, release, fast_ran;
  ASSERT_TRUE(s_->After(kDue, [&](const RunContext&) {
                  slow_started.Open();
                  EXPECT_TRUE(release.Wait());
                  return Status();
                }).ok());
  ASSERT_TRUE(s_->After(kDue + microseconds(600), [&](const RunContext&) {
                  fast_ran.Open();
                  return Status();
                }).ok());
  Advance(kNear);
  ASSERT_EQ(Handed(), 2u);
  clock_->Advance(microseconds(500));
  // The slow one starts and blocks (without the wait, the second one could
  // start first, and no worker would be busy yet: 1 run in 40 failed so).
  ASSERT_TRUE(slow_started.Wait());
  clock_->Advance(microseconds(600));
  EXPECT_TRUE(fast_ran.Wait()) << "the second job waited for the first one's callback";
  EXPECT_GE(s_->GetStats().busy_workers, 1u) << "a worker in a callback counts as busy";
  release.Open();
  Settle();
}

TEST_F(HandAheadTest, Engine_2_8_SetPeriodKeepsTheHandedAheadRun) {
  std::atomic<int> runs{0};
  JobOptions o;
  Result<JobId> id = s_->Every(
      kDue,
      [&runs](const RunContext&) {
        runs.fetch_add(1);
        return Status();
      },
      o);
  ASSERT_TRUE(id.ok());
  Advance(kNear);
  ASSERT_EQ(Handed(), 1u);
  AX_ASSERT_OK(s_->SetPeriod(*id, milliseconds(3)));
  Advance(microseconds(500));
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(InfoOf(*id).next_run, kStart + kDue + milliseconds(3));
}

TEST_F(HandAheadTest, Engine_2_11_ShutdownWakesWorkersAsleepUntilAHandedAheadJob) {
  std::atomic<int> runs{0};
  ASSERT_TRUE(Counting(hours(1), runs).ok());
  Advance(hours(1) - microseconds(100));
  ASSERT_EQ(Handed(), 1u);
  const ShutdownReport report = s_->Shutdown(seconds(10));
  EXPECT_TRUE(report.unfinished.empty());
  s_.reset();  // joins every thread; hangs if a worker sleeps on
  EXPECT_EQ(runs.load(), 0);
}

TEST_F(HandAheadTest, Engine_2_4_HandAheadOffHandsNothing) {
  Start(2, [](SchedulerOptions& o) { o.hand_ahead = Duration::zero(); });
  std::atomic<int> runs{0};
  ASSERT_TRUE(Counting(kDue, runs).ok());
  Advance(kNear);
  Advance(milliseconds(2));
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(Handed(), 0u);
}

// With a slack, deadlines within it of one another share the scheduler
// thread's wake-up (held), and a worker sleeps until each lone one: one
// wake-up each way.
TEST_F(HandAheadTest, Engine_2_4_WithSlackALoneDeadlineIsHandedAheadAndAGroupHeld) {
  Start(2, [](SchedulerOptions& o) { o.timer_slack = milliseconds(1); });
  // Inside one 16.8 ms tick of the wheel, where its next deadline is exact
  // (as in FiringTest's slack test): from the tick boundary after kStart.
  Advance(nanoseconds(393'216));
  const Instant p = clock_->Now();
  ASSERT_EQ(ToUnixNanos(p) % (int64_t{1} << 24), 0);
  std::atomic<int> pair{0};
  std::atomic<int> lone{0};
  for (Duration d : {Duration(milliseconds(10)), Duration(microseconds(10'500))}) {
    ASSERT_TRUE(Counting(d, pair).ok());
  }
  ASSERT_TRUE(Counting(milliseconds(15), lone).ok());
  // The pass half a window before the first deadline, plus the slack,
  // hands all three ahead; only the lone one can be claimed.
  Advance(milliseconds(7));
  EXPECT_EQ(Handed(), 3u);
  EXPECT_EQ(pair.load() + lone.load(), 0);
  // The pair starts on the scheduler thread's wake-up, the first deadline
  // plus the slack; the lone job is not early.
  Advance(milliseconds(4));
  EXPECT_EQ(pair.load(), 2);
  EXPECT_EQ(lone.load(), 0);
  EXPECT_EQ(s_->GetStats().started_ahead, 0u);
  // The lone job starts at its own deadline, not the slack after it. (A
  // worker sleeps until it; a pass of the scheduler thread that the runs'
  // ends asked for may take it first at that instant, as on any claim.)
  Advance(milliseconds(4));
  EXPECT_EQ(lone.load(), 1);
}

TEST_F(HandAheadTest, Engine_2_12_HandAheadOutsideItsRangeIsRefused) {
  for (Duration d : {Duration(-1), Duration(seconds(1) + nanoseconds(1))}) {
    SchedulerOptions o;
    o.hand_ahead = d;
    Result<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(HasCode(s.status(), StatusCode::kInvalidArgument));
    EXPECT_THAT(s.status().message(), ::testing::HasSubstr("hand_ahead"));
  }
}

}  // namespace
}  // namespace ax::testing
