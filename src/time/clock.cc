#include "ax/clock.h"

#include <cerrno>
#include <climits>
#include <ctime>

#include <linux/futex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "time/cpu_relax.h"
#include "time/short_slice.h"
#include "time/tsc_estimate.h"
#include "time/wake_margin.h"

namespace ax {
namespace {

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// RealtimeNs, and the counter estimate anchored on it once its window passed.
int64_t Exact() { return internal::SystemCounterEstimate().Exact(); }

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* abs) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, abs, nullptr,
                 FUTEX_BITSET_MATCH_ANY);
}

}  // namespace

// SystemClock's NowOrLater and NowApprox: one estimate, anchored by them and
// by its exact reads.
internal::TscEstimate& internal::SystemCounterEstimate() {
  static TscEstimate estimate({&ReadTsc, &RealtimeNs}, TscIsInvariant());
  return estimate;
}

void Interrupt::Signal() {
  // Only the first signal since the last Clear, and only with a sleeper,
  // needs the system call. Both sides use sequentially consistent atomics
  // (word here, sleepers in Wait), so one of them sees the other.
  if (word_.exchange(1, std::memory_order_seq_cst) != 0) return;
  if (sleepers_.load(std::memory_order_seq_cst) != 0) {
    Futex(&word_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
  }
}

void Interrupt::Wait(int64_t deadline_ns) {
  // Futex timeouts get the thread's timer slack (50 us by default).
  thread_local bool slack_set = prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
  (void)slack_set;
  timespec ts{deadline_ns / 1'000'000'000, deadline_ns % 1'000'000'000};
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  if (word_.load(std::memory_order_seq_cst) == 0) {
    // An absolute CLOCK_REALTIME timeout follows wall-clock steps at once.
    Futex(&word_, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0,
          deadline_ns == INT64_MAX ? nullptr : &ts);
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

std::shared_ptr<SystemClock> SystemClock::Get() {
  static auto clock = std::make_shared<SystemClock>();
  return clock;
}

// An exact read that also anchors the estimate once its window has passed:
// the scheduler thread and the waiting workers read the clock often, and a
// caller of SetDelay after a millisecond's pause then finds the estimate
// fresh instead of reading the clock and anchoring it in its call.
Instant SystemClock::Now() const { return FromUnixNanos(Exact()); }

Instant SystemClock::NowOrLater() const {
  return FromUnixNanos(internal::SystemCounterEstimate().NowOrLater());
}

Instant SystemClock::NowApprox() const {
  return FromUnixNanos(internal::SystemCounterEstimate().NowApprox());
}

// No time-stamp counter read: the kernel's copy of the time at its last tick.
Instant SystemClock::NowCoarse() const {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return FromUnixNanos(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

// The thread asks to wake its WakeMargin before the deadline, about as much
// as its timed sleeps have overshot, and spins to the deadline only when the
// wake-up came sooner (a tenth of them): lateness falls by the margin at
// the price of a short spin now and then; with less than the margin left it
// only spins (docs/performance-history.md). A thread with a short slice yields its
// CPU as it spins, to threads woken there for deadlines of their own
// (time/short_slice.h).
void SystemClock::WaitUntil(Instant deadline, Interrupt& interrupt) {
  thread_local internal::WakeMargin margin;
  if (deadline == kInstantMax) {
    if (!interrupt.signalled()) interrupt.Wait(INT64_MAX);
    return;
  }
  const int64_t dl = ToUnixNanos(deadline);
  const int64_t wake = dl < INT64_MIN + internal::WakeMargin::kMaxNs ? dl : dl - margin.ns();
  const bool yields = internal::SpinsYield();
  int64_t now = Exact();
  while (!interrupt.signalled() && now < dl) {
    if (now < wake) {  // (again, if the clock was stepped back)
      interrupt.Wait(wake);
      now = Exact();
      if (now >= wake && !interrupt.signalled()) margin.Observe(now - wake);
    } else {
      if (yields) {
        sched_yield();
      } else {
        internal::CpuRelax();
      }
      now = Exact();
    }
  }
}

Instant ManualClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

void ManualClock::WaitUntil(Instant deadline, Interrupt& interrupt) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (now_ >= deadline) return;
    waiters_.push_back({deadline, &interrupt});
  }
  interrupt.Wait(INT64_MAX);
  std::lock_guard<std::mutex> l(mu_);
  std::erase_if(waiters_, [&](const Waiter& w) { return w.interrupt == &interrupt; });
}

void ManualClock::Advance(Duration d) {
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ += d;
  }
  WakeDue();
}

void ManualClock::Set(Instant t) {
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ = t;
  }
  WakeDue();
}

size_t ManualClock::Waiters() const {
  std::lock_guard<std::mutex> l(mu_);
  return waiters_.size();
}

void ManualClock::WakeDue() {
  std::lock_guard<std::mutex> l(mu_);
  for (const Waiter& w : waiters_) {
    if (w.deadline <= now_) w.interrupt->Signal();
  }
}

}  // namespace ax
