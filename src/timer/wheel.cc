#include "timer/wheel.h"

#include <algorithm>

namespace ax::internal {
namespace {

// Stale NearQueue entries are compacted once they are this many and the
// majority.
constexpr size_t kMinStaleToCompact = 64;
// How many entries ahead a level-0 walk prefetches nodes.
constexpr uint32_t kPrefetchDistance = 8;
// How many occupied level-0 slots ahead nodes are prefetched.
constexpr int kLookaheadSlots = 4;
// Most chunks (510 entries each) of one slot loaded into the NearQueue per
// PopExpired call: about 100 µs of work where a million entries share a slot.
constexpr size_t kLoadChunks = 3;
constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

}  // namespace

TimerWheel::TimerWheel(int64_t now_ns, int64_t load_ahead_ns)
    : load_ahead_(load_ahead_ns), elapsed_(TickOf(now_ns)) {
  assert(load_ahead_ns >= 0);
}

TimerWheel::~TimerWheel() {
  for (SlotList& slot : slots_) SlotList::Release(slot.Take(), pool_);
  for (SlotList& slot : staged_) SlotList::Release(slot.Take(), pool_);
  SlotList::Release(loading_.Take(), pool_);
}

void TimerWheel::DropStaleTop() {
  while (!near_.empty() && IsStale(near_.Top())) {
    near_.Pop();
    --near_stale_;
  }
}

void TimerWheel::MaybeCompactNear() {
  if (near_stale_ < kMinStaleToCompact || near_stale_ * 2 < near_.size()) return;
  near_.Compact([this](const NearEntry& entry) { return IsStale(entry); });
  near_stale_ = 0;
}

SlotList& TimerWheel::SweepList(int i) {
  if (i < kSlots) return slots_[static_cast<size_t>(i)];
  if (i == kSlots) return loading_;
  return staged_[static_cast<size_t>(i - kSlots - 1)];
}

void TimerWheel::SweepStep() {
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

// An entry is kept if its node is in the wheel (not kept already) with a
// deadline in the entry's tick; keeping it marks the node kKept, so a
// duplicate met later in the list is dropped. The marks are cleared
// afterwards.
void TimerWheel::FilterList(int i) {
  SlotList& list = SweepList(i);
  // Where the list's entries are: a slot of slots_ (filed relative to
  // elapsed_), the loading level-0 slot (tick elapsed_), or a staged slot
  // (relative to the staged window).
  const int where = i < kSlots ? i : i == kSlots ? SlotFor(elapsed_, 0) : i - kSlots - 1;
  const uint64_t ref = i > kSlots ? staged_window_ : elapsed_;
  const int level = where / kSlotsPerLevel;
  const int slot = where % kSlotsPerLevel;
  const size_t before = list.size();
  auto keep = [&](const SlotEntry& entry) {
    const uint64_t tick = EntryTick(entry, ref, level, slot);
    Node& node = nodes_[entry.id];
    if (tick == kNoTick || State(node) != kWheel || TickOf(node.deadline) != tick) return false;
    SetState(node, kKept);
    return true;
  };
  auto prefetch = [this](const SlotEntry& entry) { PrefetchNode(entry.id); };
  list.Filter(keep, prefetch, pool_);
  for (const SlotChunk* chunk = list.empty() ? nullptr : list.front(); chunk != nullptr;
       chunk = chunk->next) {
    for (uint32_t i = 0; i < chunk->count; ++i) SetState(nodes_[chunk->entries[i].id], kWheel);
  }
  wheel_entries_ -= before - list.size();
}

int64_t TimerWheel::NextDeadline() {
  if (load_pending_) return kMinNs;  // due: finish the load
  DropStaleTop();
  if (!near_.empty()) return near_.Top().deadline;
  for (int level = 0; level < kNumLevels; ++level) {
    if (occupied_[level] == 0) continue;
    const int slot = std::countr_zero(occupied_[level]);
    const int64_t start = TickStartNs(SlotStart(elapsed_, level, slot));
    return start < kMinNs + load_ahead_ ? kMinNs : start - load_ahead_;
  }
  return kMaxNs;
}

size_t TimerWheel::PopExpired(int64_t now_ns, size_t max, std::vector<uint32_t>& out) {
  const uint64_t now_tick = TickOf(now_ns);
  // Slots starting up to load_ahead_ from now are processed already; their
  // entries still pop only when due.
  const uint64_t load_tick = TickOf(now_ns > kMaxNs - load_ahead_ ? kMaxNs : now_ns + load_ahead_);
  size_t popped = 0;
  size_t budget = kLoadChunks;
  while (popped < max) {
    if (load_pending_ && !Load(budget)) break;  // the rest on the next call
    DropStaleTop();
    if (!near_.empty()) {
      const NearEntry& top = near_.Top();
      // Everything in the wheel is later than anything in near_.
      if (top.deadline > now_ns) break;
      SetState(nodes_[top.id], kAbsent);
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
    budget = kLoadChunks;  // per slot: a slot of up to kLoadChunks chunks loads at once
  }
  return popped;
}

// The entry's tick is elapsed_ (a level-0 slot, or a cascade's first tick):
// its node is live here if it is in the wheel with a deadline in this tick.
inline void TimerWheel::AdmitNear(const SlotEntry& entry) {
  Node& node = nodes_[entry.id];
  if (!InWheel(node) || TickOf(node.deadline) != elapsed_) return;  // garbage or duplicate
  SetState(node, kNear);
  --wheel_live_;
  near_.Append({node.deadline, Seq(node), entry.id});
}

uint64_t TimerWheel::EntryTick(const SlotEntry& entry, uint64_t ref, int level, int slot) const {
  const int low_bits = level * kSlotBits;  // the bits below the slot's digit
  if (low_bits <= 32) {
    return SlotStart(ref, level, slot) | (entry.tick_lo & ((uint64_t{1} << low_bits) - 1));
  }
  const Node& node = nodes_[entry.id];
  const uint64_t tick = TickOf(node.deadline);
  if (!InWheel(node) || static_cast<uint32_t>(tick) != entry.tick_lo ||
      SlotFor(tick, level) != slot) {
    return kNoTick;
  }
  return tick;
}

bool TimerWheel::AdvanceOneSlot(uint64_t tick) {
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
  }
  load_pending_ = true;  // even without a level-0 list: the cascade appended to near_
  return true;
}

// near_ is reserved for the whole slot at once (a slot of a million entries
// would otherwise grow it by doubling).
void TimerWheel::AdmitSlot(SlotList& list) {
  assert(loading_.empty());
  near_.Reserve(list.size());
  std::swap(loading_, list);
}

// Each entry needs its node: keep loads in flight.
bool TimerWheel::Load(size_t& budget) {
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
      AdmitNear(chunk->entries[i]);
    }
    pool_.Put(chunk);
  }
  near_.FinishLoad();
  load_pending_ = false;
  PrefetchUpcoming();
  return true;
}

// Re-files a chain of slot `slot` at `level` (elapsed_ is its first tick)
// relative to elapsed_. The slot gives each entry's tick, so no node is
// touched except for those due in this tick (and at level 6).
void TimerWheel::CascadeChain(SlotChunk* chain, int level, int slot) {
  SlotList::Drain(chain, pool_, [&](const SlotChunk& chunk) {
    wheel_entries_ -= chunk.count;
    for (uint32_t i = 0; i < chunk.count; ++i) {
      const SlotEntry& entry = chunk.entries[i];
      const uint64_t tick = EntryTick(entry, elapsed_, level, slot);
      if (tick == kNoTick) continue;  // garbage
      if (tick <= elapsed_) {
        AdmitNear(entry);
      } else {
        FileInWheel(entry, tick);
      }
    }
  });
}

// The slot that hands over to the next level-0 window when the current one
// ends: {level, slot}, level >= 1; level 0 when there is no next window.
TimerWheel::Source TimerWheel::NextSource() const {
  const uint64_t window = (elapsed_ | (kSlotsPerLevel - 1)) + 1;
  if (window > TickOf(kMaxNs)) return {0, 0, window};
  const int level = LevelFor(elapsed_, window);
  return {level, SlotFor(window, level), window};
}

bool TimerWheel::CanStage() const {
  const Source source = NextSource();
  return source.level > 0 && !slots_[source.level * kSlotsPerLevel + source.slot].empty();
}

bool TimerWheel::StageAhead() {
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
// below the source are empty): the staged lists become those levels, and the
// first tick's entries join near_ with those the rest of the cascade admits.
void TimerWheel::InstallStaged() {
  staging_ = false;
  for (int where = 0; where < staged_level_ * kSlotsPerLevel; ++where) {
    if (staged_[where].empty()) continue;
    std::swap(slots_[where], staged_[where]);
    occupied_[where / kSlotsPerLevel] |= uint64_t{1} << (where % kSlotsPerLevel);
  }
  if ((occupied_[0] & 1) != 0) {
    occupied_[0] &= ~uint64_t{1};
    AdmitSlot(slots_[0]);
  }
}

// Level-0 slots are small, so prefetching inside one has little to overlap
// with. While the owner pops this slot, bring in the nodes of the next few
// occupied level-0 slots.
void TimerWheel::PrefetchUpcoming() const {
  uint64_t upcoming = occupied_[0];
  for (int n = 0; n < kLookaheadSlots && upcoming != 0; ++n) {
    const SlotChunk* chunk = slots_[std::countr_zero(upcoming)].front();
    upcoming &= upcoming - 1;
    for (uint32_t i = 0; i < std::min(chunk->count, kPrefetchDistance); ++i) {
      PrefetchNode(chunk->entries[i].id);
    }
  }
}

size_t TimerWheel::MemoryBytes() const {
  return sizeof(*this) + nodes_.MemoryBytes() + near_.MemoryBytes() +
         pool_.chunks_allocated() * sizeof(SlotChunk);
}

}  // namespace ax::internal
