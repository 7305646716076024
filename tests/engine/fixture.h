// Shared fixture of the engine tests: a scheduler on a ManualClock, with an
// observer that records every event. Time moves only through Advance(),
// which then waits until the engine is idle, so tests are deterministic.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ax/ax.h"

namespace ax::testing {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// 2026-01-01T00:00:00Z
inline constexpr Instant kStart = FromUnixNanos(1'767'225'600'000'000'000);

// A one-shot gate a callback can wait on (no sleeps: it blocks until opened).
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Returns false when not opened within 10 s (a broken engine, not timing).
  bool Wait() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, seconds(10), [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(4); }
  void TearDown() override {
    if (s_) (void)s_->Shutdown(seconds(10));
    s_.reset();
  }

  void Start(int workers, std::function<void(SchedulerOptions&)> tweak = nullptr) {
    if (s_) (void)s_->Shutdown(seconds(10));
    s_.reset();
    clock_ = std::make_shared<ManualClock>(kStart);
    SchedulerOptions o;
    o.clock = clock_;
    o.workers = workers;
    o.observer = [this](const Event& e) {
      std::lock_guard<std::mutex> l(events_mu_);
      events_.push_back(e);
    };
    if (tweak) tweak(o);
    auto s = Scheduler::Create(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    s_ = std::move(*s);
  }

  // Start(2) with the recording observer, or with none: without an observer,
  // plain jobs take the engine's short paths (Cancel, CompletePlain...).
  void StartObserved(bool observed) {
    Start(2, [observed](SchedulerOptions& o) {
      if (!observed) o.observer = nullptr;
    });
  }

  // Moves the clock and waits until everything now due has run.
  void Advance(Duration d) {
    clock_->Advance(d);
    ASSERT_TRUE(s_->WaitIdle()) << "engine did not become idle";
  }
  void Settle() { ASSERT_TRUE(s_->WaitIdle()) << "engine did not become idle"; }

  JobInfo InfoOf(JobRef ref) {
    Result<JobInfo> i = s_->Info(ref);
    EXPECT_TRUE(i.ok()) << i.status().ToString();
    return i.ok() ? *i : JobInfo{};
  }

  std::vector<Event> EventsOf(JobId id, std::optional<EventType> type = std::nullopt) {
    std::lock_guard<std::mutex> l(events_mu_);
    std::vector<Event> out;
    for (const Event& e : events_) {
      if (e.id == id && (!type || e.type == *type)) out.push_back(e);
    }
    return out;
  }
  size_t CountEvents(JobId id, EventType type) { return EventsOf(id, type).size(); }

  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<Scheduler> s_;
  std::mutex events_mu_;
  std::vector<Event> events_;
};

#define AX_ASSERT_OK(expr)                         \
  do {                                             \
    const ::ax::Status ax_st_ = (expr);            \
    ASSERT_TRUE(ax_st_.ok()) << ax_st_.ToString(); \
  } while (false)

inline ::testing::AssertionResult HasCode(const Status& s, StatusCode code) {
  if (s.code() == code && !s.message().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected " << StatusCodeName(code) << ", got " << s.ToString();
}

}  // namespace ax::testing
