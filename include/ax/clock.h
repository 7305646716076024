// File: ax/clock.h
//
// The engine reads time only through an injected `ax::Clock` (SPEC 2.1).
// `SystemClock` is the wall clock (UTC, nanoseconds) and sleeps on a timerfd,
// which fires at the exact instant (no timer slack) and is cut short when the
// wall clock is stepped, so a step is noticed at once. `ManualClock` moves
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
#include <memory>
#include <mutex>
#include <vector>

#include "ax/time.h"

namespace ax {

// A level-triggered wake-up signal (an eventfd). Signal() from any thread
// makes the next, or the current, Clock::WaitUntil with it return.
class Interrupt {
 public:
  Interrupt();
  ~Interrupt();
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  void Signal();
  // Clears a pending signal; returns whether there was one.
  bool Clear();
  // Cheap check for spinning waiters (no system call).
  bool signalled() const { return signalled_.load(std::memory_order_acquire); }
  int fd() const { return fd_; }

 private:
  int fd_;
  std::atomic<bool> signalled_{false};
};

// Clock: thread-safe source of the current instant and of timed waits.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant Now() const = 0;
  // Blocks until Now() >= deadline, `interrupt` is signalled, or the clock is
  // stepped. May return early; callers re-check. Does not clear `interrupt`.
  virtual void WaitUntil(Instant deadline, Interrupt& interrupt) = 0;
  // True for clocks that only move when told to (tests).
  virtual bool IsManual() const { return false; }
};

// The wall clock. Waits use a CLOCK_REALTIME timerfd (exact expiry, cancelled
// on clock steps) and, just before the deadline, a short spin, so wake-ups
// are not late by the kernel's timer slack.
class SystemClock final : public Clock {
 public:
  // The process-wide instance.
  static std::shared_ptr<SystemClock> Get();
  Instant Now() const override;
  void WaitUntil(Instant deadline, Interrupt& interrupt) override;
};

// A clock for tests: starts at `start` and moves only on Advance/Set.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Instant start = FromUnixNanos(0)) : now_(start) {}
  Instant Now() const override;
  void WaitUntil(Instant deadline, Interrupt& interrupt) override;
  bool IsManual() const override { return true; }

  // Moves the clock forward by d (d >= 0) and wakes all waiters.
  void Advance(Duration d);
  // Sets the clock to t (may step backwards, like a wall clock step).
  void Set(Instant t);

 private:
  void WakeAll();

  mutable std::mutex mu_;
  Instant now_;
  std::vector<Interrupt*> waiters_;
};

}  // namespace ax
