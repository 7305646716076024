// Concurrency stress (run under the tsan preset): 8 threads for ~2 s submit,
// cancel, pause, resume and change jobs against a running scheduler on the
// system clock. Afterwards every job's observed runs and final state must
// agree with the operations that succeeded: nothing lost, nothing run twice,
// nothing started after its cancel returned.
#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include <gtest/gtest.h>

#include "ax/ax.h"

namespace ax {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kThreads = 8;
constexpr int kMaxJobsPerThread = 20'000;

struct JobRecord {
  JobId id;
  bool periodic = false;
  bool cancel_ok = false;
  std::atomic<int> runs{0};
};

TEST(EngineStress, Engine_2_8_ConcurrentCallsAgreeWithObservedRuns) {
  std::mutex events_mu;
  std::vector<Event> events;
  SchedulerOptions o;
  o.workers = 4;
  o.observer = [&](const Event& e) {
    std::lock_guard<std::mutex> l(events_mu);
    events.push_back(e);
  };
  auto s = std::move(*Scheduler::Create(o));
  std::vector<std::vector<JobRecord>> jobs(kThreads);
  for (auto& v : jobs) v = std::vector<JobRecord>(kMaxJobsPerThread);
  std::vector<int> counts(kThreads, 0);
  std::atomic<uint64_t> ok_ops{0};
  const auto end = std::chrono::steady_clock::now() + seconds(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(42 + t);
      auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
      auto& mine = jobs[t];
      int& n = counts[t];
      while (std::chrono::steady_clock::now() < end && n < kMaxJobsPerThread) {
        const int op = pick(100);
        if (op < 30 || n == 0) {
          JobRecord& r = mine[n];
          Result<JobId> id = s->After(milliseconds(pick(20)), [&r] { r.runs.fetch_add(1); });
          ASSERT_TRUE(id.ok()) << id.status().ToString();
          r.id = *id;
          ++n;
          continue;
        }
        if (op < 38) {
          JobRecord& r = mine[n];
          r.periodic = true;
          Result<JobId> id = s->Every(milliseconds(2 + pick(8)), [&r] { r.runs.fetch_add(1); });
          ASSERT_TRUE(id.ok());
          r.id = *id;
          ++n;
          continue;
        }
        JobRecord& r = mine[pick(n)];
        Status st;
        if (op < 55) {
          st = s->Cancel(r.id);
          if (st.ok()) r.cancel_ok = true;
        } else if (op < 67) {
          st = s->Pause(r.id);
        } else if (op < 79) {
          st = s->Resume(r.id);
        } else if (op < 92) {
          st = s->SetDelay(r.id, milliseconds(pick(20)));
        } else {
          st = s->SetPeriod(r.id, milliseconds(1 + pick(10)));
        }
        // Every refusal must be one the state table allows.
        if (!st.ok()) {
          ASSERT_TRUE(st.code() == StatusCode::kInvalidState || st.code() == StatusCode::kNotFound)
              << st.ToString();
        }
        ok_ops += st.ok();
      }
    });
  }
  for (auto& th : threads) th.join();
  // Stop the periodic jobs and let the one-shots that are due drain.
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < counts[t]; ++i) {
      JobRecord& r = jobs[t][i];
      if (r.periodic && s->Cancel(r.id).ok()) r.cancel_ok = true;
    }
  }
  const auto drain_until = std::chrono::steady_clock::now() + seconds(20);
  for (bool drained = false; !drained && std::chrono::steady_clock::now() < drain_until;) {
    drained = s->WaitIdle(seconds(1));
    for (int t = 0; drained && t < kThreads; ++t) {
      for (int i = 0; drained && i < counts[t]; ++i) {
        Result<JobInfo> info = s->Info(jobs[t][i].id);
        drained =
            info.ok() && info->state != JobState::kWaiting && info->state != JobState::kRunning;
      }
    }
  }
  ASSERT_TRUE(s->Shutdown(seconds(10)).clean());
  std::unordered_map<JobId, JobRecord*> by_id;
  size_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < counts[t]; ++i) by_id[jobs[t][i].id] = &jobs[t][i];
    total += counts[t];
  }
  std::unordered_map<JobId, int> started;
  std::unordered_map<JobId, bool> cancelled_seen;
  {
    std::lock_guard<std::mutex> l(events_mu);
    s.reset();  // delivers every event, joins every thread
    for (const Event& e : events) {
      if (e.type == EventType::kStarted) {
        ++started[e.id];
        EXPECT_FALSE(cancelled_seen[e.id]) << e.id.ToString() << " started after its cancel";
      }
      if (e.type == EventType::kCancelled) cancelled_seen[e.id] = true;
    }
  }
  size_t completed = 0;
  for (auto& [id, r] : by_id) {
    EXPECT_EQ(r->runs.load(), started[id]) << id.ToString() << ": runs lost or doubled";
    EXPECT_EQ(r->cancel_ok, cancelled_seen[id]) << id.ToString();
    if (!r->periodic && !r->cancel_ok && started[id] > 0) ++completed;
  }
  EXPECT_GT(total, 1000u);
  EXPECT_GT(completed, 100u);
  EXPECT_GT(ok_ops.load(), 1000u);
}

}  // namespace
}  // namespace ax
