// The engine's short paths for plain jobs (SubmitOnce, Cancel, the
// workers' fast start and CompletePlain) are taken only without an observer;
// with one, the same calls take the general paths. So one random sequence of
// calls, made on two schedulers that differ only in the observer, must leave
// both in the same state: the same result from every call, the same state,
// next run, counts and reason for every job, the same runs of every callback
// and the same totals. A short path that forgets a case (it once skipped a
// plain parent's children on cancel) shows up as a difference. Every step
// also waits for the engine to be idle, which once failed here (a retained
// job's expiry armed before a slot filed late: FiringTest's WaitIdle test).
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fixture.h"

namespace ax::testing {
namespace {

struct Side {
  explicit Side(bool observed) : clock(std::make_shared<ManualClock>(kStart)) {
    SchedulerOptions o;
    o.clock = clock;
    o.workers = 1;             // runs start in deadline order: both sides run the same
    o.retention = seconds(3);  // so that jobs are forgotten within a run
    if (observed) o.observer = [](const Event&) {};
    s = std::move(Scheduler::Create(o).value());
  }
  std::shared_ptr<ManualClock> clock;
  std::unique_ptr<Scheduler> s;
  std::vector<JobId> ids;  // by submission, as on the other side
  std::vector<std::shared_ptr<std::atomic<int>>> runs;
};

std::string Describe(const Result<JobInfo>& i, int runs) {
  if (!i.ok()) return std::string(StatusCodeName(i.status().code()));
  std::string d = std::string(JobStateName(i->state)) + " runs " + std::to_string(i->runs) +
                  " failures " + std::to_string(i->failures) + " callbacks " +
                  std::to_string(runs) + " reason '" + i->reason + "'";
  if (i->next_run) d += " next " + std::to_string(ToUnixNanos(*i->next_run));
  return d;
}

std::string Describe(const Stats& s) {
  return "pending " + std::to_string(s.pending) + " running " + std::to_string(s.running) +
         " paused " + std::to_string(s.paused) + " fired " + std::to_string(s.fired) +
         " succeeded " + std::to_string(s.succeeded) + " failed " + std::to_string(s.failed) +
         " cancelled " + std::to_string(s.cancelled) + " dead " + std::to_string(s.dead);
}

// One call, made the same way on a side; returns what it said.
std::string Call(Side& x, int op, size_t k, Duration d, uint64_t shape) {
  switch (op) {
    case 0: {  // submit: plain (at an instant, maybe past), a child, periodic,
               // with retries, with a key; some fail
      const bool fail = shape % 4 == 0;
      const size_t kind = (shape / 4) % 7;
      JobOptions o;
      if (kind == 1 && !x.ids.empty()) o.parent = x.ids[(shape / 32) % x.ids.size()].ToString();
      if (kind == 3) o.retry = RetryPolicy::Fixed(2, seconds(1));
      if (kind == 4) {
        o.key = "key-" + std::to_string(shape % 3);
        o.return_existing = (shape / 64) % 2 == 0;
      }
      auto runs = std::make_shared<std::atomic<int>>(0);
      Task t = [runs, fail]() -> Status {
        ++*runs;
        return fail ? Status::Internal("boom") : Status();
      };
      Result<JobId> r = kind == 2   ? x.s->Every(d + seconds(1), std::move(t), o)
                        : kind == 5 ? x.s->At(x.clock->Now() + d - seconds(2), std::move(t), o)
                                    : x.s->After(d, std::move(t), o);
      x.ids.push_back(r.ok() ? *r : JobId());
      x.runs.push_back(runs);
      return std::string(StatusCodeName(r.status().code()));
    }
    case 1:
      return std::string(StatusCodeName(x.s->Cancel(x.ids[k]).code()));
    case 2:
      return std::string(StatusCodeName(x.s->SetDelay(x.ids[k], d).code()));
    case 3:
      return std::string(StatusCodeName(x.s->Pause(x.ids[k]).code()));
    case 4:
      return std::string(StatusCodeName(x.s->Resume(x.ids[k]).code()));
    case 5:  // periods stay whole seconds: one tick per step of the clock
      return std::string(StatusCodeName(x.s->SetPeriod(x.ids[k], d + seconds(1)).code()));
    case 6:
      return std::string(StatusCodeName(x.s->Cancel("key-" + std::to_string(k % 3)).code()));
    default:
      x.clock->Advance(seconds(1));
      return "advanced";
  }
}

TEST(PathsTest, Engine_2_3_PlainPathsAgreeWithTheGeneralOnes) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    std::mt19937_64 rng(seed);
    Side a(true);
    Side b(false);
    std::string trail;  // the calls so far, for the failure message
    for (int step = 0; step < 100; ++step) {
      const int op = a.ids.empty() ? 0 : static_cast<int>(rng() % 10) % 8;
      const size_t k = a.ids.empty() ? 0 : rng() % a.ids.size();
      const Duration d = seconds(static_cast<int64_t>(rng() % 4));
      const uint64_t shape = rng();
      trail += std::to_string(op) + ":" + std::to_string(k) + " ";
      const std::string ra = Call(a, op, k, d, shape);
      const std::string rb = Call(b, op, k, d, shape);
      ASSERT_EQ(ra, rb) << "seed " << seed << ", calls " << trail;
      ASSERT_TRUE(a.s->WaitIdle());
      ASSERT_TRUE(b.s->WaitIdle());
      for (size_t j = 0; j < a.ids.size(); ++j) {
        ASSERT_EQ(Describe(a.s->Info(a.ids[j]), a.runs[j]->load()),
                  Describe(b.s->Info(b.ids[j]), b.runs[j]->load()))
            << "job " << j << ", seed " << seed << ", calls " << trail;
      }
      ASSERT_EQ(Describe(a.s->GetStats()), Describe(b.s->GetStats()))
          << "seed " << seed << ", calls " << trail;
    }
  }
}

}  // namespace
}  // namespace ax::testing
