// SPEC 2.5: periodic anchoring, missed ticks, the four overlap modes; and the
// misfire policies of SPEC 3.5 for a first tick that has passed.
#include <thread>

#include "ax/cron.h"

#include "fixture.h"

namespace ax::testing {
namespace {

class PeriodicTest : public EngineTest {
 protected:
  // A periodic job that records each run's scheduled instant.
  Result<JobId> Record(Duration period, const JobOptions& o = {}) {
    return s_->Every(
        period,
        [this](const RunContext& ctx) {
          std::lock_guard<std::mutex> l(mu_);
          scheduled_.push_back(ctx.scheduled_at());
        },
        o);
  }
  std::vector<Instant> Scheduled() {
    std::lock_guard<std::mutex> l(mu_);
    return scheduled_;
  }
  std::mutex mu_;
  std::vector<Instant> scheduled_;
};

TEST_F(PeriodicTest, Engine_2_5_NextDeadlineIsPreviousScheduledPlusPeriod) {
  ASSERT_TRUE(Record(seconds(1)).ok());
  Advance(milliseconds(1300));  // fires 0.3 s late
  Advance(milliseconds(700));
  Advance(milliseconds(1000));
  EXPECT_EQ(Scheduled(),
            (std::vector<Instant>{kStart + seconds(1), kStart + seconds(2), kStart + seconds(3)}));
}

TEST_F(PeriodicTest, Engine_2_5_FirstRunAtAGivenInstant) {
  ASSERT_TRUE(s_->Every(seconds(10), kStart + seconds(3), [this](const RunContext& c) {
                  std::lock_guard<std::mutex> l(mu_);
                  scheduled_.push_back(c.scheduled_at());
                }).ok());
  Advance(seconds(3));
  Advance(seconds(10));
  EXPECT_EQ(Scheduled(), (std::vector<Instant>{kStart + seconds(3), kStart + seconds(13)}));
}

TEST_F(PeriodicTest, Engine_2_5_MissedTicksAreSkippedAndCountedNotBunched) {
  Result<JobId> a = Record(seconds(1));
  Advance(milliseconds(10'500));  // ticks 1..10 due; only 10 is within a period
  EXPECT_EQ(Scheduled(), (std::vector<Instant>{kStart + seconds(10)}));
  EXPECT_EQ(InfoOf(*a).skips, 9u);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(11));
  ASSERT_EQ(CountEvents(*a, EventType::kSkipped), 1u);
  EXPECT_EQ(EventsOf(*a, EventType::kSkipped)[0].count, 9u);
}

class OverlapTest : public PeriodicTest {
 protected:
  // First run blocks until `release_`; later runs return at once.
  Result<JobId> Blocking(Overlap mode) {
    JobOptions o;
    o.overlap = mode;
    return s_->Every(
        seconds(1),
        [this](const RunContext& ctx) {
          int n;
          {
            std::lock_guard<std::mutex> l(mu_);
            scheduled_.push_back(ctx.scheduled_at());
            n = static_cast<int>(scheduled_.size());
          }
          if (n == 1) {
            started_.Open();
            release_.Wait();
            stopped_ = ctx.stop_requested();
          }
        },
        o);
  }
  // Three ticks pass while the first run is blocked.
  void ThreeTicksDuringTheFirstRun() {
    clock_->Advance(seconds(1));
    ASSERT_TRUE(started_.Wait());
    for (int i = 0; i < 3; ++i) {
      clock_->Advance(seconds(1));
      ASSERT_TRUE(s_->WaitDispatched());
    }
  }
  Gate started_, release_;
  std::atomic<bool> stopped_{false};
};

TEST_F(OverlapTest, Engine_2_5_OverlapSkipSkipsTicksDuringARun) {
  Result<JobId> a = Blocking(Overlap::kSkip);
  ThreeTicksDuringTheFirstRun();
  release_.Open();
  Settle();
  EXPECT_EQ(Scheduled().size(), 1u);
  EXPECT_EQ(InfoOf(*a).skips, 3u);
  Advance(seconds(1));
  EXPECT_EQ(Scheduled().back(), kStart + seconds(5));
}

TEST_F(OverlapTest, Engine_2_5_OverlapBufferOneRunsOnceWhenTheRunEnds) {
  Result<JobId> a = Blocking(Overlap::kBufferOne);
  ThreeTicksDuringTheFirstRun();
  release_.Open();
  Settle();
  ASSERT_EQ(Scheduled().size(), 2u);
  EXPECT_EQ(Scheduled()[1], kStart + seconds(2));  // the first tick that waited
  EXPECT_EQ(InfoOf(*a).skips, 2u);
}

TEST_F(OverlapTest, Engine_2_5_OverlapConcurrentRunsInParallel) {
  Result<JobId> a = Blocking(Overlap::kConcurrent);
  ThreeTicksDuringTheFirstRun();
  // The three other runs finish while the first is still blocked.
  for (int spins = 0; Scheduled().size() < 4 && spins < 10'000'000; ++spins) {
    std::this_thread::yield();
  }
  EXPECT_EQ(Scheduled().size(), 4u);
  EXPECT_EQ(InfoOf(*a).skips, 0u);
  release_.Open();
  Settle();
}

TEST_F(OverlapTest, Engine_2_5_OverlapReplaceStopsTheRunningOneAndStartsNew) {
  Result<JobId> a = Blocking(Overlap::kReplace);
  clock_->Advance(seconds(1));
  ASSERT_TRUE(started_.Wait());
  clock_->Advance(seconds(1));
  for (int spins = 0; Scheduled().size() < 2 && spins < 10'000'000; ++spins) {
    std::this_thread::yield();
  }
  EXPECT_EQ(Scheduled().size(), 2u);
  release_.Open();
  Settle();
  EXPECT_TRUE(stopped_);
  EXPECT_EQ(InfoOf(*a).failures, 0u);
}

TEST_F(PeriodicTest, Engine_2_5_MisfireSkipRunsOnlyTheNextFutureTick) {
  JobOptions o;
  o.misfire = Misfire::kSkip;
  Result<JobId> a = s_->Every(
      minutes(1), kStart - minutes(10) - seconds(30),
      [this](const RunContext& c) { scheduled_.push_back(c.scheduled_at()); }, o);
  ASSERT_TRUE(a.ok());
  Settle();
  EXPECT_TRUE(Scheduled().empty());
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(30));
  EXPECT_EQ(InfoOf(*a).skips, 11u);
}

TEST_F(PeriodicTest, Engine_2_5_MisfireOnceRunsOneNowThenTheSchedule) {
  JobOptions o;
  o.misfire = Misfire::kOnce;
  Result<JobId> a = s_->Every(
      minutes(1), kStart - minutes(10) - seconds(30),
      [this](const RunContext& c) { scheduled_.push_back(c.scheduled_at()); }, o);
  Settle();
  EXPECT_EQ(Scheduled(), (std::vector<Instant>{kStart - seconds(30)}));
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(30));
  EXPECT_EQ(InfoOf(*a).skips, 10u);
}

// A per-second cron restored after a long time: the missed ticks are not
// walked one by one under the lock (a month of them took a second in this
// build, 250 years would take about an hour), yet each policy runs what it
// runs after a short outage, and with ticks evenly spaced the count skipped
// is exact.
// A running cron job whose clock jumps a month ahead (a per-second job: 2.6 M
// ticks) runs its newest tick and counts every one skipped, without walking
// them all under the lock. It once walked 100,000 of them, then ran the
// 100,001st (a month stale) and counted 100,000.
TEST_F(PeriodicTest, Engine_2_5_CronFarBehindRunsItsNewestTickAndCountsTheRest) {
  Result<JobId> a = s_->Cron("* * * * * *", "UTC", [this](const RunContext& c) {
    std::lock_guard<std::mutex> l(mu_);
    scheduled_.push_back(c.scheduled_at());
  });
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const Duration month = hours(24 * 30);
  Advance(month + milliseconds(500));
  EXPECT_EQ(Scheduled(), std::vector<Instant>{kStart + month});
  EXPECT_EQ(InfoOf(*a).skips, static_cast<uint64_t>(month / seconds(1)) - 1);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + month + seconds(1));
}

TEST_F(PeriodicTest, Engine_2_5_MisfiresOfCenturiesOfSecondlyTicks) {
  const Duration down = hours(24 * 91'312);                          // 250 years
  const uint64_t missed = static_cast<uint64_t>(down / seconds(1));  // first .. kStart - 1 s
  auto submit = [&](Misfire m) {
    JobOptions o;
    o.misfire = m;
    o.max_catch_up = 5;
    return s_->Cron(
        "* * * * * *", "UTC", kStart - down,
        [this](const RunContext& c) {
          std::lock_guard<std::mutex> l(mu_);
          scheduled_.push_back(c.scheduled_at());
        },
        o);
  };
  auto clear = [this] {
    std::lock_guard<std::mutex> l(mu_);
    scheduled_.clear();
  };
  // The tick at kStart (now) is due, not missed: it runs in each.
  Result<JobId> skip = submit(Misfire::kSkip);
  ASSERT_TRUE(skip.ok());
  Settle();
  EXPECT_EQ(Scheduled(), std::vector<Instant>{kStart});
  EXPECT_EQ(InfoOf(*skip).skips, missed);
  EXPECT_EQ(InfoOf(*skip).next_run, kStart + seconds(1));
  AX_ASSERT_OK(s_->Cancel(*skip));

  // One run now: kStart's, the tick a second before it missed in turn.
  clear();
  Result<JobId> once = submit(Misfire::kOnce);
  ASSERT_TRUE(once.ok());
  Settle();
  EXPECT_EQ(Scheduled(), std::vector<Instant>{kStart});
  EXPECT_EQ(InfoOf(*once).skips, missed);
  AX_ASSERT_OK(s_->Cancel(*once));

  clear();
  Result<JobId> all = submit(Misfire::kAll);
  ASSERT_TRUE(all.ok());
  Settle();
  std::vector<Instant> want;
  for (int k = 5; k >= 0; --k) want.push_back(kStart - seconds(k));
  EXPECT_EQ(Scheduled(), want);
  EXPECT_EQ(InfoOf(*all).skips, missed - 5);
  EXPECT_EQ(InfoOf(*all).next_run, kStart + seconds(1));
}

// The same for ticks bunched in business hours, after a year: the last
// ticks before the restart run, however far back they are; the count
// skipped is an estimate from the mean spacing.
TEST_F(PeriodicTest, Engine_2_5_MisfiresOfBunchedTicksRunTheLastOnes) {
  const char* expr = "*/10 * 9-17 * * MON-FRI";
  const Instant first = kStart - hours(24 * 365);
  Result<CronSchedule> cron = CronSchedule::Parse(expr, "UTC");
  ASSERT_TRUE(cron.ok());
  std::vector<Instant> ticks;  // first .. kStart, as the engine counts them
  for (std::optional<Instant> t = cron->Next(first - seconds(1)); t && *t <= kStart;
       t = cron->Next(*t)) {
    ticks.push_back(*t);
  }
  ASSERT_GT(ticks.size(), 200'000u);
  JobOptions o;
  o.misfire = Misfire::kAll;
  o.max_catch_up = 5;
  Result<JobId> a = s_->Cron(
      expr, "UTC", ticks.front(),
      [this](const RunContext& c) {
        std::lock_guard<std::mutex> l(mu_);
        scheduled_.push_back(c.scheduled_at());
      },
      o);
  ASSERT_TRUE(a.ok());
  Settle();
  EXPECT_EQ(Scheduled(), std::vector<Instant>(ticks.end() - 5, ticks.end()));
  const double skipped = static_cast<double>(InfoOf(*a).skips);
  EXPECT_NEAR(skipped, static_cast<double>(ticks.size() - 5), 0.02 * ticks.size());
}

TEST_F(PeriodicTest, Engine_2_5_MisfireAllRunsEachMissedTickCapped) {
  JobOptions o;
  o.misfire = Misfire::kAll;
  o.max_catch_up = 5;
  Result<JobId> a = s_->Every(
      minutes(1), kStart - minutes(10) - seconds(30),
      [this](const RunContext& c) {
        std::lock_guard<std::mutex> l(mu_);
        scheduled_.push_back(c.scheduled_at());
      },
      o);
  Settle();
  std::vector<Instant> want;
  for (int k = 4; k >= 0; --k) want.push_back(kStart - seconds(30) - minutes(k));
  EXPECT_EQ(Scheduled(), want);
  EXPECT_EQ(InfoOf(*a).skips, 6u);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(30));
}

TEST_F(PeriodicTest, Engine_3_3_CronJobFiresOnItsCalendar) {
  Result<JobId> a = s_->Cron("0 */15 * * * *", "UTC", [this](const RunContext& c) {
    std::lock_guard<std::mutex> l(mu_);
    scheduled_.push_back(c.scheduled_at());
  });
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(InfoOf(*a).kind, JobKind::kCron);
  Advance(minutes(15));
  Advance(minutes(15));
  EXPECT_EQ(Scheduled(), (std::vector<Instant>{kStart + minutes(15), kStart + minutes(30)}));
  EXPECT_TRUE(HasCode(s_->SetPeriod(*a, seconds(1)), StatusCode::kInvalidState));
  EXPECT_TRUE(HasCode(s_->Cron("0 0 30 2 *", "UTC", [] {}).status(), StatusCode::kInvalidArgument));
}

// A cron job whose calendar has no instant left in the time range (it ends
// in 2262) is Dead at once. Like any terminal job it must be counted out of
// the live jobs, release its callback and be forgotten after the retention:
// it once stayed counted against max_jobs, and its record was never freed.
TEST_F(PeriodicTest, Engine_3_3_CronJobWithNoInstantLeftIsDeadAndRetired) {
  auto late = std::make_shared<ManualClock>(kInstantMax - hours(24 * 30));
  Start(2, [&](SchedulerOptions& o) {
    o.clock = late;
    o.max_jobs = 1;
    o.retention = minutes(10);
  });
  auto capture = std::make_shared<int>(7);
  Result<JobId> a = s_->Cron("0 0 1 1 *", "UTC", [capture] {});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(InfoOf(*a).state, JobState::kDead);
  EXPECT_EQ(capture.use_count(), 1);
  Result<JobId> b = s_->After(seconds(1), [] {});
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  late->Advance(minutes(10));
  Settle();
  EXPECT_TRUE(HasCode(s_->Info(*a).status(), StatusCode::kNotFound));
  EXPECT_EQ(InfoOf(*b).state, JobState::kCompleted);
}

// Late by exactly a period: the older tick's successor is due too, so it is
// missed, and the newest runs (it ran the older one, and then skipped the
// newest as an overlap).
TEST_F(PeriodicTest, Engine_2_5_ATickLateByExactlyAPeriodIsMissedAndTheNewestRuns) {
  Result<JobId> a = Record(seconds(10));
  Advance(seconds(30));
  EXPECT_EQ(Scheduled(), std::vector<Instant>{kStart + seconds(30)});
  EXPECT_EQ(InfoOf(*a).skips, 2u);
  EXPECT_EQ(InfoOf(*a).next_run, kStart + seconds(40));
}

// A first tick at now is due, not passed: it runs. One before now has passed
// and is a misfire (SPEC 3.5), skipped by default.
TEST_F(PeriodicTest, Engine_3_5_AFirstTickAtNowRunsOneBeforeNowIsAMisfire) {
  Result<JobId> now = s_->Every(seconds(10), clock_->Now(), [] {});
  Result<JobId> before = s_->Every(seconds(10), clock_->Now() - seconds(1), [] {});
  Settle();
  EXPECT_EQ(InfoOf(*now).runs, 1u);
  EXPECT_EQ(InfoOf(*now).skips, 0u);
  EXPECT_EQ(InfoOf(*before).runs, 0u);
  EXPECT_EQ(InfoOf(*before).skips, 1u);
  EXPECT_EQ(InfoOf(*before).next_run, kStart + seconds(9));
}

// A first tick at the far end of the range: the ticks since are counted
// without overflowing (UBSan stopped here).
TEST_F(PeriodicTest, Engine_2_12_AFirstTickAtTheStartOfTheRangeIsCountedWithoutOverflow) {
  JobOptions o;
  o.misfire = Misfire::kOnce;
  Result<JobId> a = s_->Every(
      seconds(1), kInstantMin, [] {}, o);
  ASSERT_TRUE(a.ok());
  Settle();
  const JobInfo info = InfoOf(*a);
  EXPECT_EQ(info.runs, 1u);
  EXPECT_GT(info.skips, 9'000'000'000u);  // 292 years of seconds
  EXPECT_GT(info.next_run, clock_->Now());
}

}  // namespace
}  // namespace ax::testing
