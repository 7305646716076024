// Tick arithmetic of the timer wheel (wheel.h): the mapping from int64
// nanoseconds to unsigned wheel ticks, and the level/slot an entry is filed
// in. Pure functions, tested directly.
//
// A tick is 2^kTickShift ns = 16.8 ms. Deadlines are mapped order-preserving
// onto uint64 by flipping the sign bit (INT64_MIN -> 0), then shifted, so every
// int64 deadline has a tick in [0, 2^40). Seven levels of 64 slots span 2^42
// ticks, more than that: no deadline ever needs clamping or an overflow list.
//
// Why 16.8 ms: firing is exact anyway (the NearQueue orders within a tick), so
// the tick only trades the size of a NearQueue load against the number of
// cascades and slot visits. With 2^24 ns an hour-away deadline sits at level 2
// and is moved three times; with 2^20 ns (1 ms) it is moved four times and
// nearly every level-0 slot holds a single entry, which measured ~20% slower
// to fire at 1 M pending.
#pragma once

#include <bit>
#include <cstdint>

namespace ax::internal {

inline constexpr int kTickShift = 24;
inline constexpr int kSlotBits = 6;
inline constexpr int kSlotsPerLevel = 1 << kSlotBits;
inline constexpr int kNumLevels = (64 - kTickShift + kSlotBits - 1) / kSlotBits;
static_assert(kNumLevels * kSlotBits >= 64 - kTickShift, "levels must span every int64 deadline");

inline constexpr uint64_t kSignBit = uint64_t{1} << 63;

// The tick containing `ns`. Monotone: a <= b implies TickOf(a) <= TickOf(b).
constexpr uint64_t TickOf(int64_t ns) {
  return (static_cast<uint64_t>(ns) ^ kSignBit) >> kTickShift;
}

// The first nanosecond of `tick`: the inverse of TickOf on tick boundaries.
constexpr int64_t TickStartNs(uint64_t tick) {
  return static_cast<int64_t>((tick << kTickShift) ^ kSignBit);
}

// The level a deadline `when` (> elapsed) is filed at: the level whose digit
// holds the highest bit in which `when` differs from `elapsed` (tokio's
// level_for). At that level `when`'s slot index is above `elapsed`'s, and at
// all higher levels they agree.
constexpr int LevelFor(uint64_t elapsed, uint64_t when) {
  const uint64_t masked = (elapsed ^ when) | (kSlotsPerLevel - 1);
  return (63 - std::countl_zero(masked)) / kSlotBits;
}

// The slot of `when` at `level`.
constexpr int SlotFor(uint64_t when, int level) {
  return static_cast<int>((when >> (level * kSlotBits)) & (kSlotsPerLevel - 1));
}

// The first tick of `slot` at `level`, within the level-(level+1) slot that
// contains `elapsed`.
constexpr uint64_t SlotStart(uint64_t elapsed, int level, int slot) {
  const int shift = level * kSlotBits;
  const uint64_t window = ~((uint64_t{1} << (shift + kSlotBits)) - 1);
  return (elapsed & window) | (static_cast<uint64_t>(slot) << shift);
}

}  // namespace ax::internal
