// File: ax/clock.h
//
// The engine reads time only through an injected `ax::Clock` (SPEC 2.1).
// `SystemClock` is the wall clock (UTC, nanoseconds) and sleeps on a futex
// with an absolute CLOCK_REALTIME timeout and no timer slack, so it wakes at
// the instant and follows wall-clock steps at once. `ManualClock` moves
// only when a test advances it; advancing wakes every waiter, so the engine
// fires exactly the jobs that became due, with no sleeps.
//
// Example:
//   auto clock = std::make_shared<ax::ManualClock>(ax::FromUnixNanos(0));
//   ax::SchedulerOptions o;
//   o.clock = clock;
//   auto s = ax::Scheduler::Create(o).value();
//   (void)s->After(std::chrono::seconds(5), [] { std::puts("fired"); });
//   clock->Advance(std::chrono::seconds(5));
//   s->WaitIdle();  // the job has run
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ax/time.h"

namespace ax {

// A level-triggered wake-up signal (a futex word). Signal() from any thread
// makes the next, or the current, Clock::WaitUntil with it return. Neither
// side makes a system call unless the other is asleep.
class Interrupt {
 public:
  Interrupt() = default;
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  void Signal();
  // Clears a pending signal; returns whether there was one.
  bool Clear() { return word_.exchange(0, std::memory_order_acq_rel) != 0; }
  // Cheap check for spinning waiters (no system call).
  bool signalled() const { return word_.load(std::memory_order_acquire) != 0; }
  // Sleeps until signalled or until the CLOCK_REALTIME instant `deadline_ns`
  // (INT64_MAX: no deadline). May return early.
  void Wait(int64_t deadline_ns);

 private:
  std::atomic<uint32_t> word_{0};  // 1: signalled
  std::atomic<uint32_t> sleepers_{0};
};

// Clock: thread-safe source of the current instant and of timed waits.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant Now() const = 0;
  // Now() to within a few milliseconds either way, for bookkeeping that
  // tolerates that (when a finished job's retention starts). Cheaper than
  // Now() where the exact read costs (the system clock's serialising
  // time-stamp read). Never used for deadlines. Default: Now().
  virtual Instant NowCoarse() const { return Now(); }
  // Now(), or up to a few microseconds later; never earlier. For deadlines
  // counted from the present (`After`, `SetDelay`): the job starts that much
  // later at most, never before its delay. Cheaper than Now() where the exact read
  // costs. Default: Now().
  virtual Instant NowOrLater() const { return Now(); }
  // Now() to within a few microseconds either way, for measurements that
  // tolerate that (when a run started, for the lateness histogram). Cheaper
  // than Now() where the exact read costs. Never used for deadlines.
  // Default: Now().
  virtual Instant NowApprox() const { return Now(); }
  // Blocks until Now() >= deadline, `interrupt` is signalled, or the clock is
  // stepped. May return early; callers re-check. Does not clear `interrupt`.
  virtual void WaitUntil(Instant deadline, Interrupt& interrupt) = 0;
  // True for clocks that only move when told to (tests).
  virtual bool IsManual() const { return false; }
};

// The wall clock. A wait sleeps on the interrupt's futex (absolute
// CLOCK_REALTIME, timer slack set to 1 ns for the waiting thread) until a
// little before the deadline, by as much as the thread's wake-ups have been
// late (at most 100 us), and spins the rest of the way when it wakes sooner:
// it never returns before the deadline, and is late by the kernel's wake-up
// latency less that margin.
class SystemClock final : public Clock {
 public:
  // The process-wide instance.
  static std::shared_ptr<SystemClock> Get();
  Instant Now() const override;
  // CLOCK_REALTIME_COARSE: the time at the last kernel tick.
  Instant NowCoarse() const override;
  // The processor's time-stamp counter scaled to CLOCK_REALTIME and checked
  // against it every millisecond, 3-4.5 us ahead (src/time/tsc_estimate.h);
  // a CLOCK_REALTIME read where the counter is not invariant.
  Instant NowOrLater() const override;
  // The same counter estimate without its margin: within 3 us before and
  // 1.5 us after CLOCK_REALTIME.
  Instant NowApprox() const override;
  void WaitUntil(Instant deadline, Interrupt& interrupt) override;
};

// A clock for tests: starts at `start` and moves only on Advance/Set.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Instant start = FromUnixNanos(0)) : now_(start) {}
  Instant Now() const override;
  void WaitUntil(Instant deadline, Interrupt& interrupt) override;
  bool IsManual() const override { return true; }

  // Moves the clock forward by d (d >= 0) and wakes the waiters whose
  // deadlines it reaches, as a real clock would: no other.
  void Advance(Duration d);
  // Sets the clock to t (may step backwards, like a wall clock step).
  void Set(Instant t);
  // Threads inside WaitUntil now.
  size_t Waiters() const;

 private:
  struct Waiter {
    Instant deadline;
    Interrupt* interrupt;
  };
  void WakeDue();

  mutable std::mutex mu_;
  Instant now_;
  std::vector<Waiter> waiters_;
};

}  // namespace ax
