// SPEC 2.3: the state table, exactly as tabled, and what cancel releases.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fixture.h"

namespace ax::testing {
namespace {

class StatesTest : public EngineTest {
 protected:
  // A job that holds the only worker (Start(1)) in its callback until
  // `release` opens; then DueBehindIt makes the jobs due at 1 s wait in the
  // queue behind it: Running, not started.
  void HoldTheWorker(Gate& started, Gate& release) {
    ASSERT_TRUE(s_->After(seconds(1), [&] {
                    started.Open();
                    release.Wait();
                  }).ok());
  }
  void DueBehindIt(Gate& started) {
    clock_->Advance(seconds(1));
    ASSERT_TRUE(started.Wait());
    ASSERT_TRUE(s_->WaitDispatched());
  }
};

TEST_F(StatesTest, Engine_2_3_Waiting) {
  Result<JobId> a = s_->After(seconds(10), [] {});
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
  EXPECT_TRUE(HasCode(s_->Resume(*a), StatusCode::kInvalidState));
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(20)));
  AX_ASSERT_OK(s_->Pause(*a));
  EXPECT_EQ(InfoOf(*a).state, JobState::kPaused);
  Result<JobId> b = s_->After(seconds(10), [] {});
  AX_ASSERT_OK(s_->Cancel(*b));
  EXPECT_EQ(InfoOf(*b).state, JobState::kCancelled);
}

TEST_F(StatesTest, Engine_2_3_RunningOneShot) {
  Gate started, release;
  std::atomic<bool> stop_seen{false};
  Result<JobId> a = s_->After(seconds(1), [&](const RunContext& ctx) {
    started.Open();
    release.Wait();
    stop_seen = ctx.stop_requested();
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  EXPECT_EQ(InfoOf(*a).state, JobState::kRunning);
  EXPECT_TRUE(HasCode(s_->Pause(*a), StatusCode::kInvalidState));
  EXPECT_TRUE(HasCode(s_->Resume(*a), StatusCode::kInvalidState));
  AX_ASSERT_OK(s_->Cancel(*a));  // run not interrupted, stop requested
  EXPECT_EQ(InfoOf(*a).state, JobState::kCancelled);
  release.Open();
  Settle();
  EXPECT_TRUE(stop_seen);
  EXPECT_EQ(InfoOf(*a).state, JobState::kCancelled);
  EXPECT_EQ(CountEvents(*a, EventType::kCompleted), 0u);
}

TEST_F(StatesTest, Engine_2_3_RunningPeriodicPausesAfterThisRun) {
  Gate started, release;
  std::atomic<int> runs{0};
  Result<JobId> a = s_->Every(seconds(1), [&] {
    if (++runs == 1) {
      started.Open();
      release.Wait();
    }
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->Pause(*a));
  EXPECT_EQ(InfoOf(*a).state, JobState::kRunning);
  EXPECT_TRUE(HasCode(s_->Resume(*a), StatusCode::kInvalidState));
  release.Open();
  Settle();
  EXPECT_EQ(InfoOf(*a).state, JobState::kPaused);
  Advance(seconds(10));
  EXPECT_EQ(runs, 1);
}

TEST_F(StatesTest, Engine_2_3_RunningCancelStopsFurtherRuns) {
  Gate started, release;
  std::atomic<int> runs{0};
  Result<JobId> a = s_->Every(seconds(1), [&] {
    if (++runs == 1) {
      started.Open();
      release.Wait();
    }
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->Cancel(*a));
  release.Open();
  Advance(seconds(10));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(InfoOf(*a).state, JobState::kCancelled);
}

TEST_F(StatesTest, Engine_2_3_RunningSetDelayAppliesToTheNextRun) {
  Gate started, release;
  std::vector<Instant> at;
  std::mutex mu;
  Result<JobId> a = s_->Every(seconds(10), [&](const RunContext& ctx) {
    {
      std::lock_guard<std::mutex> l(mu);
      at.push_back(ctx.scheduled_at());
    }
    if (at.size() == 1) {
      started.Open();
      release.Wait();
    }
  });
  clock_->Advance(seconds(10));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(3)));
  release.Open();
  Settle();
  Advance(seconds(3));
  ASSERT_EQ(at.size(), 2u);
  EXPECT_EQ(at[1], kStart + seconds(13));
}

TEST_F(StatesTest, Engine_2_3_Paused) {
  std::atomic<int> runs{0};
  Result<JobId> a = s_->After(seconds(10), [&] { ++runs; });
  AX_ASSERT_OK(s_->Pause(*a));
  EXPECT_TRUE(HasCode(s_->Pause(*a), StatusCode::kInvalidState));
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(5)));  // counts from the resume
  Advance(seconds(30));
  EXPECT_EQ(runs, 0);
  AX_ASSERT_OK(s_->Resume(*a));
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
  EXPECT_EQ(InfoOf(*a).next_run, clock_->Now() + seconds(5));
  Advance(seconds(5));
  EXPECT_EQ(runs, 1);
  Result<JobId> b = s_->After(seconds(10), [] {});
  AX_ASSERT_OK(s_->Pause(*b));
  AX_ASSERT_OK(s_->Cancel(*b));
  EXPECT_EQ(InfoOf(*b).state, JobState::kCancelled);
}

TEST_F(StatesTest, Engine_2_3_TerminalStatesRefuseEveryChange) {
  Result<JobId> completed = s_->After(seconds(1), [] {});
  Result<JobId> cancelled = s_->After(seconds(1), [] {});
  Result<JobId> dead = s_->After(seconds(1), [] { throw std::runtime_error("boom"); });
  AX_ASSERT_OK(s_->Cancel(*cancelled));
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*completed).state, JobState::kCompleted);
  EXPECT_EQ(InfoOf(*dead).state, JobState::kDead);
  for (JobId id : {*completed, *cancelled, *dead}) {
    EXPECT_TRUE(HasCode(s_->Pause(id), StatusCode::kInvalidState));
    EXPECT_TRUE(HasCode(s_->Resume(id), StatusCode::kInvalidState));
    EXPECT_TRUE(HasCode(s_->Cancel(id), StatusCode::kInvalidState));
    EXPECT_TRUE(HasCode(s_->SetDelay(id, seconds(1)), StatusCode::kInvalidState));
    EXPECT_TRUE(HasCode(s_->SetPeriod(id, seconds(1)), StatusCode::kInvalidState));
  }
}

TEST_F(StatesTest, Engine_2_3_CancelReleasesTheCallbackAtOnce) {
  auto capture = std::make_shared<int>(7);
  Result<JobId> a = s_->After(hours(1), [capture] { (void)*capture; });
  Result<JobId> p = s_->Every(hours(1), [capture] { (void)*capture; });
  EXPECT_EQ(capture.use_count(), 3);
  AX_ASSERT_OK(s_->Cancel(*a));
  EXPECT_EQ(capture.use_count(), 2);
  AX_ASSERT_OK(s_->Cancel(*p));
  EXPECT_EQ(capture.use_count(), 1);
}

// A one-shot job without options keeps no cold record; the rearm of a
// SetDelay while it runs waits in its run until the callback returns, and its
// callable (with its captures) stays put meanwhile. With and without an
// observer, which takes runs off the workers' lock-free start.
TEST_F(StatesTest, Engine_2_3_RunningPlainOneShotSetDelayRunsItAgain) {
  for (const bool observed : {true, false}) {
    StartObserved(observed);
    Gate started;
    Gate release;
    auto capture = std::make_shared<int>(5);
    std::atomic<int> runs{0};
    std::vector<Instant> at(2);
    Result<JobId> a = s_->After(seconds(1), [&, capture](const RunContext& ctx) {
      const int n = runs.fetch_add(1);
      at[static_cast<size_t>(n)] = ctx.scheduled_at();
      if (n == 0) {
        started.Open();
        release.Wait();
      }
      EXPECT_EQ(*capture, 5);
    });
    ASSERT_TRUE(a.ok());
    clock_->Advance(seconds(1));
    ASSERT_TRUE(started.Wait());
    EXPECT_EQ(InfoOf(*a).state, JobState::kRunning);
    AX_ASSERT_OK(s_->SetDelay(*a, seconds(3)));
    AX_ASSERT_OK(s_->SetDelay(*a, seconds(4)));  // the last one counts
    release.Open();
    Settle();
    EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting) << observed;
    EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(5));
    Advance(seconds(3));
    EXPECT_EQ(runs.load(), 1);
    Advance(seconds(1));
    EXPECT_EQ(runs.load(), 2);
    EXPECT_EQ(at[1], kStart + seconds(5));
    EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted);
    EXPECT_EQ(capture.use_count(), 1);  // released with the completion
  }
}

TEST_F(StatesTest, Engine_2_3_CancelOfARunningJobReleasesWhenTheRunEnds) {
  auto capture = std::make_shared<int>(7);
  Gate started, release;
  Result<JobId> a = s_->After(seconds(1), [&, capture] {
    started.Open();
    release.Wait();
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->Cancel(*a));
  EXPECT_EQ(capture.use_count(), 2);  // still running: not destroyed under it
  release.Open();
  Settle();
  EXPECT_EQ(capture.use_count(), 1);
}

// A job whose run waits in the queue behind a busy worker (Running, not
// started): a cancel drops the run and releases the callable at once. It
// stayed until a worker came to the dropped run (300 ms behind a slow
// callback, or any time). A periodic job's replaced run lets go the same way.
TEST_F(StatesTest, Engine_2_3_CancelOfAQueuedRunReleasesAtOnce) {
  for (const bool observed : {true, false}) {
    Start(1, [observed](SchedulerOptions& o) {
      if (!observed) o.observer = nullptr;
    });
    Gate started;
    Gate release;
    ASSERT_NO_FATAL_FAILURE(HoldTheWorker(started, release));
    auto capture = std::make_shared<int>(7);
    std::atomic<int> runs{0};
    Result<JobId> a = s_->After(seconds(1), [&runs, capture] { ++runs; });
    ASSERT_NO_FATAL_FAILURE(DueBehindIt(started));
    EXPECT_EQ(InfoOf(*a).state, JobState::kRunning) << observed;
    EXPECT_EQ(s_->GetStats().queue_depth, 1u);
    AX_ASSERT_OK(s_->Cancel(*a));
    EXPECT_EQ(capture.use_count(), 1) << observed;
    release.Open();
    Settle();
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(InfoOf(*a).state, JobState::kCancelled);
    EXPECT_EQ(InfoOf(*a).runs, 0u);
  }
}

// A periodic job whose run waits in the queue behind a busy worker (Running,
// not started): a pause drops that run and pauses the job at once, so that no
// run starts after Pause returned. The run used to start once the worker was
// free, and the job to pause only after it.
TEST_F(StatesTest, Engine_2_3_PauseOfAQueuedPeriodicRunDropsIt) {
  Start(1);
  Gate started;
  Gate release;
  ASSERT_NO_FATAL_FAILURE(HoldTheWorker(started, release));
  auto capture = std::make_shared<int>(7);
  std::atomic<int> runs{0};
  Result<JobId> a = s_->Every(seconds(1), [&runs, capture] { ++runs; });
  ASSERT_NO_FATAL_FAILURE(DueBehindIt(started));
  EXPECT_EQ(InfoOf(*a).state, JobState::kRunning);
  AX_ASSERT_OK(s_->Pause(*a));
  EXPECT_EQ(InfoOf(*a).state, JobState::kPaused);
  EXPECT_EQ(capture.use_count(), 2);  // paused, not ended: the job keeps its callable
  release.Open();
  Settle();
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(InfoOf(*a).state, JobState::kPaused);
  EXPECT_EQ(CountEvents(*a, EventType::kStarted), 0u);
  EXPECT_EQ(CountEvents(*a, EventType::kPaused), 1u);
  AX_ASSERT_OK(s_->Resume(*a));  // one period after the resume
  Advance(seconds(1));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(InfoOf(*a).state, JobState::kWaiting);
}

TEST_F(StatesTest, Engine_2_3_CompletedJobsReleaseTheirCallback) {
  auto capture = std::make_shared<int>(7);
  ASSERT_TRUE(s_->After(seconds(1), [capture] {}).ok());
  Advance(seconds(1));
  EXPECT_EQ(capture.use_count(), 1);
}

// Plain one-shot jobs (no options, no observer) end on the workers' short
// path; one that fails, or that gets a cold record while it runs, does not.
// All of them must land in the same states and counts.
TEST_F(StatesTest, Engine_2_3_PlainRunsEndLikeAnyOther) {
  Start(2, [](SchedulerOptions& o) { o.observer = nullptr; });
  std::vector<JobId> plain(200);
  for (JobId& id : plain) id = *s_->After(seconds(1), [] {});
  Result<JobId> failing = s_->After(seconds(1), [] { return Status::Internal("no"); });
  Gate started, release;
  Result<JobId> changed = s_->After(seconds(1), [&] {
    started.Open();
    release.Wait();
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->SetDelay(*changed, seconds(5)));  // a cold record, mid-run
  release.Open();
  Settle();
  for (JobId id : plain) EXPECT_EQ(InfoOf(id).state, JobState::kCompleted);
  EXPECT_EQ(InfoOf(*failing).state, JobState::kDead);
  EXPECT_EQ(InfoOf(*changed).state, JobState::kWaiting);  // runs again in 5 s
  Stats st = s_->GetStats();
  EXPECT_EQ(st.fired, 202u);
  EXPECT_EQ(st.succeeded, 201u);
  EXPECT_EQ(st.failed, 1u);
  EXPECT_EQ(st.running, 0u);
  EXPECT_EQ(st.pending, 1u);
  Advance(seconds(5));
  EXPECT_EQ(InfoOf(*changed).state, JobState::kCompleted);
  st = s_->GetStats();
  EXPECT_EQ(st.succeeded, 202u);
  EXPECT_EQ(st.pending, 0u);
}

// Plain cancels (no options, no observer) are finished in batches: the
// record says Cancelled and the callback is released at once, the wheel
// entry and the retirement follow with the batch. None of that may show: not
// in the state, the next run, the job limit, the counts, what fires, or when
// the job is forgotten.
TEST_F(StatesTest, Engine_2_3_PlainCancelsEndLikeAnyOther) {
  Start(2, [](SchedulerOptions& o) {
    o.observer = nullptr;
    o.max_jobs = 150;
    o.retention = minutes(10);
  });
  auto capture = std::make_shared<int>(7);
  const uint64_t wakeups = s_->GetStats().wakeups;
  std::vector<JobId> ids(150);
  for (JobId& id : ids) id = *s_->After(seconds(1), [capture] {});
  // The first submission wakes the scheduler thread, whose pass would finish
  // a batch under way: once it is done, nothing wakes it before Advance.
  for (int i = 0; i < 100'000'000 && s_->GetStats().wakeups == wakeups; ++i) {
    std::this_thread::yield();
  }
  ASSERT_GT(s_->GetStats().wakeups, wakeups);
  // 100 cancels: one whole batch of 64, and 36 left for the scheduler thread.
  const std::vector<JobId> cancelled(ids.begin(), ids.begin() + 100);
  for (JobId id : cancelled) AX_ASSERT_OK(s_->Cancel(id));
  EXPECT_EQ(capture.use_count(), 51);
  for (JobId id : cancelled) {
    const JobInfo info = InfoOf(id);
    EXPECT_EQ(info.state, JobState::kCancelled);
    EXPECT_FALSE(info.next_run.has_value());
    EXPECT_TRUE(HasCode(s_->Cancel(id), StatusCode::kInvalidState));
  }
  Stats st = s_->GetStats();
  EXPECT_EQ(st.cancelled, 100u);
  EXPECT_EQ(st.pending, 50u);
  // The job limit counts them out at once.
  std::vector<JobId> more(100);
  for (JobId& id : more) {
    Result<JobId> r = s_->After(seconds(2), [] {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    id = *r;
  }
  EXPECT_TRUE(HasCode(s_->After(seconds(2), [] {}).status(), StatusCode::kUnavailable));
  Advance(seconds(1));
  Advance(seconds(1));
  st = s_->GetStats();
  EXPECT_EQ(st.fired, 150u);
  EXPECT_EQ(st.succeeded, 150u);
  EXPECT_EQ(capture.use_count(), 1);
  // The retention counts from the cancel, not from when the batch was done.
  Advance(minutes(10) - seconds(3));
  EXPECT_EQ(InfoOf(cancelled.back()).state, JobState::kCancelled);
  Advance(seconds(1));
  for (JobId id : cancelled) EXPECT_TRUE(HasCode(s_->Info(id).status(), StatusCode::kNotFound));
  EXPECT_EQ(InfoOf(ids.back()).state, JobState::kCompleted);
}

TEST_F(StatesTest, Engine_2_3_TerminalJobsStayQueryableForTheRetention) {
  Start(2, [](SchedulerOptions& o) { o.retention = minutes(10); });
  Result<JobId> a = s_->After(seconds(1), [] {});
  Advance(seconds(1));
  Advance(minutes(9));
  EXPECT_EQ(InfoOf(*a).state, JobState::kCompleted);
  Advance(minutes(1));
  EXPECT_TRUE(HasCode(s_->Info(*a).status(), StatusCode::kNotFound));
}

TEST_F(StatesTest, Engine_2_3_RetainedJobsAreBoundedInNumber) {
  Start(2, [](SchedulerOptions& o) { o.max_retained = 10; });
  std::vector<JobId> ids(30);
  for (JobId& id : ids) id = *s_->After(seconds(1), [] {});
  Advance(seconds(1));
  Advance(seconds(1));
  int found = 0;
  for (JobId id : ids) found += s_->Info(id).ok() ? 1 : 0;
  EXPECT_EQ(found, 10);
  EXPECT_TRUE(s_->Info(ids.back()).ok());  // the oldest went first
}

// Beyond the bound the oldest go in batches of max_retained / 64 (at most
// 64): never more than max_retained are kept, and what is forgotten is always
// the oldest.
TEST_F(StatesTest, Engine_2_3_RetainedJobsBeyondTheBoundGoOldestFirstInSmallBatches) {
  Start(2, [](SchedulerOptions& o) { o.max_retained = 640; });  // batches of 10
  std::vector<JobId> ids(700);
  for (JobId& id : ids) id = *s_->After(hours(1), [] {});
  for (JobId id : ids) AX_ASSERT_OK(s_->Cancel(id));
  std::vector<bool> kept(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) kept[i] = s_->Info(ids[i]).ok();
  const auto first_kept = std::find(kept.begin(), kept.end(), true) - kept.begin();
  EXPECT_TRUE(std::all_of(kept.begin() + first_kept, kept.end(), [](bool k) { return k; }));
  const auto count = static_cast<int>(kept.size() - first_kept);
  EXPECT_LE(count, 640);
  EXPECT_GE(count, 630);
  EXPECT_EQ(InfoOf(ids.back()).state, JobState::kCancelled);
}

// A retired job whose timed-out callback still runs is kept (and looked at
// again later). With every retained job in that case and more than the bound
// retained, forgetting must still end: it once went round them for ever,
// holding the lock.
TEST_F(StatesTest, Engine_2_3_RetainedJobsStillRunningDoNotStallForgetting) {
  Start(2, [](SchedulerOptions& o) { o.max_retained = 1; });
  Gate started_a, started_b, release;
  JobOptions o;
  o.timeout = seconds(5);
  auto body = [&](Gate& started) {
    return [&] {
      started.Open();
      release.Wait();
    };
  };
  Result<JobId> a = s_->After(seconds(1), body(started_a), o);
  Result<JobId> b = s_->After(seconds(1), body(started_b), o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started_a.Wait());
  ASSERT_TRUE(started_b.Wait());
  clock_->Advance(seconds(5));  // both time out: dead, callbacks still running
  ASSERT_TRUE(s_->WaitDispatched());
  EXPECT_EQ(InfoOf(*a).state, JobState::kDead);
  EXPECT_EQ(InfoOf(*b).state, JobState::kDead);
  release.Open();
  Settle();
  Result<JobId> c = s_->After(seconds(1), [] {});
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*c).state, JobState::kCompleted);
  EXPECT_TRUE(HasCode(s_->Info(*a).status(), StatusCode::kNotFound));
}

// A forgotten job's cold record goes back to the engine's slab of them and
// is the next one taken: the job that takes it starts from nothing.
TEST_F(StatesTest, Engine_2_3_AForgottenJobsRecordComesBackEmpty) {
  Start(2, [](SchedulerOptions& o) { o.max_retained = 1; });
  JobOptions o;
  o.key = "old";
  Result<JobId> old = s_->Every(
      seconds(1), [] { throw std::runtime_error("boom"); }, o);
  ASSERT_TRUE(old.ok());
  Advance(seconds(1));
  ASSERT_EQ(InfoOf(*old).failures, 1u);
  AX_ASSERT_OK(s_->Cancel(*old));
  Result<JobId> done = s_->After(seconds(1), [] {});
  Advance(seconds(1));
  EXPECT_EQ(InfoOf(*done).state, JobState::kCompleted);
  ASSERT_TRUE(HasCode(s_->Info(*old).status(), StatusCode::kNotFound));

  o.key = "new";
  Result<JobId> fresh = s_->After(
      hours(1), [] {}, o);
  ASSERT_TRUE(fresh.ok());
  const JobInfo info = InfoOf(*fresh);
  EXPECT_EQ(info.key, "new");
  EXPECT_EQ(info.runs, 0u);
  EXPECT_EQ(info.failures, 0u);
  EXPECT_EQ(info.consecutive_failures, 0);
  EXPECT_EQ(info.last_error, "");
  EXPECT_EQ(info.reason, "");
  EXPECT_EQ(info.state, JobState::kWaiting);
}

}  // namespace
}  // namespace ax::testing
