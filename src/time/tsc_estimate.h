// File: time/tsc_estimate.h
//
// CLOCK_REALTIME estimated from the processor's time-stamp counter, never
// behind it: for deadlines counted from the present (`After`), where a read of
// the system clock is a third of the call. On this kind of VM the vDSO read
// costs 30-45 ns and, serialising (lfence; rdtsc), ends the overlap of one
// call's cache misses with the next's; a plain `rdtsc` does neither.
//
// How it stays exact enough and never early:
// - An anchor pairs a counter value with a system clock read taken after it,
//   so the anchor's instant is not before the real one at that count.
// - The rate (ns per tick, 32.32 fixed point) is measured over the last 1-2 s
//   of anchors, so it follows NTP's slewing of CLOCK_REALTIME.
// - An anchor serves for kWindowNs (1 ms). The next one checks what the old
//   anchor and rate predict against the system clock. Estimates are handed
//   out (live) only while that prediction was within kToleranceNs (1 us; on
//   a PVM guest with kvm-clock, CLOCK_REALTIME itself strays 0.2-0.3 us a
//   millisecond from a straight line of the counter, and the checks here
//   were within 0.46 us) and the new rate is within 500 ppm of the checked
//   one; each adds kMarginNs (3 us). So an estimate falls behind the clock
//   only if the clock's rate changes by about 1,000 ppm at once (NTP's
//   frequency and offset slews together at their limits) or the clock is
//   stepped forward, and only until the next anchor.
// - Any thread's exact read (Exact: SystemClock::Now and its waits) anchors
//   once the window has passed, as an estimate that finds it passed does.
// - A failed check (a step, a new rate, a counter that jumped) sends every
//   call to the system clock until two windows have measured and checked a
//   rate again. Any other doubt (a counter behind the anchor, a stale anchor,
//   a read interrupted between the counter and the clock, a second thread
//   anchoring) returns the system clock read itself.
// An estimate is thus about kMarginNs + 1.5 us later than the real instant at
// most; NowApprox, the same estimate without the margin, lies between
// kMarginNs before and 1.5 us after it. After a forward step of the wall
// clock, calls within the window count from before the step, as if made just
// before it. Counters of different cores are assumed in step to well under
// kMarginNs, as the kernel checks before it calls the counter reliable
// (`tsc_reliable`).
#pragma once

#include <atomic>
#include <cstdint>

namespace ax::internal {

// The two readings, injected by tests.
struct TscSources {
  uint64_t (*ticks)();   // the time-stamp counter
  int64_t (*real_ns)();  // CLOCK_REALTIME, ns since the epoch
};

class TscEstimate {
 public:
  static constexpr int64_t kMarginNs = 3'000;
  static constexpr int64_t kToleranceNs = 1'000;
  static constexpr int64_t kWindowNs = 1'000'000;
  static constexpr int64_t kRateSpanNs = 1'000'000'000;
  // A clock read that took longer than this, counted from the counter read
  // before it (an interrupt, a preemption), anchors nothing: 0.25-0.5 us at
  // 2-4 GHz, where a vDSO read takes 30-100 ns.
  static constexpr uint64_t kMaxReadTicks = uint64_t{1} << 10;

  // `usable` false (no invariant counter): every call reads the clock.
  TscEstimate(TscSources sources, bool usable) : src_(sources), usable_(usable) {}
  TscEstimate(const TscEstimate&) = delete;
  TscEstimate& operator=(const TscEstimate&) = delete;

  // The real instant, or up to about kMarginNs + 1.5 us later. Thread-safe.
  int64_t NowOrLater() { return Read(kMarginNs); }
  // The real instant to within about kMarginNs either way (the estimate
  // without the margin): for measurements, not deadlines. Thread-safe.
  int64_t NowApprox() { return Read(0); }
  // The system clock read itself, anchoring the estimate when its window has
  // passed: threads that read the clock anyway (SystemClock::Now, a waiting
  // worker) keep the estimate fresh for those that only estimate, which then
  // find an anchor less than a window old and read no clock. Thread-safe.
  int64_t Exact() { return ReadAndAnchor(); }

  // Whether estimates are being handed out (tests).
  bool live() const { return live_.load(std::memory_order_relaxed); }

 private:
  static constexpr int64_t kNone = INT64_MIN;
  // ns for `ticks` at `mult` (ns per tick << 32).
  static int64_t Scale(uint64_t ticks, uint64_t mult) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<int64_t>((static_cast<u128>(ticks) * mult) >> 32);
  }
  int64_t Read(int64_t margin) {
    if (usable_) {
      if (const int64_t ns = Estimate(); ns != kNone) return ns + margin;
    }
    return ReadAndAnchor();
  }
  inline int64_t Estimate() const;  // without the margin; kNone: read the clock
  int64_t ReadAndAnchor();
  void Anchor(uint64_t ticks, int64_t real);

  const TscSources src_;
  const bool usable_;
  // Published under the sequence count (odd while the writer changes them).
  std::atomic<uint32_t> seq_{0};
  std::atomic<bool> live_{false};
  std::atomic<uint64_t> anchor_ticks_{0};
  std::atomic<int64_t> anchor_ns_{0};
  std::atomic<uint64_t> mult_{0};  // ns per tick << 32
  std::atomic<uint64_t> window_ticks_{0};
  // The writer's: one thread at a time holds `anchoring_`.
  std::atomic<bool> anchoring_{false};
  std::atomic<int64_t> next_anchor_ns_{0};
  uint64_t rate_ticks_ = 0;
  int64_t rate_ns_ = 0;
};

// Whether this processor's counter runs at a constant rate through sleep
// states (CPUID "invariant TSC"); false off x86-64.
bool TscIsInvariant();
// The counter itself (0 off x86-64).
inline uint64_t ReadTsc() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return 0;
#endif
}

// The estimate SystemClock's NowOrLater and NowApprox read: an engine on the
// system clock calls it directly, inlined (src/time/clock.cc).
TscEstimate& SystemCounterEstimate();

// Inline: it is most of SystemClock::NowOrLater, which `After` calls each time.
int64_t TscEstimate::Estimate() const {
  // A sequence lock without fences (which TSan does not model): the data is
  // stored with release and loaded with acquire, so a reader that sees any
  // of a writer's stores also sees its odd count.
  const uint32_t seq = seq_.load(std::memory_order_acquire);
  const bool live = live_.load(std::memory_order_acquire);
  const uint64_t anchor_ticks = anchor_ticks_.load(std::memory_order_acquire);
  const int64_t anchor_ns = anchor_ns_.load(std::memory_order_acquire);
  const uint64_t mult = mult_.load(std::memory_order_acquire);
  const uint64_t window = window_ticks_.load(std::memory_order_acquire);
  if (!live || (seq & 1) != 0 || seq_.load(std::memory_order_relaxed) != seq) return kNone;
  // A counter behind the anchor (another core's) wraps past the window. The
  // real counter is read in place, not through the pointer.
  const uint64_t dt = (src_.ticks == &ReadTsc ? ReadTsc() : src_.ticks()) - anchor_ticks;
  if (dt >= window) return kNone;
  return anchor_ns + Scale(dt, mult);
}

}  // namespace ax::internal
