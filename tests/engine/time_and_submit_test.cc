// SPEC 2.1 (time), 2.2 (submitting), 2.12 (limits).
#include <thread>

#include "fixture.h"
#include "time/short_slice.h"

namespace ax::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(EngineTest, Engine_2_1_NeverFiresBeforeItsDeadline) {
  std::atomic<int> runs{0};
  Instant seen{};
  Result<JobId> id = s_->After(seconds(10), [&](const RunContext& ctx) {
    seen = ctx.scheduled_at();
    EXPECT_GE(clock_->Now(), ctx.scheduled_at());
    ++runs;
  });
  ASSERT_TRUE(id.ok());
  Advance(seconds(10) - nanoseconds(1));
  EXPECT_EQ(runs, 0);
  Advance(nanoseconds(1));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(seen, kStart + seconds(10));
}

TEST_F(EngineTest, Engine_2_1_AdvancingFiresExactlyTheDueJobs) {
  std::atomic<int> mask{0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(s_->At(kStart + seconds(i + 1), [&mask, i] { mask |= 1 << i; }).ok());
  }
  Advance(seconds(3));
  EXPECT_EQ(mask, 0b00111);
  Advance(seconds(2));
  EXPECT_EQ(mask, 0b11111);
}

TEST_F(EngineTest, Engine_2_1_ClockStepForwardFiresWhatBecameDue) {
  std::atomic<int> runs{0};
  ASSERT_TRUE(s_->At(kStart + hours(1), [&] { ++runs; }).ok());
  clock_->Set(kStart + hours(2));  // a wall-clock step, not an advance
  Settle();
  EXPECT_EQ(runs, 1);
}

TEST_F(EngineTest, Engine_2_1_ClockStepBackwardDelaysInstants) {
  std::atomic<int> runs{0};
  ASSERT_TRUE(s_->At(kStart + seconds(10), [&] { ++runs; }).ok());
  clock_->Set(kStart - hours(1));
  Settle();
  Advance(hours(1) + seconds(9));
  EXPECT_EQ(runs, 0);  // instants are absolute: 10 s after kStart, not after the step
  Advance(seconds(1));
  EXPECT_EQ(runs, 1);
}

// A clock whose NowOrLater is `ahead` past Now(), as the system clock's
// counter estimate may be.
class AheadClock final : public Clock {
 public:
  AheadClock(std::shared_ptr<ManualClock> inner, Duration ahead)
      : inner_(std::move(inner)), ahead_(ahead) {}
  Instant Now() const override { return inner_->Now(); }
  Instant NowOrLater() const override { return inner_->Now() + ahead_; }
  void WaitUntil(Instant deadline, Interrupt& interrupt) override {
    inner_->WaitUntil(deadline, interrupt);
  }
  bool IsManual() const override { return true; }

 private:
  std::shared_ptr<ManualClock> inner_;
  Duration ahead_;
};

TEST_F(EngineTest, Engine_2_1_DelaysCountFromNowOrLater) {
  const Duration ahead = std::chrono::microseconds(3);
  for (bool observed : {false, true}) {  // the short path, and Submit's
    Start(2, [&](SchedulerOptions& o) {
      o.clock = std::make_shared<AheadClock>(clock_, ahead);
      if (!observed) o.observer = nullptr;
    });
    Result<JobId> after = s_->After(seconds(10), [] {});
    Result<JobId> at = s_->At(kStart + seconds(10), [] {});
    ASSERT_TRUE(after.ok() && at.ok());
    EXPECT_EQ(s_->Info(*after)->next_run, kStart + seconds(10) + ahead);  // never earlier
    EXPECT_EQ(s_->Info(*at)->next_run, kStart + seconds(10));             // an instant is exact
    ASSERT_TRUE(s_->SetDelay(*at, seconds(5)).ok());
    EXPECT_EQ(s_->Info(*at)->next_run, kStart + seconds(5) + ahead);
  }
}

TEST(SystemClock, Engine_2_1_WaitUntilReturnsOnInterrupt) {
  Interrupt i;
  auto c = SystemClock::Get();
  i.Signal();
  c->WaitUntil(c->Now() + hours(1), i);  // returns at once: signalled
  EXPECT_TRUE(i.Clear());
  EXPECT_FALSE(i.Clear());
}

// Enough waits for the thread's WakeMargin to grow (src/time/wake_margin.h):
// the wake-ups then come before the deadline, and the spin must cover the
// rest.
void WaitsNeverEndEarly() {
  Interrupt i;
  auto c = SystemClock::Get();
  for (int k = 0; k < 1'000; ++k) {
    const Instant dl = c->Now() + std::chrono::microseconds(20 + 7 * (k % 40));
    c->WaitUntil(dl, i);
    ASSERT_GE(c->Now(), dl) << "wait " << k;
  }
}

TEST(SystemClock, Engine_2_1_WaitUntilNeverReturnsEarlyWithoutInterrupt) { WaitsNeverEndEarly(); }

// A thread with a short slice yields as it spins (time/short_slice.h).
TEST(SystemClock, Engine_2_1_WaitUntilNeverReturnsEarlyWhileItsSpinsYield) {
  std::thread([] {
    if (!internal::TakeShortSlice(100'000)) GTEST_SKIP() << "this kernel keeps no custom slice";
    ASSERT_TRUE(internal::SpinsYield());
    WaitsNeverEndEarly();
  }).join();
}

TEST(SystemClock, Engine_2_1_NowCoarseIsWithinAFewTicksOfNow) {
  auto c = SystemClock::Get();
  for (int k = 0; k < 10'000; ++k) {
    const Instant before = c->Now();
    const Instant coarse = c->NowCoarse();
    const Instant after = c->Now();
    // A kernel tick is at most 10 ms (HZ=100); the copy may lag a tick more.
    ASSERT_GE(coarse, before - milliseconds(25));
    ASSERT_LE(coarse, after);
  }
}

TEST(ManualClock, Engine_2_1_NowCoarseIsNow) {
  ManualClock c(kStart);
  EXPECT_EQ(c.NowCoarse(), kStart);
  c.Advance(seconds(3));
  EXPECT_EQ(c.NowCoarse(), kStart + seconds(3));
}

TEST_F(EngineTest, Engine_2_2_EverySubmissionReturnsAnIdOrATypedError) {
  JobOptions o;
  o.key = "order-1001";
  Result<JobId> a = s_->After(
      minutes(30), [] {}, o);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->valid());
  Result<JobId> dup = s_->After(
      minutes(30), [] {}, o);
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(HasCode(dup.status(), StatusCode::kAlreadyExists));
  EXPECT_THAT(dup.status().message(), HasSubstr("order-1001"));
  o.return_existing = true;
  Result<JobId> same = s_->After(
      minutes(5), [] {}, o);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, *a);
  EXPECT_TRUE(HasCode(s_->Cancel("no-such-job"), StatusCode::kNotFound));
  EXPECT_TRUE(HasCode(s_->Pause(JobId(12345, 1)), StatusCode::kNotFound));
  EXPECT_TRUE(HasCode(s_->After(seconds(-1), [] {}).status(), StatusCode::kInvalidArgument));
  // The same through the form with options, default and not.
  EXPECT_TRUE(HasCode(s_->After(
                            seconds(-1), [] {}, JobOptions{})
                          .status(),
                      StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->After(
                            seconds(-1), [] {}, o)
                          .status(),
                      StatusCode::kInvalidArgument));
  (void)s_->Shutdown(seconds(1));
  EXPECT_TRUE(HasCode(s_->After(seconds(1), [] {}).status(), StatusCode::kShuttingDown));
  EXPECT_TRUE(HasCode(s_->Cancel(*a), StatusCode::kShuttingDown));
}

TEST_F(EngineTest, Engine_2_2_GeneratedIdsAreUniqueAndNameTheJob) {
  std::vector<JobId> ids(100);
  for (JobId& id : ids) id = *s_->After(seconds(1), [] {});
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t k = i + 1; k < ids.size(); ++k) EXPECT_NE(ids[i], ids[k]);
  }
  const std::string text = ids[7].ToString();
  EXPECT_EQ(JobId::Parse(text), ids[7]);
  EXPECT_EQ(InfoOf(text).id, ids[7]);  // the text form works wherever a key does
  AX_ASSERT_OK(s_->Cancel(text));
  EXPECT_EQ(InfoOf(ids[7]).state, JobState::kCancelled);
}

// A JobRef names a job by id or by key, and an empty key names none. It is
// 16 bytes so that calls get it in registers (job_id.h).
TEST(JobRef, Engine_2_2_NamesAnIdOrAKey) {
  static_assert(sizeof(JobRef) == 16);
  const JobRef by_id(JobId(7, 3));
  EXPECT_TRUE(by_id.is_id());
  EXPECT_EQ(by_id.id(), JobId(7, 3));
  EXPECT_EQ(by_id.key(), "");
  const std::string key = "order-1001";
  const JobRef by_key(key);
  EXPECT_FALSE(by_key.is_id());
  EXPECT_EQ(by_key.key(), "order-1001");
  EXPECT_FALSE(by_key.id().valid());
  const JobRef empty("");
  EXPECT_TRUE(empty.is_id());
  EXPECT_FALSE(empty.id().valid());
}

// max_jobs bounds the jobs not yet terminal: waiting, running and paused ones
// count, and a job counts out as soon as it is cancelled or completes.
TEST_F(EngineTest, Engine_2_2_MaxJobsBoundsTheLiveJobs) {
  Start(2, [](SchedulerOptions& o) { o.max_jobs = 3; });
  Gate started, release;
  Result<JobId> running = s_->After(seconds(1), [&] {
    started.Open();
    release.Wait();
  });
  Result<JobId> paused = s_->After(seconds(5), [] {});
  Result<JobId> waiting = s_->After(seconds(10), [] {});
  ASSERT_TRUE(running.ok() && paused.ok() && waiting.ok());
  AX_ASSERT_OK(s_->Pause(*paused));
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started.Wait());
  EXPECT_TRUE(HasCode(s_->After(seconds(1), [] {}).status(), StatusCode::kUnavailable));
  AX_ASSERT_OK(s_->Cancel(*waiting));
  EXPECT_TRUE(s_->After(seconds(30), [] {}).ok());
  EXPECT_TRUE(HasCode(s_->After(seconds(1), [] {}).status(), StatusCode::kUnavailable));
  release.Open();
  Settle();
  EXPECT_EQ(InfoOf(*running).state, JobState::kCompleted);
  EXPECT_TRUE(s_->After(seconds(30), [] {}).ok());
  EXPECT_TRUE(HasCode(s_->After(seconds(1), [] {}).status(), StatusCode::kUnavailable));
}

// On the system clock a cancel without the lock is queued for the scheduler
// thread's drain (within 50 ms); meanwhile the job already counts out of
// max_jobs, the gauges and the states.
TEST(EngineSystemClock, Engine_2_2_ACancelWithoutTheLockCountsOutAtOnce) {
  SchedulerOptions o;
  o.max_jobs = 3;
  auto s = std::move(Scheduler::Create(o).value());
  std::vector<JobId> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(s->After(std::chrono::hours(1), [] {}).value());
  EXPECT_TRUE(HasCode(s->After(std::chrono::hours(1), [] {}).status(), StatusCode::kUnavailable));
  AX_ASSERT_OK(s->Cancel(ids[1]));
  EXPECT_EQ(s->Info(ids[1])->state, JobState::kCancelled);
  EXPECT_TRUE(HasCode(s->Cancel(ids[1]), StatusCode::kInvalidState));
  EXPECT_TRUE(HasCode(s->SetDelay(ids[1], seconds(1)), StatusCode::kInvalidState));
  Stats stats = s->GetStats();
  EXPECT_EQ(stats.pending, 2u);
  EXPECT_EQ(stats.cancelled, 1u);
  EXPECT_EQ(s->List(JobState::kCancelled, 10).size(), 1u);
  EXPECT_EQ(s->List(JobState::kWaiting, 10).size(), 2u);
  ASSERT_TRUE(s->After(std::chrono::hours(1), [] {}).ok());
  stats = s->GetStats();
  EXPECT_EQ(stats.pending, 3u);
  EXPECT_EQ(stats.cancelled, 1u);
}

TEST_F(EngineTest, Engine_2_2_StaleIdIsNotFoundNeverAnotherJob) {
  Start(2, [](SchedulerOptions& o) { o.retention = seconds(1); });
  Result<JobId> a = s_->After(seconds(1), [] {});
  Advance(seconds(1));
  Advance(seconds(2));  // past retention: forgotten, slot reusable
  Result<JobId> b = s_->After(seconds(10), [] {});
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(HasCode(s_->Cancel(*a), StatusCode::kNotFound));
  EXPECT_EQ(InfoOf(*b).state, JobState::kWaiting);
}

TEST_F(EngineTest, Engine_2_2_KeyIsFreeAgainOnceTheJobEnded) {
  JobOptions o;
  o.key = "k";
  Result<JobId> a = s_->After(
      seconds(1), [] {}, o);
  AX_ASSERT_OK(s_->Cancel("k"));
  Result<JobId> b = s_->After(
      seconds(1), [] {}, o);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*s_->Find("k"), *b);
  EXPECT_EQ(InfoOf(*a).state, JobState::kCancelled);
}

TEST_F(EngineTest, Engine_2_2_KeysMayNotLookLikeGeneratedIds) {
  JobOptions o;
  o.key = "#1.1";
  EXPECT_TRUE(HasCode(s_->After(
                            seconds(1), [] {}, o)
                          .status(),
                      StatusCode::kInvalidArgument));
}

TEST_F(EngineTest, Engine_2_2_BadOptionsAreInvalidArgumentNamingTheField) {
  JobOptions o;
  o.retry.max_attempts = 0;
  Status st = s_->After(
                    seconds(1), [] {}, o)
                  .status();
  EXPECT_TRUE(HasCode(st, StatusCode::kInvalidArgument));
  EXPECT_THAT(st.message(), HasSubstr("max_attempts"));
  o = {};
  o.timeout = seconds(-1);
  EXPECT_THAT(s_->After(
                    seconds(1), [] {}, o)
                  .status()
                  .message(),
              HasSubstr("timeout"));
  o = {};
  o.parent = "missing";
  EXPECT_TRUE(HasCode(s_->After(
                            seconds(1), [] {}, o)
                          .status(),
                      StatusCode::kNotFound));
  EXPECT_TRUE(HasCode(s_->After(seconds(1), Task()).status(), StatusCode::kInvalidArgument));
}

// Submissions with default options skip the checks: each field on its own,
// set to a bad value, must still be caught.
TEST_F(EngineTest, Engine_2_2_EachBadOptionAloneIsCaught) {
  const std::vector<std::pair<std::function<void(JobOptions&)>, std::string>> bad = {
      {[](JobOptions& o) { o.key = "#1.1"; }, "key"},
      {[](JobOptions& o) { o.retry.base = seconds(-1); }, "retry.base"},
      {[](JobOptions& o) { o.retry.cap = seconds(-1); }, "retry.cap"},
      {[](JobOptions& o) { o.timeout = seconds(-1); }, "timeout"},
      {[](JobOptions& o) { o.slow_after = seconds(-1); }, "slow_after"},
      {[](JobOptions& o) { o.auto_pause_after = -1; }, "auto_pause_after"},
      {[](JobOptions& o) { o.max_catch_up = 0; }, "max_catch_up"},
  };
  for (const auto& [spoil, field] : bad) {
    JobOptions o;
    spoil(o);
    const Status st = s_->After(
                            seconds(1), [] {}, o)
                          .status();
    EXPECT_TRUE(HasCode(st, StatusCode::kInvalidArgument)) << field;
    EXPECT_THAT(st.message(), HasSubstr(field));
  }
  EXPECT_EQ(s_->GetStats().pending, 0u);
}

TEST_F(EngineTest, Engine_2_2_HandlerTypesRunWithTheirPayload) {
  std::string got;
  AX_ASSERT_OK(s_->RegisterHandler("echo", [&](const RunContext&, std::string_view p) {
    got = std::string(p);
    return Status();
  }));
  EXPECT_TRUE(HasCode(
      s_->RegisterHandler("echo", [](const RunContext&, std::string_view) { return Status(); }),
      StatusCode::kAlreadyExists));
  EXPECT_TRUE(HasCode(s_->BindHandler("nope", "").status(), StatusCode::kNotFound));
  Result<Task> t = s_->BindHandler("echo", "{\"order\":1}");
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(s_->After(seconds(1), std::move(*t)).ok());
  Advance(seconds(1));
  EXPECT_EQ(got, "{\"order\":1}");
}

TEST_F(EngineTest, Engine_2_12_NegativeZeroAndOverflowingTimesAreInvalidNeverFireNow) {
  std::atomic<int> runs{0};
  auto f = [&] { ++runs; };
  EXPECT_TRUE(HasCode(s_->After(seconds(-5), f).status(), StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->Every(seconds(0), f).status(), StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->Every(seconds(-1), f).status(), StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->After(Duration::max(), f).status(), StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->Every(Duration::max(), f).status(), StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->Every(hours(1), kInstantMax - minutes(1), f).status(),
                      StatusCode::kInvalidArgument));
  Result<JobId> j = s_->After(hours(1), f);
  EXPECT_TRUE(HasCode(s_->SetDelay(*j, seconds(-1)), StatusCode::kInvalidArgument));
  EXPECT_TRUE(HasCode(s_->SetDelay(*j, Duration::max()), StatusCode::kInvalidArgument));
  Result<JobId> p = s_->Every(hours(1), f);
  EXPECT_TRUE(HasCode(s_->SetPeriod(*p, seconds(0)), StatusCode::kInvalidArgument));
  Settle();
  EXPECT_EQ(runs, 0);
}

TEST_F(EngineTest, Engine_2_12_InstantInThePastRunsAsSoonAsPossible) {
  std::atomic<int> runs{0};
  ASSERT_TRUE(s_->At(kStart - hours(24), [&] { ++runs; }).ok());
  Settle();
  EXPECT_EQ(runs, 1);
}

TEST_F(EngineTest, Engine_2_12_FarFutureInstantsWaitQuietly) {
  std::atomic<int> runs{0};
  ASSERT_TRUE(s_->At(kInstantMax, [&] { ++runs; }).ok());
  ASSERT_TRUE(s_->At(FromUnixNanos(7'000'000'000'000'000'000), [&] { ++runs; }).ok());
  Advance(hours(24 * 365));
  EXPECT_EQ(runs, 0);
}

}  // namespace
}  // namespace ax::testing
