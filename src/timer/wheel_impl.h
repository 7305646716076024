// The member functions of BasicTimerWheel that are not inline in wheel.h.
// Included where a wheel type is instantiated: wheel.cc for TimerWheel, and
// an owner's own source file for a wheel over its records
// (`template class BasicTimerWheel<TheirDeadlines>;`).
#pragma once

#include <algorithm>

#include "timer/prefetch.h"
#include "timer/wheel.h"

namespace ax::internal {
namespace wheel_detail {

// Stale NearQueue entries are compacted once they are this many and the
// majority.
inline constexpr size_t kMinStaleToCompact = 64;
// How many entries ahead a level-0 walk prefetches nodes.
inline constexpr uint32_t kPrefetchDistance = 8;
// How many occupied level-0 slots ahead nodes are prefetched.
inline constexpr int kLookaheadSlots = 4;
// Most chunks (510 entries each) of one slot loaded into the NearQueue per
// PopExpired call: about 100 µs of work where a million entries share a slot.
inline constexpr size_t kLoadChunks = 3;
inline constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

}  // namespace wheel_detail

template <class D>
BasicTimerWheel<D>::~BasicTimerWheel() {
  for (SlotList& slot : slots_) SlotList::Release(slot.Take(), pool_);
  for (SlotList& slot : staged_) SlotList::Release(slot.Take(), pool_);
  SlotList::Release(loading_.Take(), pool_);
}

template <class D>
void BasicTimerWheel<D>::DropStaleTop() {
  while (!near_.empty() && IsStale(near_.Top())) {
    near_.Pop();
    --near_stale_;
  }
}

template <class D>
void BasicTimerWheel<D>::MaybeCompactNear() {
  if (near_stale_ < wheel_detail::kMinStaleToCompact || near_stale_ * 2 < near_.size()) return;
  near_.Compact([this](const NearEntry& entry) { return IsStale(entry); });
  near_stale_ = 0;
}

template <class D>
SlotList& BasicTimerWheel<D>::SweepList(int i) {
  if (i < kSlots) return slots_[static_cast<size_t>(i)];
  if (i == kSlots) return loading_;
  return staged_[static_cast<size_t>(i - kSlots - 1)];
}

template <class D>
void BasicTimerWheel<D>::SweepStep() {
  if (sweep_next_ < 0) sweep_next_ = 0;
  while (sweep_next_ < kSweepLists) {
    const int i = sweep_next_++;
    SlotList& list = SweepList(i);
    if (list.empty()) continue;
    FilterList(i);
    if (i < kSlots && list.empty()) {
      const int level = i / kSlotsPerLevel;
      const int slot = i % kSlotsPerLevel;
      // The hand-over needs the staging source's bit (see the end of the pass).
      if (!staging_ || level != staged_level_ || slot != SlotFor(staged_window_, level)) {
        occupied_[level] &= ~(uint64_t{1} << slot);
      }
    }
    return;
  }
  sweep_next_ = -1;
  if (staging_) {
    bool staged = false;
    for (const SlotList& list : staged_) staged = staged || !list.empty();
    staging_ = staged;
    const int slot = SlotFor(staged_window_, staged_level_);
    if (staged) {
      occupied_[staged_level_] |= uint64_t{1} << slot;
    } else if (slots_[staged_level_ * kSlotsPerLevel + slot].empty()) {
      occupied_[staged_level_] &= ~(uint64_t{1} << slot);
    }
  }
}

// An entry is kept if its id is in the wheel with the entry's tag: the state
// alone decides, so a sweep reads no deadline. Only an entry of 16,384 inserts
// ago (the tag wrapped) can pass for live; it is checked against the
// deadline when admitted (AdmitNear), or when its level reads it, and an id
// is admitted once.
template <class D>
void BasicTimerWheel<D>::FilterList(int i) {
  SlotList& list = SweepList(i);
  // Where the list's entries are: a slot of slots_ (filed relative to
  // elapsed_), the loading level-0 slot (tick elapsed_), or a staged slot
  // (relative to the staged window).
  const int where = i < kSlots ? i : i == kSlots ? SlotFor(elapsed_, 0) : i - kSlots - 1;
  const uint64_t ref = i > kSlots ? staged_window_ : elapsed_;
  const int level = where / kSlotsPerLevel;
  const int slot = where % kSlotsPerLevel;
  const bool reads_tick = level * kSlotBits > kTickBits;
  const size_t before = list.size();
  auto keep = [&](const SlotEntry& entry) {
    const NodeState s = states_[entry.id];
    if (State(s) != kWheel || Tag(s) != TagOf(entry)) return false;
    return !reads_tick || EntryTick(entry, ref, level, slot) != kNoTick;
  };
  // The states of a list's ids are spread over the array: keep loads in flight.
  auto prefetch = [this](const SlotEntry& entry) { PrefetchForWrite(&states_[entry.id]); };
  list.Filter(keep, prefetch, pool_);
  wheel_entries_ -= before - list.size();
}

template <class D>
int64_t BasicTimerWheel<D>::NextDeadline() {
  using wheel_detail::kMinNs;
  if (load_pending_) return kMinNs;  // due: finish the load
  DropStaleTop();
  if (!near_.empty()) return near_.Top().deadline;
  for (int level = 0; level < kNumLevels; ++level) {
    if (occupied_[level] == 0) continue;
    const int slot = std::countr_zero(occupied_[level]);
    const int64_t start = TickStartNs(SlotStart(elapsed_, level, slot));
    return start < kMinNs + load_ahead_ ? kMinNs : start - load_ahead_;
  }
  return wheel_detail::kMaxNs;
}

template <class D>
size_t BasicTimerWheel<D>::PopExpired(int64_t now_ns, size_t max, std::vector<uint32_t>& out) {
  using wheel_detail::kMaxNs;
  const uint64_t now_tick = TickOf(now_ns);
  // Slots starting up to load_ahead_ from now are processed already; their
  // entries still pop only when due.
  const uint64_t load_tick = TickOf(now_ns > kMaxNs - load_ahead_ ? kMaxNs : now_ns + load_ahead_);
  size_t popped = 0;
  size_t budget = wheel_detail::kLoadChunks;
  while (popped < max) {
    if (load_pending_ && !Load(budget)) break;  // the rest on the next call
    DropStaleTop();
    if (!near_.empty()) {
      const NearEntry& top = near_.Top();
      // Everything in the wheel is later than anything in near_.
      if (top.deadline > now_ns) break;
      SetState(states_[top.id], kAbsent);
      out.push_back(top.id);
      near_.Pop();
      --size_;
      ++popped;
      continue;
    }
    if (!AdvanceOneSlot(load_tick)) {
      // No slot starts at or before load_tick: every filed tick is later.
      elapsed_ = std::max(elapsed_, now_tick);
      break;
    }
    budget =
        wheel_detail::kLoadChunks;  // per slot: a slot of up to kLoadChunks chunks loads at once
  }
  return popped;
}

// The entry's tick is elapsed_ (the level-0 slot being loaded).
template <class D>
void BasicTimerWheel<D>::AdmitNear(const SlotEntry& entry, uint64_t seq) {
  if (!IsLive(entry, elapsed_)) return;  // garbage or duplicate
  SetState(states_[entry.id], kNear);
  --wheel_live_;
  near_.Append({deadlines_[entry.id], seq, entry.id, TagOf(entry)});
}

template <class D>
uint64_t BasicTimerWheel<D>::EntryTick(const SlotEntry& entry, uint64_t ref, int level, int slot) {
  const int low_bits = level * kSlotBits;  // the bits below the slot's digit
  if (low_bits <= kTickBits) {
    return SlotStart(ref, level, slot) | (entry.tick_lo & ((uint64_t{1} << low_bits) - 1));
  }
  const NodeState s = states_[entry.id];
  if (State(s) != kWheel || Tag(s) != TagOf(entry)) return kNoTick;
  const uint64_t tick = TickOf(deadlines_[entry.id]);
  if ((static_cast<uint32_t>(tick) & kTickMask) != (entry.tick_lo & kTickMask) ||
      SlotFor(tick, level) != slot) {
    return kNoTick;
  }
  return tick;
}

template <class D>
bool BasicTimerWheel<D>::AdvanceOneSlot(uint64_t tick) {
  int level = 0;
  while (level < kNumLevels && occupied_[level] == 0) ++level;
  if (level == kNumLevels) return false;
  const int slot = std::countr_zero(occupied_[level]);
  const uint64_t start = SlotStart(elapsed_, level, slot);
  if (start > tick) return false;

  elapsed_ = start;
  occupied_[level] &= ~(uint64_t{1} << slot);
  SlotList& list = slots_[level * kSlotsPerLevel + slot];
  if (level == 0) {
    AdmitSlot(list);
  } else {
    SlotChunk* chain = list.Take();
    if (staging_) {
      assert(level == staged_level_ && start == staged_window_);
      InstallStaged();
    }
    CascadeChain(chain, level, slot);
    // The window's first tick (its staged entries, then the rest of the
    // cascade's, in insertion order) loads in pieces like any level-0 slot:
    // admitted at once, a million jobs due on the hour held the owner's lock
    // for 143 ms (W2, when the deadline fell on a level-1 slot's first tick).
    assert(SlotFor(elapsed_, 0) == 0);
    if ((occupied_[0] & 1) != 0) {
      occupied_[0] &= ~uint64_t{1};
      AdmitSlot(slots_[0]);
    }
  }
  load_pending_ = true;  // even with nothing admitted: Load prefetches the slots next in turn
  return true;
}

// near_ is reserved for the whole slot at once (a slot of a million entries
// would otherwise grow it by doubling), and so are the entries' sequence
// numbers.
template <class D>
void BasicTimerWheel<D>::AdmitSlot(SlotList& list) {
  assert(loading_.empty());
  near_.Reserve(list.size());
  load_seq_ = next_seq_;
  next_seq_ += list.size();
  std::swap(loading_, list);
}

// Each entry needs its deadline: keep loads in flight.
template <class D>
bool BasicTimerWheel<D>::Load(size_t& budget) {
  using wheel_detail::kPrefetchDistance;
  near_.Prefault(std::min(loading_.size(), budget * SlotChunk::kCapacity));
  for (; !loading_.empty(); --budget) {
    if (budget == 0) return false;
    SlotChunk* chunk = loading_.TakeFront();
    const uint32_t count = chunk->count;
    wheel_entries_ -= count;
    for (uint32_t i = 0; i < std::min(count, kPrefetchDistance); ++i) {
      PrefetchNode(chunk->entries[i].id);
    }
    for (uint32_t i = 0; i < count; ++i) {
      if (i + kPrefetchDistance < count) PrefetchNode(chunk->entries[i + kPrefetchDistance].id);
      AdmitNear(chunk->entries[i], load_seq_++);
    }
    pool_.Put(chunk);
  }
  near_.FinishLoad();
  load_pending_ = false;
  PrefetchUpcoming();
  return true;
}

// Re-files a chain of slot `slot` at `level` (elapsed_ is its first tick)
// relative to elapsed_, the first tick's entries into level-0 slot 0. The
// slot gives each entry's tick, so no deadline is read but at the levels
// whose entries keep too few bits of it (EntryTick).
template <class D>
void BasicTimerWheel<D>::CascadeChain(SlotChunk* chain, int level, int slot) {
  SlotList::Drain(chain, pool_, [&](const SlotChunk& chunk) {
    wheel_entries_ -= chunk.count;
    for (uint32_t i = 0; i < chunk.count; ++i) {
      const SlotEntry& entry = chunk.entries[i];
      const uint64_t tick = EntryTick(entry, elapsed_, level, slot);
      if (tick == kNoTick) continue;  // garbage
      assert(tick >= elapsed_);
      FileInWheel(entry, tick);  // the first tick (elapsed_) to level-0 slot 0
    }
  });
}

// The slot that hands over to the next level-0 window when the current one
// ends: {level, slot}, level >= 1; level 0 when there is no next window.
template <class D>
typename BasicTimerWheel<D>::Source BasicTimerWheel<D>::NextSource() const {
  const uint64_t window = (elapsed_ | (kSlotsPerLevel - 1)) + 1;
  if (window > TickOf(wheel_detail::kMaxNs)) return {0, 0, window};
  const int level = LevelFor(elapsed_, window);
  return {level, SlotFor(window, level), window};
}

template <class D>
bool BasicTimerWheel<D>::CanStage() const {
  const Source source = NextSource();
  return source.level > 0 && !slots_[source.level * kSlotsPerLevel + source.slot].empty();
}

template <class D>
bool BasicTimerWheel<D>::StageAhead() {
  const Source source = NextSource();
  if (source.level == 0) return false;
  SlotList& from = slots_[source.level * kSlotsPerLevel + source.slot];
  SlotChunk* chunk = from.TakeFront();
  if (chunk == nullptr) return false;
  // The source slot keeps its occupied bit until the hand-over, even when
  // staging empties it: that is how AdvanceOneSlot and NextDeadline still
  // see the staged entries.
  assert(!staging_ || (staged_window_ == source.window && staged_level_ == source.level));
  staging_ = true;
  staged_window_ = source.window;
  staged_level_ = source.level;
  for (uint32_t i = 0; i < chunk->count; ++i) {
    const SlotEntry& entry = chunk->entries[i];
    const uint64_t tick = EntryTick(entry, source.window, source.level, source.slot);
    if (tick == kNoTick) {  // garbage
      --wheel_entries_;
      continue;
    }
    const int level = LevelFor(source.window, tick);
    staged_[level * kSlotsPerLevel + SlotFor(tick, level)].Append(entry, pool_);
  }
  pool_.Put(chunk);
  return !from.empty();
}

// At the hand-over (elapsed_ is the staged window's first tick; the levels
// below the source are empty): the staged lists become those levels. The
// rest of the cascade appends to them, the first tick's (slot 0) included.
template <class D>
void BasicTimerWheel<D>::InstallStaged() {
  staging_ = false;
  for (int where = 0; where < staged_level_ * kSlotsPerLevel; ++where) {
    if (staged_[where].empty()) continue;
    std::swap(slots_[where], staged_[where]);
    occupied_[where / kSlotsPerLevel] |= uint64_t{1} << (where % kSlotsPerLevel);
  }
}

// Level-0 slots are small, so prefetching inside one has little to overlap
// with. While the owner pops this slot, bring in the nodes of the next few
// occupied level-0 slots.
template <class D>
void BasicTimerWheel<D>::PrefetchUpcoming() const {
  using wheel_detail::kPrefetchDistance;
  uint64_t upcoming = occupied_[0];
  for (int n = 0; n < wheel_detail::kLookaheadSlots && upcoming != 0; ++n) {
    const SlotList& list = slots_[std::countr_zero(upcoming)];
    const SlotChunk* chunk = list.front();
    upcoming &= upcoming - 1;
    for (uint32_t i = 0; i < std::min(list.front_count(), kPrefetchDistance); ++i) {
      PrefetchNode(chunk->entries[i].id);
    }
  }
}

template <class D>
size_t BasicTimerWheel<D>::MemoryBytes() const {
  return sizeof(*this) + deadlines_.MemoryBytes() + states_.MemoryBytes() + near_.MemoryBytes() +
         pool_.chunks_allocated() * sizeof(SlotChunk);
}

}  // namespace ax::internal
