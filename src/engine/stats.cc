#include "ax/stats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace ax {

namespace {

// kPassed[w]: how many bounds a lateness of bit width w is sure to pass, the
// bounds at or below 2^(w-1). Bounds grow by 2x or more, so at most one more
// lies in [2^(w-1), 2^w) and needs a comparison.
constexpr std::array<uint8_t, 65> kPassed = [] {
  std::array<uint8_t, 65> passed{};
  for (int w = 1; w <= 64; ++w) {
    const uint64_t least = uint64_t{1} << (w - 1);
    for (const int64_t bound : LatenessHistogram::kBoundsNs) {
      passed[w] += static_cast<uint64_t>(bound) <= least ? 1 : 0;
    }
  }
  return passed;
}();

// A sum that saturates rather than overflows (jobs due in 1677).
void AddSaturating(int64_t& sum, int64_t ns) {
  if (__builtin_add_overflow(sum, ns, &sum)) sum = ns > 0 ? INT64_MAX : INT64_MIN;
}

}  // namespace

// Each run is recorded as it starts, in W2's storm a million of them (late by
// up to 200 ms): a scan up to the bucket took about 100 instructions a run.
void LatenessHistogram::Record(int64_t lateness_ns) {
  size_t i = 0;  // zero and negative (a clock step) go to the first bucket
  if (lateness_ns > 0) {
    i = kPassed[std::bit_width(static_cast<uint64_t>(lateness_ns))];
    while (i < kBoundsNs.size() && lateness_ns >= kBoundsNs[i]) ++i;
  }
  ++counts[i];
  ++count;
  AddSaturating(sum_ns, lateness_ns);
  max_ns = std::max(max_ns, lateness_ns);
}

void LatenessHistogram::Add(const LatenessHistogram& other) {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
  count += other.count;
  AddSaturating(sum_ns, other.sum_ns);
  max_ns = std::max(max_ns, other.max_ns);
}

int64_t LatenessHistogram::QuantileUpperBoundNs(double q) const {
  if (count == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count)));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= std::max<uint64_t>(rank, 1)) {
      return i < kBoundsNs.size() ? kBoundsNs[i] : max_ns;
    }
  }
  return max_ns;
}

}  // namespace ax
