// How early a thread asks to be woken for a deadline, learnt from how late
// its timed sleeps have woken (SystemClock::WaitUntil).
//
// A futex's timed wake-up comes after the instant asked for by the kernel's
// and the hypervisor's wake-up path: on the VMs of docs/performance-history.md,
// 22-33 us in 98 % of a lone thread's sleeps on one host, 6 us at the median
// on another. The margin tracks the lowest tenth of that lateness: the thread
// asks to wake that much before the deadline, and spins (no system call) the
// rest of the way in the tenth of wake-ups that come sooner. The other nine
// tenths come after the deadline as before, by that much less. Nothing here
// runs early: the spin ends at the deadline.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ax::internal {

class WakeMargin {
 public:
  // A bound on the margin, and so on a wake-up's spin.
  static constexpr int64_t kMaxNs = 100'000;
  // Up a step after a wake-up at least the margin late, down nine after one
  // sooner: it settles where a tenth of the wake-ups are sooner.
  static constexpr int64_t kStepNs = 100;
  static constexpr int64_t kStepsDown = 9;

  int64_t ns() const { return margin_ns_; }

  // `late_ns`: how long after the instant it asked for a timed sleep woke.
  void Observe(int64_t late_ns) {
    margin_ns_ = late_ns >= margin_ns_ ? std::min(kMaxNs, margin_ns_ + kStepNs)
                                       : std::max<int64_t>(0, margin_ns_ - kStepsDown * kStepNs);
  }

 private:
  int64_t margin_ns_ = 0;
};

}  // namespace ax::internal
