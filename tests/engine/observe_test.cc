// SPEC 2.10 (info, stats, events) and 2.11 (shutdown).
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include <dirent.h>

#include "fixture.h"

namespace ax::testing {
namespace {

using ::testing::HasSubstr;

class ObserveTest : public EngineTest {};

TEST_F(ObserveTest, Engine_2_10_InfoReportsStateNextRunPeriodAndCounters) {
  JobOptions o;
  o.key = "alert-rule";
  o.auto_pause_after = 0;
  std::atomic<int> n{0};
  ASSERT_TRUE(
      s_->Every(
            seconds(10), [&] { return ++n == 2 ? Status::Internal("bad data") : Status(); }, o)
          .ok());
  Advance(seconds(25));  // tick 10 is late by more than a period: skipped; 20 runs
  Advance(seconds(40));  // 30, 40, 50 skipped; 60 runs
  JobInfo i = InfoOf("alert-rule");
  EXPECT_EQ(i.key, "alert-rule");
  EXPECT_EQ(i.kind, JobKind::kEvery);
  EXPECT_EQ(i.state, JobState::kWaiting);
  EXPECT_EQ(i.period, seconds(10));
  EXPECT_EQ(i.next_run, kStart + seconds(70));
  EXPECT_EQ(i.runs, 2u);
  EXPECT_EQ(i.failures, 1u);
  EXPECT_EQ(i.skips, 4u);
  EXPECT_THAT(i.last_error, HasSubstr("bad data"));
}

TEST_F(ObserveTest, Engine_2_10_StatsCountEverything) {
  JobOptions retry;
  retry.retry = RetryPolicy::Fixed(2, seconds(1));
  ASSERT_TRUE(s_->After(
                    seconds(1), [] { return Status::Internal("x"); }, retry)
                  .ok());
  ASSERT_TRUE(s_->After(seconds(1), [] {}).ok());
  Result<JobId> c = s_->After(seconds(1), [] {});
  AX_ASSERT_OK(s_->Cancel(*c));
  Result<JobId> p = s_->After(seconds(5), [] {});
  AX_ASSERT_OK(s_->Pause(*p));
  ASSERT_TRUE(s_->After(hours(1), [] {}).ok());
  Advance(seconds(1));
  Advance(seconds(1));
  Stats st = s_->GetStats();
  EXPECT_EQ(st.fired, 3u);
  EXPECT_EQ(st.succeeded, 1u);
  EXPECT_EQ(st.failed, 2u);
  EXPECT_EQ(st.retried, 1u);
  EXPECT_EQ(st.dead, 1u);
  EXPECT_EQ(st.cancelled, 1u);
  EXPECT_EQ(st.pending, 1u);
  EXPECT_EQ(st.paused, 1u);
  EXPECT_EQ(st.running, 0u);
  EXPECT_EQ(st.workers, 4u);
  EXPECT_EQ(st.lateness.count, 3u);
  EXPECT_GT(st.wakeups, 0u);
}

// Each value lands in the bucket a plain scan of the bounds picks.
TEST(LatenessHistogram, Engine_2_10_EachValueLandsInTheScannedBucket) {
  std::vector<int64_t> values = {INT64_MIN, -1, 0, 1, INT64_MAX};
  for (const int64_t bound : LatenessHistogram::kBoundsNs) {
    for (int64_t d = -2; d <= 2; ++d) values.push_back(bound + d);
  }
  for (int w = 0; w < 63; ++w) {
    values.push_back(int64_t{1} << w);
    values.push_back((int64_t{1} << w) - 1);
  }
  for (const int64_t v : values) {
    size_t want = 0;
    while (want < LatenessHistogram::kBoundsNs.size() && v >= LatenessHistogram::kBoundsNs[want])
      ++want;
    LatenessHistogram h;
    h.Record(v);
    EXPECT_EQ(h.counts[want], 1u) << v;
  }
}

TEST(LatenessHistogram, Engine_2_10_BucketsAndQuantiles) {
  LatenessHistogram h;
  for (int i = 0; i < 99; ++i) h.Record(1'500);  // 1.5 µs
  h.Record(3'000'000);                           // 3 ms
  EXPECT_EQ(h.count, 100u);
  EXPECT_EQ(h.QuantileUpperBoundNs(0.5), 2'000);
  EXPECT_EQ(h.QuantileUpperBoundNs(0.99), 2'000);
  EXPECT_EQ(h.QuantileUpperBoundNs(1.0), 5'000'000);
  EXPECT_EQ(h.max_ns, 3'000'000);
}

TEST_F(ObserveTest, Engine_2_10_ObserverSeesTheLifecycleInOrder) {
  JobOptions o;
  o.retry = RetryPolicy::Fixed(2, seconds(1));
  Result<JobId> a = s_->After(
      seconds(1),
      [](const RunContext& c) { return c.attempt() == 1 ? Status::Internal("first") : Status(); },
      o);
  Advance(seconds(1));
  Advance(seconds(1));
  std::vector<EventType> types;
  for (const Event& e : EventsOf(*a)) types.push_back(e.type);
  EXPECT_EQ(types,
            (std::vector<EventType>{EventType::kScheduled, EventType::kStarted, EventType::kFailed,
                                    EventType::kRetrying, EventType::kStarted,
                                    EventType::kSucceeded, EventType::kCompleted}));
  EXPECT_EQ(EventsOf(*a, EventType::kStarted)[1].attempt, 2);
  EXPECT_EQ(EventsOf(*a, EventType::kStarted)[0].lateness, Duration(0));
}

TEST_F(ObserveTest, Engine_2_10_ListFiltersByState) {
  Result<JobId> w = s_->After(seconds(1), [] {});
  Result<JobId> p = s_->After(seconds(1), [] {});
  AX_ASSERT_OK(s_->Pause(*p));
  const std::vector<JobInfo> paused = s_->List(JobState::kPaused, 10);
  ASSERT_EQ(paused.size(), 1u);
  EXPECT_EQ(paused[0].id, *p);
  EXPECT_TRUE(s_->List(JobState::kRunning, 10).empty());
  EXPECT_EQ(s_->List(std::nullopt, 10).size(), 2u);
  EXPECT_EQ(s_->List(std::nullopt, 1).size(), 1u);
  AX_ASSERT_OK(s_->Cancel(*w));
  const std::vector<JobInfo> cancelled = s_->List(JobState::kCancelled, 10);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0].id, *w);
  EXPECT_TRUE(s_->List(JobState::kWaiting, 10).empty());
  EXPECT_EQ(s_->List(std::nullopt, 10).size(), 2u);  // retained jobs are listed too
}

int ThreadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

TEST_F(ObserveTest, Engine_2_11_ShutdownRefusesCallsAndStartsNothingNew) {
  std::atomic<int> runs{0};
  Result<JobId> a = s_->After(seconds(1), [&] { ++runs; });
  ShutdownReport r = s_->Shutdown(seconds(5));
  EXPECT_TRUE(r.clean());
  EXPECT_TRUE(HasCode(s_->After(seconds(1), [] {}).status(), StatusCode::kShuttingDown));
  EXPECT_TRUE(HasCode(s_->Pause(*a), StatusCode::kShuttingDown));
  clock_->Advance(seconds(5));
  s_.reset();
  EXPECT_EQ(runs, 0);
}

TEST_F(ObserveTest, Engine_2_11_StuckCallbackIsReportedWithinTheTimeout) {
  Gate started, release;
  std::atomic<bool> stop_seen{false};
  Result<JobId> a = s_->After(seconds(1), [&](const RunContext& ctx) {
    started.Open();
    release.Wait();
    stop_seen = ctx.stop_requested();
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  const auto t0 = std::chrono::steady_clock::now();
  ShutdownReport r = s_->Shutdown(milliseconds(200));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, seconds(5));  // returned at its timeout, not when the callback ends
  ASSERT_EQ(r.unfinished.size(), 1u);
  EXPECT_EQ(r.unfinished[0], *a);
  release.Open();
  s_.reset();
  EXPECT_TRUE(stop_seen);
}

// A callback that shuts its scheduler down, with no bound on the wait: it
// waited for itself, for ever. `plain` jobs (no observer) take the workers'
// short path, where a worker's finished runs wait for a flush: five of them
// ran before it on the one worker.
void ShutdownFromACallback(std::unique_ptr<Scheduler>& s,
                           const std::shared_ptr<ManualClock>& clock) {
  std::promise<ShutdownReport> reported;
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(s->After(seconds(1), [&] { ++ran; }).ok());
  Result<JobId> self = s->After(seconds(1), [&] {
    reported.set_value(s->Shutdown(std::chrono::hours(24 * 400)));  // the unbounded wait
  });
  ASSERT_TRUE(self.ok());
  clock->Advance(seconds(1));
  auto f = reported.get_future();
  if (f.wait_for(seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "Shutdown called from a callback waits for that callback";
    std::_Exit(1);  // the scheduler cannot be destroyed: its callback never ends
  }
  ShutdownReport r = f.get();
  EXPECT_EQ(ran, 5);
  ASSERT_EQ(r.unfinished.size(), 1u) << "the five runs before it were reported unfinished";
  EXPECT_EQ(r.unfinished[0], *self);
  EXPECT_TRUE(HasCode(s->After(seconds(1), [] {}).status(), StatusCode::kShuttingDown));
}

TEST_F(ObserveTest, Engine_2_11_ShutdownFromACallbackDoesNotWaitForIt) {
  Start(1);
  ShutdownFromACallback(s_, clock_);
}

TEST_F(ObserveTest, Engine_2_11_ShutdownFromAPlainCallbackDoesNotWaitForIt) {
  Start(1, [](SchedulerOptions& o) { o.observer = nullptr; });
  ShutdownFromACallback(s_, clock_);
}

// The events of the runs that finish within Shutdown's wait reach the
// observer before it returns, however slow the observer: the durable layer
// records outcomes from them and flushes its store after Shutdown.
TEST_F(ObserveTest, Engine_2_11_ShutdownReturnsWithTheFinishedRunsEventsDelivered) {
  Gate completing;  // the observer has the run's outcome, and holds it
  Gate deliver;
  Start(2, [&, this](SchedulerOptions& o) {
    o.observer = [&, this](const Event& e) {
      if (e.type == EventType::kCompleted) {  // an observer that writes somewhere
        completing.Open();
        deliver.Wait();
      }
      std::lock_guard<std::mutex> l(events_mu_);
      events_.push_back(e);
    };
  });
  Gate started;
  Gate release;
  Result<JobId> a = s_->After(seconds(1), [&] {
    started.Open();
    release.Wait();
  });
  ASSERT_TRUE(a.ok());
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  auto report = std::async(std::launch::async, [this] { return s_->Shutdown(seconds(10)); });
  release.Open();
  ASSERT_TRUE(completing.Wait());
  // Shutdown waits for the held event: a Shutdown that did not would return
  // within microseconds of the run's end (bounded: a pass never waits more).
  EXPECT_EQ(report.wait_for(milliseconds(100)), std::future_status::timeout);
  deliver.Open();
  EXPECT_TRUE(report.get().clean());
  EXPECT_EQ(CountEvents(*a, EventType::kCompleted), 1u);
  s_.reset();  // before the gates its observer waits on
}

// Threads of this process named `name`.
int ThreadsNamed(std::string_view name) {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string line;
      n += std::getline(comm, line) && line == name;
    }
    closedir(d);
  }
  return n;
}

// Enough jobs that the slabs have their memory mapped ahead (MapAhead's
// thread, which outlived every scheduler before).
TEST_F(ObserveTest, Engine_2_11_NoThreadOutlivesTheScheduler) {
  s_.reset();
  const int before = ThreadCount();
  Start(8);
  EXPECT_GE(ThreadCount(), before + 8);
  for (int i = 0; i < 100'000; ++i) ASSERT_TRUE(s_->After(seconds(1), [] {}).ok());
  EXPECT_EQ(ThreadsNamed("ax-mapahead"), 1);
  Advance(seconds(1));
  s_.reset();
  EXPECT_EQ(ThreadsNamed("ax-mapahead"), 0);
  EXPECT_EQ(ThreadCount(), before);
}

// A job without options that a SetDelay reran counts both runs.
TEST_F(ObserveTest, Engine_2_10_InfoCountsTheRunsOfAJobRerunBySetDelay) {
  Gate started;
  Gate release;
  std::atomic<int> runs{0};
  Result<JobId> a = s_->After(seconds(1), [&] {
    if (runs++ == 0) {
      started.Open();
      release.Wait();
    }
  });
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->SetDelay(*a, seconds(3)));
  release.Open();
  Settle();
  EXPECT_EQ(InfoOf(*a).runs, 1u);
  Advance(seconds(3));
  ASSERT_EQ(runs, 2);
  EXPECT_EQ(InfoOf(*a).runs, 2u);
}

// A job without options cancelled while it runs has made that run.
TEST_F(ObserveTest, Engine_2_10_InfoCountsTheRunOfAJobCancelledWhileItRuns) {
  Gate started;
  Gate release;
  Result<JobId> a = s_->After(seconds(1), [&] {
    started.Open();
    release.Wait();
  });
  Result<JobId> b = s_->After(seconds(5), [] {});
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  AX_ASSERT_OK(s_->Cancel(*a));
  AX_ASSERT_OK(s_->Cancel(*b));
  release.Open();
  Settle();
  EXPECT_EQ(InfoOf(*a).runs, 1u);
  EXPECT_EQ(InfoOf(*b).runs, 0u);
}

// Jobs due at the far past: their lateness (centuries) saturates rather than
// overflowing the histogram's sum (UBSan stopped here).
TEST_F(ObserveTest, Engine_2_10_LatenessOfJobsDueLongAgoSaturates) {
  std::atomic<int> n{0};
  ASSERT_TRUE(s_->At(kInstantMin, [&] { ++n; }).ok());
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(s_->At(Instant{}, [&] { ++n; }).ok());
  Settle();
  EXPECT_EQ(n, 7);
  const Stats st = s_->GetStats();
  EXPECT_EQ(st.lateness.count, 7u);
  EXPECT_EQ(st.lateness.sum_ns, INT64_MAX);
  EXPECT_EQ(st.lateness.max_ns, INT64_MAX);
}

// Stats::running counts jobs Running, busy_workers the runs: two runs of one
// concurrent job are one and two.
TEST_F(ObserveTest, Engine_2_10_RunningCountsJobsAndBusyWorkersRuns) {
  Gate second;
  Gate release;
  std::atomic<int> n{0};
  JobOptions o;
  o.overlap = Overlap::kConcurrent;
  Result<JobId> a = s_->Every(
      seconds(1),
      [&] {
        const int k = ++n;
        if (k > 2) return;
        if (k == 2) second.Open();
        release.Wait();
      },
      o);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(s_->WaitDispatched());
  clock_->Advance(seconds(1));
  ASSERT_TRUE(second.Wait());
  const Stats st = s_->GetStats();
  EXPECT_EQ(st.busy_workers, 2u);
  EXPECT_EQ(st.running, 1u);
  release.Open();
  Settle();
}

TEST_F(ObserveTest, Engine_2_11_RegisterHandlerAfterShutdownIsShuttingDown) {
  (void)s_->Shutdown(seconds(1));
  EXPECT_TRUE(HasCode(
      s_->RegisterHandler("t", [](const RunContext&, std::string_view) { return Status(); }),
      StatusCode::kShuttingDown));
}

}  // namespace
}  // namespace ax::testing
