#include "ax/clock.h"

#include <cerrno>
#include <ctime>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace ax {
namespace {

// Deadlines closer than this are awaited by spinning on the clock: a sleeping
// thread wakes tens of microseconds late (research/timers.md §10).
constexpr int64_t kSpinNs = 20'000;

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// One timerfd per waiting thread, armed on CLOCK_REALTIME with
// TFD_TIMER_CANCEL_ON_SET: it fires at the exact instant (timerfd is not
// subject to timer slack) and returns ECANCELED when the wall clock is set.
int ThreadTimerFd() {
  thread_local int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  return fd;
}

}  // namespace

Interrupt::Interrupt() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
Interrupt::~Interrupt() { close(fd_); }

void Interrupt::Signal() {
  // Only the first signal since the last Clear needs the system call.
  if (signalled_.exchange(true, std::memory_order_acq_rel)) return;
  uint64_t one = 1;
  // The counter only saturates after 2^64-2 signals; EAGAIN is harmless.
  [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof one);
}

bool Interrupt::Clear() {
  // Flag first, then the eventfd: a Signal() racing with this leaves at worst
  // one spurious wake-up, never a lost one.
  const bool was = signalled_.exchange(false, std::memory_order_acq_rel);
  uint64_t v = 0;
  return read(fd_, &v, sizeof v) == static_cast<ssize_t>(sizeof v) || was;
}

std::shared_ptr<SystemClock> SystemClock::Get() {
  static auto clock = std::make_shared<SystemClock>();
  return clock;
}

Instant SystemClock::Now() const { return FromUnixNanos(RealtimeNs()); }

void SystemClock::WaitUntil(Instant deadline, Interrupt& interrupt) {
  const int64_t dl = ToUnixNanos(deadline);
  if (dl <= RealtimeNs() || interrupt.signalled()) return;
  if (dl - RealtimeNs() > kSpinNs) {
    // The thread's timerfd stays armed between waits; it is re-armed only
    // when the wake-up instant changes.
    thread_local int64_t armed_at = 0;
    const int tfd = ThreadTimerFd();
    const bool forever = deadline == kInstantMax;
    const int64_t wake = dl - kSpinNs;
    if (!forever && wake != armed_at) {
      itimerspec its{};
      its.it_value.tv_sec = wake / 1'000'000'000;
      its.it_value.tv_nsec = wake % 1'000'000'000;
      timerfd_settime(tfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, nullptr);
      armed_at = wake;
    }
    pollfd fds[2] = {{interrupt.fd(), POLLIN, 0}, {tfd, POLLIN, 0}};
    const int n = poll(fds, forever ? 1 : 2, -1);
    if (!forever && (fds[1].revents & POLLIN) != 0) {
      uint64_t expirations = 0;
      // ECANCELED here means the wall clock was set: re-arm next time.
      if (read(tfd, &expirations, sizeof expirations) < 0) armed_at = 0;
      if (RealtimeNs() < wake) armed_at = 0;  // fired for an older deadline
    }
    if (n != 1 || (fds[0].revents & POLLIN) != 0 || (fds[1].revents & POLLIN) == 0) return;
  }
  // Spin the last stretch on the vDSO clock, still answering the interrupt.
  while (RealtimeNs() < dl) {
    if (interrupt.signalled()) return;
    __builtin_ia32_pause();
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
    waiters_.push_back(&interrupt);
  }
  pollfd fd = {interrupt.fd(), POLLIN, 0};
  while (poll(&fd, 1, -1) < 0 && errno == EINTR) {
  }
  std::lock_guard<std::mutex> l(mu_);
  std::erase(waiters_, &interrupt);
}

void ManualClock::Advance(Duration d) {
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ += d;
  }
  WakeAll();
}

void ManualClock::Set(Instant t) {
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ = t;
  }
  WakeAll();
}

void ManualClock::WakeAll() {
  std::lock_guard<std::mutex> l(mu_);
  for (Interrupt* i : waiters_) i->Signal();
}

}  // namespace ax
