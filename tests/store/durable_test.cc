// DurableScheduler (SPEC 4.1-4.5, 3.5): submit, run, record, recover.
#include "ax/durable.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "ax/clock.h"

namespace ax {
namespace {

using namespace std::chrono_literals;

// Polls `pred` for up to 10 s of real time. Only for what no call waits on:
// the loader thread's work on its own real-time interval, or a run the test
// holds open. Everything the engine runs at the manual clock's instant is
// waited for with WaitIdle, which returns once its events reached the store.
template <class F>
bool Eventually(F pred) {
  for (int i = 0; i < 1000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

struct Calls {
  std::mutex mu;
  std::vector<std::pair<std::string, int>> runs;  // key, attempt
  size_t Count(const std::string& id) {
    std::lock_guard lock(mu);
    size_t n = 0;
    for (auto& r : runs) n += r.first == id;
    return n;
  }
};

// A store that passes every call to `inner`; the decorators below change
// what they watch.
class ForwardingStore : public JobStore {
 public:
  explicit ForwardingStore(std::shared_ptr<JobStore> inner) : inner_(std::move(inner)) {}
  void InsertAsync(std::vector<DurableJob> jobs, InsertCallback done) override {
    inner_->InsertAsync(std::move(jobs), std::move(done));
  }
  void PutAsync(std::vector<DurableJob> records, DoneCallback done) override {
    inner_->PutAsync(std::move(records), std::move(done));
  }
  Result<DurableJob> Mutate(std::string_view id, Mutation fn) override {
    return inner_->Mutate(id, std::move(fn));
  }
  Result<size_t> Purge(Instant before) override { return inner_->Purge(before); }
  Status Flush() override { return inner_->Flush(); }
  Result<DurableJob> Get(std::string_view id) override { return inner_->Get(id); }
  Result<std::vector<DurableJob>> List(const ListQuery& q) override { return inner_->List(q); }
  Result<std::vector<DurableJob>> LoadDue(std::optional<Instant> from, Instant before) override {
    return inner_->LoadDue(from, before);
  }
  Result<std::vector<DurableJob>> Children(std::string_view parent) override {
    return inner_->Children(parent);
  }
  Result<std::vector<DurableJob>> Orphans() override { return inner_->Orphans(); }
  Result<std::vector<uint64_t>> CountByState() override { return inner_->CountByState(); }
  StoreStats GetStats() const override { return inner_->GetStats(); }

 private:
  std::shared_ptr<JobStore> inner_;
};

// A store whose loader query (LoadDue with a start) of a range holding
// `id` stops after its read, until released: what it read is stale by then.
class GatedStore final : public ForwardingStore {
 public:
  GatedStore(std::shared_ptr<JobStore> inner, std::string id)
      : ForwardingStore(std::move(inner)), id_(std::move(id)) {}
  std::promise<void> reached;
  std::promise<void> release;
  std::atomic<int> passes{0};

  Result<std::vector<DurableJob>> LoadDue(std::optional<Instant> from, Instant before) override {
    auto r = ForwardingStore::LoadDue(from, before);
    bool holds = r.ok() && std::any_of(r->begin(), r->end(),
                                       [&](const DurableJob& j) { return j.id == id_; });
    if (from && holds && !gated_.exchange(true)) {
      reached.set_value();
      release.get_future().wait();
    }
    if (from) ++passes;
    return r;
  }

 private:
  std::string id_;
  std::atomic<bool> gated_{false};
};

class DurableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<ManualClock>(FromUnixNanos(1'700'000'000'000'000'000LL));
    store_ = std::make_shared<MemoryStore>();
  }
  std::unique_ptr<DurableScheduler> Make(Duration window = 1h, bool start = true) {
    DurableOptions o;
    o.store = store_;
    o.engine.clock = clock_;
    o.engine.workers = 4;
    o.engine.max_jobs = max_jobs_;
    o.window = window;
    o.load_interval = 5ms;
    o.owner = "test-" + std::to_string(++generation_);
    auto d = DurableScheduler::Create(std::move(o)).value();
    EXPECT_TRUE(d->RegisterHandler("rec", [this](const RunContext& ctx, std::string_view p) {
                   {
                     std::lock_guard lock(calls_.mu);
                     calls_.runs.emplace_back(std::string(ctx.key()), ctx.attempt());
                   }
                   if (p == "fail") return Status::Unavailable("boom");
                   return Status();
                 }).ok());
    if (start) {
      EXPECT_TRUE(d->Start().ok());
    }
    return d;
  }
  // Started, with a handler "wait" that says when it starts and returns
  // `out` once the test releases it (after the run's stop was asked for).
  std::unique_ptr<DurableScheduler> MakeWithWaiter(const Status& out) {
    auto d = Make(1h, false);
    EXPECT_TRUE(d->RegisterHandler("wait", [this, out](const RunContext&, std::string_view) {
                   waiter_started_.set_value();
                   (void)waiter_released_.wait_for(10s);  // bounded: a failed test ends
                   return out;
                 }).ok());
    EXPECT_TRUE(d->Start().ok());
    return d;
  }
  bool WaiterStarted() {
    return waiter_started_.get_future().wait_for(10s) == std::future_status::ready;
  }
  // Runs `j` on the handler above, due after `due`, until the drain's time
  // is up (10 ms) and its stop fails it; returns the record the store kept.
  DurableJob StoppedByTheDrain(DurableJob j, Duration due) {
    auto d = MakeWithWaiter(Status::Cancelled("stopped"));
    j.handler = "wait";
    EXPECT_TRUE(d->Submit(j).ok());
    clock_->Advance(due);
    EXPECT_TRUE(WaiterStarted());
    (void)d->Shutdown(10ms);  // asks the run to stop before it returns
    waiter_release_.set_value();
    d.reset();  // waits for the run to end
    return *store_->Get(j.id);
  }
  // Whether the engine's drain has begun (it refuses new jobs), within 10 s:
  // the durable layer refuses them a moment before.
  static bool DrainBegun(DurableScheduler& d) {
    return Eventually([&] {
      auto probe = d.engine().After(1h, [] {});
      return probe.status().code() == StatusCode::kShuttingDown;
    });
  }
  // A one-shot on the handler above with a timeout of 5 s and no retry
  // (which would start, and be left, in a drain).
  DurableJob TimesOut(std::string id) {
    DurableJob j = Once(std::move(id), 0s);
    j.handler = "wait";
    j.timeout = 5s;
    j.retry.max_attempts = 1;
    return j;
  }
  // A one-shot record left Running, on its first attempt, by a dead process.
  DurableJob LeftRunning(std::string id) {
    DurableJob j = Once(std::move(id), 0s);
    j.state = JobState::kRunning;
    j.attempt = 1;
    j.next_run = clock_->Now() - 5s;
    j.lease_owner = "dead-host:1";
    j.lease_expiry = clock_->Now() - 1s;
    j.created_at = clock_->Now() - 10s;
    return j;
  }
  // "tick", every 10 s, stored with its next run `ago` in the past: ticks
  // missed while no process ran it.
  DurableJob Missed(Misfire misfire, Duration ago) {
    DurableJob j;
    j.id = "tick";
    j.handler = "rec";
    j.kind = JobKind::kEvery;
    j.period = 10s;
    j.misfire = misfire;
    j.next_run = clock_->Now() - ago;
    return j;
  }
  DurableJob Once(std::string id, Duration in, std::string payload = "") {
    DurableJob j;
    j.id = std::move(id);
    j.handler = "rec";
    j.payload = std::move(payload);
    j.delay = in;
    return j;
  }
  std::shared_ptr<ManualClock> clock_;
  std::shared_ptr<JobStore> store_;
  std::promise<void> waiter_started_;  // MakeWithWaiter
  std::promise<void> waiter_release_;
  std::shared_future<void> waiter_released_ = waiter_release_.get_future().share();
  Calls calls_;
  int generation_ = 0;
  size_t max_jobs_ = 0;  // the engine's, for Make
};

TEST_F(DurableTest, Durable_4_3_SubmitIsStoredBeforeItReturns) {
  auto d = Make();
  auto r = d->Submit(Once("a", 10s));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->created);
  auto stored = store_->Get("a");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, JobState::kWaiting);
  EXPECT_EQ(stored->next_run, clock_->Now() + 10s);
}

TEST_F(DurableTest, Durable_4_5_RunIsRecordedAndCompleted) {
  auto d = Make();
  ASSERT_TRUE(d->Submit(Once("a", 1s)).ok());
  clock_->Advance(1s);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("a")->state, JobState::kCompleted);
  EXPECT_EQ(calls_.Count("a"), 1u);
  auto j = *store_->Get("a");
  EXPECT_EQ(j.runs, 1u);
  EXPECT_EQ(j.attempt, 1);
  EXPECT_TRUE(j.finished_at.has_value());
  EXPECT_TRUE(j.lease_owner.empty());
}

TEST_F(DurableTest, Durable_4_4_SameIdWhileLiveIsNotDuplicated) {
  auto d = Make();
  ASSERT_TRUE(d->Submit(Once("a", 5s)).ok());
  auto again = d->Submit(Once("a", 50s));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  clock_->Advance(60s);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("a")->state, JobState::kCompleted);
  EXPECT_EQ(calls_.Count("a"), 1u);
}

TEST_F(DurableTest, Durable_2_2_BadSubmissionsNameTheField) {
  auto d = Make();
  DurableJob j = Once("bad id!", 1s);
  EXPECT_EQ(d->Submit(j).status().code(), StatusCode::kInvalidArgument);
  j = Once("x", 1s);
  j.handler = "nope";
  auto r = d->Submit(j);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("handler"), std::string::npos);
  j = Once("y", 1s);
  j.kind = JobKind::kEvery;
  j.period = 0s;
  EXPECT_NE(d->Submit(j).status().message().find("schedule.every"), std::string::npos);
  j = Once("z", 1s);
  j.parent = "missing";
  EXPECT_EQ(d->Submit(j).status().code(), StatusCode::kNotFound);
}

TEST_F(DurableTest, Durable_4_5_LeasedRunIsRecoveredWithNextAttempt) {
  // A record left Running by a dead process.
  DurableJob j = LeftRunning("crashed");
  j.retry.max_attempts = 3;
  ASSERT_TRUE(store_->Put({j}).ok());
  auto d = Make();
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("crashed")->state, JobState::kCompleted);
  std::lock_guard lock(calls_.mu);
  ASSERT_EQ(calls_.runs.size(), 1u);
  EXPECT_EQ(calls_.runs[0].second, 2);  // attempt + 1
  EXPECT_TRUE(store_->Get("crashed")->recovered);
}

TEST_F(DurableTest, Durable_4_5_ChildrenOfAParentFinishedBeforeARestartAreResolved) {
  // A crash after the parents' outcomes were stored, before the children
  // were released: the children wait (no next run) for parents that are done.
  const Instant now = clock_->Now();
  auto parent = [&](std::string id, JobState state) {
    DurableJob p = Once(std::move(id), 0s);
    p.state = state;
    p.created_at = now - 1min;
    p.finished_at = now - 10s;
    return p;
  };
  auto child = [&](std::string id, std::string of, Duration in) {
    DurableJob c = Once(std::move(id), in);
    c.parent = std::move(of);
    c.created_at = now - 1min;
    return c;
  };
  ASSERT_TRUE(store_
                  ->Put({parent("ok", JobState::kCompleted), parent("died", JobState::kDead),
                         parent("gone", JobState::kCancelled), child("after-ok", "ok", 5s),
                         child("later", "ok", 30s), child("after-died", "died", 0s),
                         child("after-gone", "gone", 0s), child("orphan", "purged", 0s)})
                  .ok());
  auto d = Make();
  // Released 5 s after the parent's success, which was 10 s ago: runs now.
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("after-ok")->state, JobState::kCompleted);
  EXPECT_EQ(store_->Get("later")->next_run, now + 20s);
  EXPECT_EQ(calls_.Count("later"), 0u);
  EXPECT_EQ(store_->Get("after-died")->state, JobState::kDead);
  EXPECT_EQ(store_->Get("after-gone")->state, JobState::kCancelled);
  EXPECT_EQ(store_->Get("orphan")->state, JobState::kCancelled);
  EXPECT_EQ(store_->Get("orphan")->reason, "parent purged is no longer stored");
  clock_->Advance(20s);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("later")->state, JobState::kCompleted);
  EXPECT_EQ(calls_.Count("after-died") + calls_.Count("after-gone") + calls_.Count("orphan"), 0u);
}

TEST_F(DurableTest, Durable_4_2_JobsBeyondTheWindowStayInTheStore) {
  auto d = Make(10min);
  ASSERT_TRUE(d->Submit(Once("near", 1min)).ok());
  ASSERT_TRUE(d->Submit(Once("far", 2h)).ok());
  EXPECT_EQ(d->GetStats().loaded, 1u);
  EXPECT_FALSE(d->engine().Info("far").ok());
  clock_->Advance(1h + 55min);  // "far" enters the window
  ASSERT_TRUE(Eventually([&] { return d->engine().Info("far").ok(); }));
  clock_->Advance(10min);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("far")->state, JobState::kCompleted);
}

TEST_F(DurableTest, Durable_4_2_AJobAFullEngineRefusedLoadsOnceAPlaceIsFree) {
  max_jobs_ = 2;
  auto d = Make();
  ASSERT_TRUE(d->Submit(Once("a", 1min)).ok());
  ASSERT_TRUE(d->Submit(Once("b", 2min)).ok());
  ASSERT_TRUE(d->Submit(Once("c", 3min)).ok());  // the engine is full: kept in the store
  ASSERT_TRUE(d->Submit(Once("d", 30s)).ok());   // as well, and due first
  EXPECT_EQ(d->GetStats().loaded, 2u);
  EXPECT_EQ(d->GetStats().deferred, 2u);
  ASSERT_TRUE(d->Cancel("b").ok());  // one place: the earliest refused job takes it
  ASSERT_TRUE(Eventually([&] { return d->engine().Info("d").ok(); }));
  EXPECT_FALSE(d->engine().Info("c").ok());
  EXPECT_EQ(d->GetStats().deferred, 1u);
  clock_->Advance(1min);  // "d" and "a" run and free their places
  ASSERT_TRUE(d->engine().WaitIdle());
  ASSERT_TRUE(Eventually([&] { return d->engine().Info("c").ok(); }));
  EXPECT_EQ(d->GetStats().deferred, 0u);
  clock_->Advance(2min);
  ASSERT_TRUE(d->engine().WaitIdle());
  for (const char* id : {"a", "c", "d"}) {
    EXPECT_EQ(store_->Get(id)->state, JobState::kCompleted) << id;
    EXPECT_EQ(calls_.Count(id), 1u) << id;
  }
  EXPECT_EQ(store_->Get("b")->state, JobState::kCancelled);
}

TEST_F(DurableTest, Durable_4_2_ManyJobsThroughASmallEngineRunOnceEach) {
  max_jobs_ = 4;
  auto d = Make();
  std::vector<DurableJob> jobs;
  jobs.reserve(200);
  for (int i = 0; i < 200; ++i) jobs.push_back(Once("j" + std::to_string(i), 1s * (i % 37)));
  ASSERT_TRUE(d->Submit(std::move(jobs)).ok());
  ASSERT_TRUE(d->Cancel("j5").ok());  // in the engine or only in the store
  clock_->Advance(40s);               // all due, 4 in the engine at a time
  ASSERT_TRUE(Eventually([&] {
    const DurableStats st = d->GetStats();
    return st.deferred == 0 && st.loaded == 0;
  }));
  ASSERT_TRUE(d->engine().WaitIdle());
  for (int i = 0; i < 200; ++i) {
    const std::string id = "j" + std::to_string(i);
    EXPECT_EQ(calls_.Count(id), i == 5 ? 0u : 1u) << id;
    EXPECT_EQ(store_->Get(id)->state, i == 5 ? JobState::kCancelled : JobState::kCompleted) << id;
  }
}

TEST_F(DurableTest, Durable_3_5_CatchUpRunsAFullEngineRefusedRunLater) {
  DurableJob j = Missed(Misfire::kAll, 55s);  // 6 missed
  j.max_catch_up = 3;
  ASSERT_TRUE(store_->Put({j}).ok());
  max_jobs_ = 2;  // the job and one catch-up run at a time
  auto d = Make();
  ASSERT_TRUE(Eventually([&] { return calls_.Count("tick") == 3; }));
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(calls_.Count("tick"), 3u);
  EXPECT_EQ(d->GetStats().deferred, 0u);
}

TEST_F(DurableTest, Durable_3_5_PeriodicMisfireSkipKeepsPhase) {
  DurableJob j = Missed(Misfire::kSkip, 35s);  // 4 ticks missed: -35, -25, -15, -5
  j.created_at = clock_->Now() - 100s;
  ASSERT_TRUE(store_->Put({j}).ok());
  auto d = Make();
  auto info = d->engine().Info("tick");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->next_run, clock_->Now() + 5s);
  EXPECT_EQ(d->Get("tick")->skips, 4u);
  d->engine().WaitIdle();
  EXPECT_EQ(calls_.Count("tick"), 0u);
}

TEST_F(DurableTest, Durable_3_5_PeriodicMisfireOnceRunsOneNow) {
  ASSERT_TRUE(store_->Put({Missed(Misfire::kOnce, 35s)}).ok());
  auto d = Make();
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(calls_.Count("tick"), 1u);
}

TEST_F(DurableTest, Durable_3_5_PeriodicMisfireAllIsCapped) {
  DurableJob j = Missed(Misfire::kAll, 55s);  // 6 missed
  j.max_catch_up = 3;
  ASSERT_TRUE(store_->Put({j}).ok());
  auto d = Make();
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(calls_.Count("tick"), 3u);
}

TEST_F(DurableTest, Durable_2_8_LiveChangesAreStored) {
  auto d = Make(10min);
  ASSERT_TRUE(d->Submit(Once("near", 1min)).ok());
  ASSERT_TRUE(d->Submit(Once("far", 2h)).ok());
  for (const char* id : {"near", "far"}) {
    ASSERT_TRUE(d->Pause(id).ok()) << id;
    EXPECT_EQ(store_->Get(id)->state, JobState::kPaused) << id;
    EXPECT_EQ(d->Pause(id).code(), StatusCode::kInvalidState) << id;
    ASSERT_TRUE(d->Resume(id).ok()) << id;
    EXPECT_EQ(store_->Get(id)->state, JobState::kWaiting) << id;
  }
  ASSERT_TRUE(d->SetDelay("far", 30s).ok());
  EXPECT_EQ(store_->Get("far")->next_run, clock_->Now() + 30s);
  EXPECT_TRUE(d->engine().Info("far").ok()) << "moved into the window";
  ASSERT_TRUE(d->Cancel("near").ok());
  EXPECT_EQ(store_->Get("near")->state, JobState::kCancelled);
  EXPECT_EQ(d->Cancel("near").code(), StatusCode::kInvalidState);
  EXPECT_EQ(d->Cancel("nobody").code(), StatusCode::kNotFound);
}

TEST_F(DurableTest, Durable_2_6_RetriesAreRecordedThenDead) {
  auto d = Make();
  DurableJob j = Once("flaky", 0s, "fail");
  j.retry = RetryPolicy::Fixed(3, 1s);
  ASSERT_TRUE(d->Submit(j).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(d->engine().WaitIdle());
    EXPECT_EQ(calls_.Count("flaky"), static_cast<size_t>(i + 1));
    clock_->Advance(1s);
  }
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("flaky")->state, JobState::kDead);
  auto s = *store_->Get("flaky");
  EXPECT_EQ(s.failures, 3u);
  EXPECT_EQ(s.attempt, 3);
  EXPECT_NE(s.last_error.find("boom"), std::string::npos);
}

TEST_F(DurableTest, Durable_4_5_RestartContinuesRetryCount) {
  {
    auto d = Make();
    DurableJob j = Once("flaky", 0s, "fail");
    j.retry = RetryPolicy::Fixed(3, 10s);
    ASSERT_TRUE(d->Submit(j).ok());
    ASSERT_TRUE(d->engine().WaitIdle());
    EXPECT_EQ(store_->Get("flaky")->failures, 1u);
    (void)d->Shutdown(1s);
  }
  EXPECT_EQ(store_->Get("flaky")->attempt, 1);
  auto d = Make();
  clock_->Advance(10s);
  ASSERT_TRUE(d->engine().WaitIdle());
  ASSERT_EQ(calls_.Count("flaky"), 2u);
  std::lock_guard lock(calls_.mu);
  EXPECT_EQ(calls_.runs.back().second, 2);
}

// Counts the record writes that reach the store.
class CountingStore final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  void PutAsync(std::vector<DurableJob> records, DoneCallback done) override {
    {
      std::lock_guard lock(mu_);
      for (const auto& r : records) puts_.push_back(r);
    }
    ForwardingStore::PutAsync(std::move(records), std::move(done));
  }
  std::vector<DurableJob> Puts() {
    std::lock_guard lock(mu_);
    return puts_;
  }

 private:
  std::mutex mu_;
  std::vector<DurableJob> puts_;
};

TEST_F(DurableTest, Durable_4_5_OneWritePerTransition) {
  auto counting = std::make_shared<CountingStore>(store_);
  store_ = counting;
  auto d = Make();
  ASSERT_TRUE(d->Submit(Once("a", 1s)).ok());  // an insert, no record write
  clock_->Advance(1s);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("a")->state, JobState::kCompleted);
  (void)d->Shutdown(1s);
  // The lease before the run, the success after it: nothing else.
  auto puts = counting->Puts();
  std::string seen;
  for (const auto& p : puts) {
    seen += std::string(JobStateText(p.state)) + " runs=" + std::to_string(p.runs) +
            " next=" + std::to_string(p.next_run ? ToUnixNanos(*p.next_run) : -1) +
            " reason=" + p.reason + "; ";
  }
  ASSERT_EQ(puts.size(), 2u) << seen;
  EXPECT_EQ(puts[0].state, JobState::kRunning);
  EXPECT_EQ(puts[0].runs, 1u);
  EXPECT_FALSE(puts[0].lease_owner.empty());
  EXPECT_EQ(puts[1].state, JobState::kCompleted);
  EXPECT_EQ(puts[1].runs, 1u);
}

TEST_F(DurableTest, Durable_4_5_LongRunKeepsItsLease) {
  DurableOptions o;
  o.store = store_;
  o.engine.clock = clock_;
  o.engine.workers = 2;
  o.load_interval = 5ms;
  o.lease = 1min;
  o.lease_grace = 10s;
  o.owner = "long-runner";
  auto d = DurableScheduler::Create(std::move(o)).value();
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> started{false};
  ASSERT_TRUE(d->RegisterHandler("block", [&](const RunContext&, std::string_view) {
                 started = true;
                 open.wait();
                 return Status();
               }).ok());
  ASSERT_TRUE(d->Start().ok());
  DurableJob j = Once("long", 0s);
  j.handler = "block";
  ASSERT_TRUE(d->Submit(j).ok());
  ASSERT_TRUE(Eventually([&] { return started.load(); }));
  Instant t0 = clock_->Now();
  auto first = *store_->Get("long");
  ASSERT_EQ(first.state, JobState::kRunning);
  EXPECT_EQ(first.lease_expiry, t0 + 70s);  // lease + grace
  // Past half the lease: renewed from now, still Running and ours.
  clock_->Advance(40s);
  ASSERT_TRUE(Eventually([&] { return store_->Get("long")->lease_expiry == t0 + 110s; }));
  auto renewed = *store_->Get("long");
  EXPECT_EQ(renewed.state, JobState::kRunning);
  EXPECT_EQ(renewed.lease_owner, "long-runner");
  EXPECT_EQ(renewed.attempt, 1);
  clock_->Advance(40s);  // and again, long after the first lease ran out
  ASSERT_TRUE(Eventually([&] { return store_->Get("long")->lease_expiry == t0 + 150s; }));
  gate.set_value();
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(store_->Get("long")->state, JobState::kCompleted);
  auto done = *store_->Get("long");
  EXPECT_TRUE(done.lease_owner.empty());
  EXPECT_FALSE(done.lease_expiry.has_value());
  EXPECT_EQ(done.runs, 1u);
}

// Shutdown called from two threads at once (a handler, say, and a signal's
// thread): one does the work, the other returns; neither joins the loader a
// second time (TSan saw both read and write the flag). Then, as the engine's
// calls (SPEC 2.11), submissions get ShuttingDown: they were stored, to run
// at the next start only.
TEST_F(DurableTest, Durable_2_11_ShutdownFromTwoThreadsAtOnce) {
  auto d = Make();
  std::promise<void> go;
  std::shared_future<void> ready = go.get_future().share();
  std::vector<std::thread> ts;
  ts.reserve(2);
  for (int i = 0; i < 2; ++i) {
    ts.emplace_back([&d, ready] {
      ready.wait();
      (void)d->Shutdown(1s);
    });
  }
  go.set_value();
  for (auto& t : ts) t.join();
  EXPECT_EQ(d->Submit(Once("late", 10s)).status().code(), StatusCode::kShuttingDown);
  EXPECT_EQ(d->SetDelay("late", 1s).code(), StatusCode::kShuttingDown);
  EXPECT_EQ(d->Get("late").status().code(), StatusCode::kNotFound) << "stored after Shutdown";
}

// SPEC 5.5's drain: a run under way ends on its own within the timeout and
// is recorded; a job that comes due meanwhile does not start, stays as
// stored, and runs at the next start.
TEST_F(DurableTest, Durable_5_5_TheDrainLetsARunFinishAndStartsNothing) {
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto d = Make(1h, false);
  ASSERT_TRUE(d->RegisterHandler("hold", [&](const RunContext&, std::string_view) {
                 started.set_value();
                 released.wait();
                 return Status();
               }).ok());
  ASSERT_TRUE(d->Start().ok());
  DurableJob held = Once("held", 0s);
  held.handler = "hold";
  ASSERT_TRUE(d->Submit(held).ok());
  ASSERT_TRUE(d->Submit(Once("due", 1s)).ok());
  ASSERT_EQ(started.get_future().wait_for(10s), std::future_status::ready);
  std::future<ShutdownReport> report =
      std::async(std::launch::async, [&d] { return d->Shutdown(1h); });
  ASSERT_TRUE(DrainBegun(*d));
  clock_->Advance(1s);
  ASSERT_TRUE(d->engine().WaitDispatched());
  EXPECT_EQ(d->engine().Info("due")->runs, 0u);  // due, and not started
  EXPECT_EQ(report.wait_for(0s), std::future_status::timeout) << "the drain did not wait";
  release.set_value();
  EXPECT_TRUE(report.get().clean());
  EXPECT_EQ(store_->Get("held")->state, JobState::kCompleted);  // recorded by then
  EXPECT_EQ(calls_.Count("due"), 0u);
  EXPECT_EQ(store_->Get("due")->state, JobState::kWaiting);
  EXPECT_EQ(store_->Get("due")->runs, 0u);
  d.reset();
  d = Make();
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(calls_.Count("due"), 1u);
  EXPECT_EQ(store_->Get("due")->state, JobState::kCompleted);
}

// A run still going when the drain's time is up gets its stop requested; if
// it fails then, it keeps its lease and runs again at the next start (4.5).
TEST_F(DurableTest, Durable_5_5_ARunStoppedByTheDrainRunsAgainAtTheNextStart) {
  DurableJob kept = StoppedByTheDrain(Once("s", 0s), 0s);
  EXPECT_EQ(kept.state, JobState::kRunning);
  EXPECT_FALSE(kept.lease_owner.empty());
  EXPECT_EQ(kept.attempt, 1);
  EXPECT_EQ(kept.failures, 0u);

  auto d = Make(1h, false);
  std::atomic<int> attempt{0};
  ASSERT_TRUE(d->RegisterHandler("wait", [&](const RunContext& ctx, std::string_view) {
                 attempt = ctx.attempt();
                 return Status();
               }).ok());
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(attempt.load(), 2);
  DurableJob done = *store_->Get("s");
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_TRUE(done.recovered);
}

// The same for a periodic job's tick: its failure after the stop does not
// move the record on to the next tick.
TEST_F(DurableTest, Durable_5_5_APeriodicTickStoppedByTheDrainKeepsItsLease) {
  DurableJob p = Once("p", 0s);
  p.kind = JobKind::kEvery;
  p.period = 1min;
  DurableJob kept = StoppedByTheDrain(p, 1min);
  EXPECT_EQ(kept.state, JobState::kRunning);
  EXPECT_FALSE(kept.lease_owner.empty());
}

// A run that times out while the drain waits for it fails as usual: only a
// stop that the drain itself asks for hands the run back.
TEST_F(DurableTest, Durable_5_5_ATimeoutDuringTheDrainIsAFailure) {
  auto d = MakeWithWaiter(Status::DeadlineExceeded("gave up"));
  ASSERT_TRUE(d->Submit(TimesOut("s")).ok());
  ASSERT_TRUE(WaiterStarted());
  std::future<ShutdownReport> report =
      std::async(std::launch::async, [&d] { return d->Shutdown(1h); });
  ASSERT_TRUE(DrainBegun(*d));
  clock_->Advance(5s);  // the run's timeout
  ASSERT_TRUE(d->engine().WaitDispatched());
  waiter_release_.set_value();
  EXPECT_TRUE(report.get().clean());
  d.reset();
  DurableJob kept = *store_->Get("s");
  EXPECT_EQ(kept.state, JobState::kDead);
  EXPECT_TRUE(kept.lease_owner.empty());
  EXPECT_EQ(kept.failures, 1u);
  EXPECT_NE(kept.last_error.find("timed out"), std::string::npos) << kept.last_error;
}

// A timeout on the last attempt: the job is dead in the engine before its
// events (timed out, failed, dead) reach the record, and the record that
// ends it still counts the failure and names it.
TEST_F(DurableTest, Durable_2_6_ATimeoutOnTheLastAttemptIsCountedInTheDeadRecord) {
  auto d = MakeWithWaiter(Status::Cancelled("stopped"));
  ASSERT_TRUE(d->Submit(TimesOut("s")).ok());
  ASSERT_TRUE(WaiterStarted());
  clock_->Advance(5s);
  ASSERT_TRUE(d->engine().WaitDispatched());
  waiter_release_.set_value();
  ASSERT_TRUE(d->engine().WaitIdle());
  DurableJob kept = *store_->Get("s");
  EXPECT_EQ(kept.state, JobState::kDead);
  EXPECT_EQ(kept.failures, 1u);
  EXPECT_NE(kept.last_error.find("timed out after 5s"), std::string::npos) << kept.last_error;
}

// Called from a handler, the drain does not wait for that very handler.
TEST_F(DurableTest, Durable_5_5_ShutdownFromAHandlerDoesNotWaitForItself) {
  std::promise<bool> clean;
  auto d = Make(1h, false);
  ASSERT_TRUE(d->RegisterHandler("quit", [&](const RunContext&, std::string_view) {
                 clean.set_value(d->Shutdown(1h).clean());
                 return Status();
               }).ok());
  ASSERT_TRUE(d->Start().ok());
  DurableJob q = Once("q", 0s);
  q.handler = "quit";
  ASSERT_TRUE(d->Submit(q).ok());
  std::future<bool> done = clean.get_future();
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready) << "the drain waited for itself";
  EXPECT_FALSE(done.get());  // the handler itself, still running
}

TEST_F(DurableTest, Durable_4_3_SqliteRoundTripAcrossRestart) {
  auto dir = std::filesystem::temp_directory_path() / ("ax-durable-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto path = (dir / "ax.db").string();
  {
    store_ = SqliteStore::Open({.path = path}).value();
    auto d = Make();
    std::vector<DurableJob> batch;
    batch.reserve(100);
    for (int i = 0; i < 100; ++i) batch.push_back(Once("b" + std::to_string(i), 5s));
    auto r = d->Submit(std::move(batch));
    ASSERT_TRUE(r.ok());
    (void)d->Shutdown(1s);
    d.reset();
    store_.reset();
  }
  store_ = SqliteStore::Open({.path = path}).value();
  auto d = Make();
  EXPECT_EQ(d->GetStats().loaded, 100u);
  clock_->Advance(5s);
  ASSERT_TRUE(d->engine().WaitIdle());
  ASSERT_TRUE(store_->Flush().ok());  // SQLite writes on its own thread
  EXPECT_EQ((*store_->CountByState())[static_cast<int>(JobState::kCompleted)], 100u);
  d.reset();
  store_.reset();
  std::filesystem::remove_all(dir);
}

// A paused one-shot keeps its deadline in the store. It was stored without
// one, so after a restart the resumed job was never loaded again: lost.
TEST_F(DurableTest, Durable_4_5_APausedOneShotResumedAfterARestartRuns) {
  {
    auto d = Make();
    ASSERT_TRUE(d->Submit(Once("a", 10s)).ok());
    ASSERT_TRUE(d->Pause("a").ok());
  }
  EXPECT_EQ(store_->Get("a")->next_run, clock_->Now() + 10s);
  clock_->Advance(1min);
  auto d = Make();
  ASSERT_TRUE(d->Resume("a").ok());
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(calls_.Count("a"), 1u);
  EXPECT_EQ(d->Get("a")->state, JobState::kCompleted);
}

// A periodic run in flight at a crash: its record still names that tick as
// the next run. Recovered, the tick runs once, and is no misfire: it counted
// as a skip (skip), or ran twice more (once, all).
TEST_F(DurableTest, Durable_4_5_APeriodicRunInFlightAtACrashRunsOnceMore) {
  const Instant t0 = clock_->Now();
  clock_->Advance(11s);  // the restart: the tick of t0 + 10 s was under way
  for (Misfire m : {Misfire::kSkip, Misfire::kOnce, Misfire::kAll}) {
    store_ = std::make_shared<MemoryStore>();
    DurableJob e;
    e.id = "e";
    e.handler = "rec";
    e.kind = JobKind::kEvery;
    e.period = 10s;
    e.misfire = m;
    e.state = JobState::kRunning;
    e.next_run = t0 + 10s;  // as BeginRun leaves it
    e.run_scheduled_at = t0 + 10s;
    e.attempt = 1;
    e.runs = 1;
    e.lease_owner = "dead-host:1";
    e.lease_expiry = t0 + 5s;
    e.created_at = t0;
    ASSERT_TRUE(store_->Put({e}).ok());
    {
      std::lock_guard lock(calls_.mu);
      calls_.runs.clear();
    }
    auto d = Make();
    ASSERT_TRUE(d->engine().WaitIdle());
    const DurableJob g = *d->Get("e");
    {
      std::lock_guard lock(calls_.mu);  // the recovered run's key is "e@<n>"
      EXPECT_EQ(calls_.runs.size(), 1u) << static_cast<int>(m);
    }
    EXPECT_EQ(g.skips, 0u) << static_cast<int>(m);
    EXPECT_EQ(g.next_run, t0 + 20s) << static_cast<int>(m);
    EXPECT_TRUE(g.recovered);
    (void)d->Shutdown(1s);
  }
}

// A change to a cron job held in the engine waited for its store write
// holding the layer's lock, which the store's committer needed for a
// concurrent submission's callback, queued before that write: a deadlock.
TEST_F(DurableTest, Durable_2_8_SetCronBesideSubmissionsDoesNotDeadlock) {
  auto dir = std::filesystem::temp_directory_path() / ("ax-setcron-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  store_ = SqliteStore::Open({.path = (dir / "ax.db").string()}).value();
  auto d = Make();
  DurableJob c;
  c.id = "c";
  c.handler = "rec";
  c.kind = JobKind::kCron;
  c.cron = "0 * * * *";
  ASSERT_TRUE(d->Submit(c).ok());
  std::atomic<bool> stop{false};
  std::thread submitter([&] {
    for (int i = 0; !stop; ++i) (void)d->Submit(Once("s" + std::to_string(i), 10min));
  });
  std::atomic<int> done{0};
  std::thread changer([&] {
    for (int i = 0; i < 200; ++i) {
      EXPECT_TRUE(d->SetCron("c", i % 2 != 0 ? "0 * * * *" : "30 * * * *", "UTC").ok());
      ++done;
    }
  });
  if (!Eventually([&] { return done.load() == 200; })) {
    std::fprintf(stderr, "deadlock: SetCron made %d of 200 calls\n", done.load());
    std::_Exit(1);  // the threads cannot be joined
  }
  stop = true;
  submitter.join();
  changer.join();
  d.reset();
  store_.reset();
  std::filesystem::remove_all(dir);
}

// SPEC 2.9 for a parent beyond the load window: cancelled in the store, it
// ends its waiting children there too, down the chain.
TEST_F(DurableTest, Durable_2_9_CancellingAParentBeyondTheWindowCancelsItsChildren) {
  auto d = Make(10min);
  ASSERT_TRUE(d->Submit(Once("p", 2h)).ok());
  DurableJob c = Once("c", 1s);
  c.parent = "p";
  DurableJob g = Once("g", 1s);
  g.parent = "c";
  ASSERT_TRUE(d->Submit(c).ok());
  ASSERT_TRUE(d->Submit(g).ok());
  ASSERT_TRUE(d->Cancel("p").ok());
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(d->Get("c")->state, JobState::kCancelled);
  EXPECT_EQ(d->Get("c")->reason, "parent p is cancelled");
  EXPECT_EQ(d->Get("g")->state, JobState::kCancelled);
  EXPECT_EQ(d->Get("g")->reason, "parent c is cancelled");
}

// A child submitted after its parent ended ends as a waiting child would: the
// child of a dead parent is Dead (SPEC 2.3), of a cancelled one Cancelled.
TEST_F(DurableTest, Durable_2_9_AChildOfAnEndedParentEndsAsTheParentDid) {
  DurableJob dead = Once("dead", 0s);
  dead.state = JobState::kDead;
  DurableJob gone = Once("gone", 0s);
  gone.state = JobState::kCancelled;
  for (DurableJob* p : {&dead, &gone}) {
    p->created_at = clock_->Now() - 1min;
    p->finished_at = p->created_at;
  }
  ASSERT_TRUE(store_->Put({dead, gone}).ok());
  auto d = Make();
  DurableJob a = Once("a", 1s);
  a.parent = "dead";
  DurableJob b = Once("b", 1s);
  b.parent = "gone";
  ASSERT_TRUE(d->Submit(a).ok());
  ASSERT_TRUE(d->Submit(b).ok());
  EXPECT_EQ(d->Get("a")->state, JobState::kDead);
  EXPECT_EQ(d->Get("a")->reason, "parent dead is dead");
  EXPECT_EQ(d->Get("b")->state, JobState::kCancelled);
  EXPECT_EQ(d->Get("b")->reason, "parent gone is cancelled");
}

TEST_F(DurableTest, Durable_4_3_AnIdTwiceInABatchIsNamedWithItsIndex) {
  auto d = Make();
  auto r = d->Submit(std::vector<DurableJob>{Once("x", 1s), Once("y", 1s), Once("y", 2s)});
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), R"(jobs[2].id: "y" appears twice in the batch (also jobs[1]))");
  EXPECT_FALSE(store_->Get("x").ok());
}

// Start resolved the children a crash left waiting for a finished parent with
// store writes awaited under the layer's lock, which the store's committer
// needed for a concurrent Submit's callback: a deadlock, as SetCron's.
TEST_F(DurableTest, Durable_4_5_StartBesideSubmissionsDoesNotDeadlock) {
  auto dir = std::filesystem::temp_directory_path() / ("ax-start-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  store_ = SqliteStore::Open({.path = (dir / "ax.db").string()}).value();
  DurableJob p = Once("p", 0s);
  p.state = JobState::kCompleted;
  p.created_at = clock_->Now() - 1min;
  p.finished_at = p.created_at;
  std::vector<DurableJob> orphans{p};
  for (int i = 0; i < 300; ++i) {
    DurableJob c = Once("c" + std::to_string(i), 1h);
    c.parent = "p";
    c.created_at = clock_->Now() - 2min;
    orphans.push_back(c);
  }
  ASSERT_TRUE(store_->Put(orphans).ok());
  auto d = Make(1h, false);
  std::atomic<bool> stop{false};
  std::atomic<int> submitted{0};
  std::thread submitter([&] {
    for (int i = 0; !stop; ++i) {
      (void)d->Submit(Once("s" + std::to_string(i), 10min));
      ++submitted;
    }
  });
  ASSERT_TRUE(Eventually([&] { return submitted.load() > 0; }));
  std::atomic<bool> started{false};
  std::thread starter([&] {
    EXPECT_TRUE(d->Start().ok());
    started = true;
  });
  if (!Eventually([&] { return started.load(); })) {
    std::fprintf(stderr, "deadlock: Start beside submissions\n");
    std::_Exit(1);  // the threads cannot be joined
  }
  stop = true;
  submitter.join();
  starter.join();
  EXPECT_EQ(d->Get("c7")->next_run, clock_->Now() - 1min + 1h);
  d.reset();
  store_.reset();
  std::filesystem::remove_all(dir);
}

// A stored job whose handler type is not registered at the restart (here a
// run in flight at a crash): paused with the reason, not left due in the
// store where no load would find it.
TEST_F(DurableTest, Durable_4_5_AJobWithoutItsHandlerIsPausedWithTheReason) {
  DurableJob j = LeftRunning("orphaned");
  j.handler = "gone";
  ASSERT_TRUE(store_->Put({j}).ok());
  {
    auto d = Make();
    ASSERT_TRUE(store_->Flush().ok());
    EXPECT_EQ(d->GetStats().recovered, 0u);  // not a run recovered
    EXPECT_TRUE(store_->Get("orphaned")->lease_owner.empty());
    auto r = d->Get("orphaned");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->state, JobState::kPaused);
    EXPECT_EQ(r->reason, "not loaded: handler type 'gone' is not registered");
    EXPECT_EQ(d->Resume("orphaned").code(), StatusCode::kNotFound);  // still not registered
    ASSERT_TRUE(store_->Flush().ok());
    EXPECT_EQ(d->Get("orphaned")->state, JobState::kPaused);
  }
  // Registered at the next start, it runs once resumed.
  auto d = Make(1h, false);
  std::atomic<int> runs{0};
  ASSERT_TRUE(d->RegisterHandler("gone", [&runs](const RunContext&, std::string_view) {
                 ++runs;
                 return Status();
               }).ok());
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(runs.load(), 0);
  ASSERT_TRUE(d->Resume("orphaned").ok());
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(d->Get("orphaned")->state, JobState::kCompleted);
}

// A job cancelled in the store while the loader's query that read it as
// waiting is under way: the loader reads it again, and it never runs.
TEST_F(DurableTest, Durable_4_2_ACancelDuringTheLoadersReadIsNotUndone) {
  auto gated = std::make_shared<GatedStore>(store_, "x");
  store_ = gated;
  auto d = Make(1h);
  ASSERT_TRUE(d->Submit(Once("x", 2h)).ok());  // beyond the window: stored only
  clock_->Advance(1h + 1min);                  // the loader's next range holds it
  ASSERT_EQ(gated->reached.get_future().wait_for(10s), std::future_status::ready);
  ASSERT_TRUE(d->Cancel("x").ok());
  const int passes = gated->passes.load();
  gated->release.set_value();
  clock_->Advance(1s);  // one more pass of the loader, after the gated one
  ASSERT_TRUE(Eventually([&] { return gated->passes.load() > passes + 1; }));
  clock_->Advance(1h);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(calls_.Count("x"), 0u);
  EXPECT_EQ(d->Get("x")->state, JobState::kCancelled);
}

// The same for a child waiting for its parent: paused when its parent loads
// it, and resumed once its handler is registered, it waits for the parent
// in the engine, and runs after it.
TEST_F(DurableTest, Durable_2_9_AChildWithoutItsHandlerIsPausedAndWaitsForItsParentOnceResumed) {
  DurableJob p = Once("p", 10s);
  p.next_run = clock_->Now() + 10s;
  p.created_at = clock_->Now();
  DurableJob c = Once("c", 0s);
  c.handler = "gone";
  c.parent = "p";
  c.created_at = clock_->Now();
  ASSERT_TRUE(store_->Put({p, c}).ok());
  {
    auto d = Make();
    EXPECT_EQ(d->Get("c")->state, JobState::kPaused);
    EXPECT_EQ(d->Resume("c").code(), StatusCode::kNotFound);  // still not registered
  }
  auto d = Make(1h, false);
  std::atomic<int> runs{0};
  ASSERT_TRUE(d->RegisterHandler("gone", [&](const RunContext&, std::string_view) {
                 EXPECT_EQ(calls_.Count("p"), 1u);  // after its parent
                 ++runs;
                 return Status();
               }).ok());
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->Resume("c").ok());
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(runs.load(), 0);
  clock_->Advance(10s);
  ASSERT_TRUE(d->engine().WaitIdle());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(d->Get("c")->state, JobState::kCompleted);
}

// A child paused while only in the store (its parent beyond the window) is
// not held by the engine when its parent ends; resumed after that, it runs
// as the parent's success releases it, or ends as the parent did.
TEST_F(DurableTest, Durable_2_9_AChildPausedInTheStoreAndResumedAfterItsParentEndedIsResolved) {
  for (const std::string outcome : {"ok", "fail"}) {
    SCOPED_TRACE(outcome);
    auto d = Make(1s);
    DurableJob p = Once("p-" + outcome, 10s, outcome);
    p.retry.max_attempts = 1;
    ASSERT_TRUE(d->Submit(p).ok());
    DurableJob c = Once("c-" + outcome, 0s);
    c.parent = p.id;
    ASSERT_TRUE(d->Submit(c).ok());
    ASSERT_TRUE(d->Pause(c.id).ok());  // in the store: the engine holds neither
    clock_->Advance(12s);              // the loader loads the parent, which runs
    ASSERT_TRUE(Eventually([&] { return IsTerminal(d->Get(p.id)->state); }));
    ASSERT_TRUE(d->Resume(c.id).ok());
    ASSERT_TRUE(d->engine().WaitIdle());
    const bool ok = outcome == "ok";
    EXPECT_EQ(calls_.Count(c.id), ok ? 1u : 0u);
    EXPECT_EQ(d->Get(c.id)->state, ok ? JobState::kCompleted : JobState::kDead);
  }
}

}  // namespace
}  // namespace ax
