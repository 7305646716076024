#include "time/tsc_estimate.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace ax::internal {
namespace {

__extension__ using u128 = unsigned __int128;

// Keeps the counter read before the clock read that follows it.
void OrderAfterTicks() {
#if defined(__x86_64__)
  _mm_lfence();
#endif
}

}  // namespace

int64_t TscEstimate::ReadAndAnchor() {
  const uint64_t t1 = usable_ ? src_.ticks() : 0;
  OrderAfterTicks();
  const int64_t real = src_.real_ns();
  if (!usable_) return real;
  // Anchor once a window has passed, or when the clock went back past it.
  const int64_t next = next_anchor_ns_.load(std::memory_order_relaxed);
  if (real < next && real > next - 2 * kWindowNs) return real;
  if (anchoring_.exchange(true, std::memory_order_acquire)) return real;
  if (src_.ticks() - t1 <= kMaxReadTicks) Anchor(t1, real);
  anchoring_.store(false, std::memory_order_release);
  return real;
}

// REQUIRES anchoring_. `real` was read after the counter showed `ticks`.
void TscEstimate::Anchor(uint64_t ticks, int64_t real) {
  const uint64_t old_ticks = anchor_ticks_.load(std::memory_order_relaxed);
  const int64_t old_ns = anchor_ns_.load(std::memory_order_relaxed);
  const uint64_t old_mult = mult_.load(std::memory_order_relaxed);
  // Check what the last anchor predicts for now, unless it is old (no calls
  // for a while: it proves nothing about the next window, nor against it).
  bool checked = false;
  if (old_mult != 0 && ticks >= old_ticks && real - old_ns <= 4 * kWindowNs) {
    const int64_t error = real - (old_ns + Scale(ticks - old_ticks, old_mult));
    checked = error >= -kToleranceNs && error <= kToleranceNs;
    if (!checked) rate_ns_ = 0;  // a step, a new rate: measure again
  }
  uint64_t mult = 0;
  if (rate_ns_ == 0 || ticks <= rate_ticks_ || real <= rate_ns_) {
    rate_ticks_ = ticks;
    rate_ns_ = real;
  } else {
    const int64_t span = real - rate_ns_;
    if (span >= kWindowNs) {
      mult = static_cast<uint64_t>((static_cast<u128>(span) << 32) / (ticks - rate_ticks_));
    }
    if (span >= kRateSpanNs) {
      rate_ticks_ = ticks;
      rate_ns_ = real;
    }
  }
  // The new rate may differ from the checked one by half the tolerance over
  // a window (500 ppm), so that an estimate is behind by less than kMarginNs.
  constexpr uint64_t kDriftDivisor = 2 * kWindowNs / kToleranceNs;
  const uint64_t drift = mult > old_mult ? mult - old_mult : old_mult - mult;
  const bool live = checked && mult != 0 && drift <= old_mult / kDriftDivisor;
  const uint64_t window =
      mult == 0 ? 0 : static_cast<uint64_t>((static_cast<u128>(kWindowNs) << 32) / mult);

  const uint32_t seq = seq_.load(std::memory_order_relaxed);
  seq_.store(seq + 1, std::memory_order_relaxed);
  live_.store(live, std::memory_order_release);
  anchor_ticks_.store(ticks, std::memory_order_release);
  anchor_ns_.store(real, std::memory_order_release);
  mult_.store(mult, std::memory_order_release);
  window_ticks_.store(window, std::memory_order_release);
  seq_.store(seq + 2, std::memory_order_release);
  next_anchor_ns_.store(real + kWindowNs, std::memory_order_relaxed);
}

bool TscIsInvariant() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1U << 8)) != 0;
#else
  return false;
#endif
}

}  // namespace ax::internal
