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
  uint64_t one = 1;
  // The counter only saturates after 2^64-2 signals; EAGAIN is harmless.
  [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof one);
}

bool Interrupt::Clear() {
  uint64_t v = 0;
  return read(fd_, &v, sizeof v) == static_cast<ssize_t>(sizeof v);
}

std::shared_ptr<SystemClock> SystemClock::Get() {
  static auto clock = std::make_shared<SystemClock>();
  return clock;
}

Instant SystemClock::Now() const { return FromUnixNanos(RealtimeNs()); }

void SystemClock::WaitUntil(Instant deadline, Interrupt& interrupt) {
  const int64_t dl = ToUnixNanos(deadline);
  int64_t now = RealtimeNs();
  if (dl <= now) return;
  pollfd fds[2] = {{interrupt.fd(), POLLIN, 0}, {ThreadTimerFd(), POLLIN, 0}};
  if (dl - now > kSpinNs) {
    const bool forever = deadline == kInstantMax;
    if (!forever) {
      const int64_t wake = dl - kSpinNs;
      itimerspec its{};
      its.it_value.tv_sec = wake / 1'000'000'000;
      its.it_value.tv_nsec = wake % 1'000'000'000;
      timerfd_settime(fds[1].fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, nullptr);
    }
    int n = poll(fds, forever ? 1 : 2, -1);
    if (!forever) {
      itimerspec off{};
      timerfd_settime(fds[1].fd, 0, &off, nullptr);
      uint64_t expirations = 0;
      [[maybe_unused]] ssize_t r = read(fds[1].fd, &expirations, sizeof expirations);
    }
    if (n != 1 || (fds[0].revents & POLLIN) != 0 || (fds[1].revents & POLLIN) == 0) return;
  }
  // Spin the last stretch, still answering the interrupt.
  pollfd intr = {interrupt.fd(), POLLIN, 0};
  while (RealtimeNs() < dl) {
    if (poll(&intr, 1, 0) == 1) return;
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
