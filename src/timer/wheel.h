// TimerWheel: the engine's timer structure, a hierarchical timing wheel with
// exact (deadline, insertion order) firing. Implements the contract of
// timer_queue.h; one owner thread, no locks. A template over where the
// deadlines live (see Deadlines below); `TimerWheel` keeps its own.
//
// Algorithm (Varghese & Lauck scheme 7, laid out like tokio and Linux):
//   * Time is cut into ticks of 2^24 ns = 16.8 ms (tick.h). Seven levels of 64
//     slots; a level-L slot spans 64^L ticks: level 0 covers 1.07 s, level 1
//     68.7 s, level 2 73 min, level 3 78 h, level 4 208 days, level 5 36
//     years, level 6 the rest. Together they span all 2^64 ns, so every int64
//     deadline is filed directly: nothing is clamped, there is no overflow
//     list, INT64_MAX works.
//   * `elapsed_` is the last tick the wheel has processed. An entry whose tick
//     is <= elapsed_ (past deadlines, the current tick) lives in the NearQueue
//     (near_queue.h), which orders it exactly by (deadline, sequence). A later
//     entry is filed at LevelFor(elapsed_, tick): the level of the highest
//     tick bit that differs from elapsed_. Each level has a 64-bit occupancy
//     bitmap; the lowest set bit of the first non-empty level is the next
//     slot (lower levels are always earlier than higher ones).
//   * Processing a slot (only when the NearQueue is empty) sets elapsed_ to
//     the slot's first tick and re-files its entries: those of that tick go to
//     the NearQueue, the rest cascade to lower levels.
//   * Storage, tuned for "most timers fire": slot entries are {id, the
//     deadline's tick's low 18 bits, the insert's tag} (8 B) in chunked lists
//     (slot_list.h) and carry what a cascade needs: a slot's place gives the
//     rest of the tick up to level 3 (EntryTick), so cascading streams
//     through contiguous memory and never reads a deadline. Levels 4 to 6
//     (78 hours away and more) read it. A node is split in two: its deadline
//     (8 B) is the owner's, in its own record for the id (`Deadlines`, below),
//     and its state (2 B: where it is, and a 14-bit tag that each insert
//     advances) is the wheel's, in a dense array. A deadline is read once per
//     entry, when its slot reaches the NearQueue (prefetched), and once when
//     it fires.
//   * Remove touches only the state (state := absent), never the owner's
//     record: the slot entry becomes garbage, recognised later because the id
//     no longer is in the wheel with the entry's tag and a deadline in its
//     tick. The tag tells a re-insert's entry from the old ones in the same
//     tick; should 16,384 re-inserts wrap it while an old entry waits in that
//     tick, the NearQueue load still admits the id once (the state changes
//     on admission), at its live deadline, but in the old entry's place among
//     equal deadlines. When garbage outnumbers the live wheel entries, a
//     sweep pass filters every list (slots, the loading list, the staged
//     lists) by the ids' states alone, one non-empty list per Remove, so no
//     call waits for the whole wheel: a pass over a million entries, all in
//     one call, held the engine lock for 18-40 ms on the test VM. Amortised
//     O(1) per Remove; the most a call does is filter the largest list.
//     Slots holding only garbage may stay marked occupied until processed,
//     so NextDeadline() can be early -- still a lower bound.
//   * Same-deadline FIFO: every slot list is in insertion order (an entry is
//     always appended, and the entries a cascade brings to a list were all
//     inserted before any that list takes directly, since direct inserts
//     reach it only once the cascade has made it current). Entries take their
//     NearQueue sequence number as they are admitted, in list order -- a
//     loading slot reserves its whole range first -- and single inserts into
//     the NearQueue take the next one. The NearQueue orders by (deadline,
//     sequence), so an entry that cascaded from level 3 still fires before
//     one inserted later directly into level 0, with no per-timer counter.
//   * NextDeadline() is exact when the earliest entry is in the NearQueue,
//     otherwise the first tick of the next occupied slot, less the load-ahead
//     (below). An idle owner sleeps until it; the wheel never needs ticking.
//   * Staging: when the current level-0 window ends, the slot that holds the
//     next window (level 1, or a higher level every 64th window) cascades
//     into the levels below it -- at W3's rate of 20,000 fires a second a
//     level-1 slot is 21,000 entries, 0.5-1 ms on the test VM (a page unused
//     for a second costs microseconds at its next touch), and due jobs wait
//     meanwhile. StageAhead files that slot ahead, one chunk at a time, into
//     `staged_`: the lower levels as they will be from the next window on.
//     The owner calls it when it has a moment; the hand-over then only swaps
//     lists and loads the first tick. Entries inserted meanwhile go to the
//     source slot and cascade at the hand-over as before; the source slot
//     keeps its occupied bit until then.
//   * Loading: a level-0 slot moves into the NearQueue a few chunks per
//     PopExpired call (kLoadChunks, about 1,400 entries), and nothing pops
//     until all of it is in and sorted -- a later chunk may hold the earliest
//     deadline. A slot of a million entries (everything due on the hour) took
//     70-120 ms in one go on the test VM, and the owner's lock with it, so
//     calls stalled that long at the start of W2's storm. Meanwhile
//     NextDeadline() is INT64_MIN (due now: call again), removals leave
//     garbage in the loading list like in any slot, and inserts due in the
//     slot's tick go to the NearQueue's heap.
//   * Loading ahead: with a load-ahead L (constructor), PopExpired processes
//     slots that start up to L after now, so a large slot is in and sorted
//     before its first deadline instead of after it; entries still pop only
//     when due. elapsed_ may then run ahead of now, which is harmless: inserts
//     up to elapsed_ go to the NearQueue, exact as ever. The NearQueue still
//     holds at most one slot's load, as the next slot waits for it to empty.
//   * PopExpired hands out at most `max` ids per call. Processing a slot is
//     O(entries in it), done once per slot per level.
//   * Memory: the owner's 8 B deadline + 2 B state + 8 B slot entry per
//     pending timer, plus one partly filled 4 KiB chunk per occupied (or
//     staged) slot and array chunk slack (see MemoryBytes()). Entries in the
//     NearQueue take 24 B there instead.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "timer/chunked_array.h"
#include "timer/near_queue.h"
#include "timer/prefetch.h"
#include "timer/slot_list.h"
#include "timer/tick.h"

namespace ax::internal {

// Deadlines: where a wheel keeps each id's deadline. A type with
//   int64_t& operator[](uint32_t id)    the id's deadline word
//   void Ensure(uint32_t id)            makes id addressable
//   void Prefetch(uint32_t id) const    starts loading the word
//   size_t MemoryBytes() const          bytes it holds for the wheel
// The wheel writes the word on Insert and reads it only while the id is in
// the wheel (and right after PopExpired hands it out); the rest of the time
// the word is the owner's. OwnDeadlines is an array of the wheel's own.
class OwnDeadlines {
 public:
  int64_t& operator[](uint32_t id) { return deadlines_[id]; }
  const int64_t& operator[](uint32_t id) const { return deadlines_[id]; }
  void Ensure(uint32_t id) {
    if (id >= deadlines_.size()) [[unlikely]] {
      deadlines_.EnsureIndex(id);
    }
  }
  void Prefetch(uint32_t id) const { deadlines_.Prefetch(id); }
  size_t MemoryBytes() const { return deadlines_.MemoryBytes(); }

 private:
  ChunkedArray<int64_t> deadlines_;
};

template <class Deadlines>
class BasicTimerWheel {
 public:
  // `now_ns` is the time the wheel starts at; earlier deadlines are due.
  // `load_ahead_ns` >= 0: how long before a slot's first tick the wheel may
  // start moving it into the NearQueue (see Loading above). The rest
  // constructs the Deadlines.
  template <class... Args>
  explicit BasicTimerWheel(int64_t now_ns = 0, int64_t load_ahead_ns = 0, Args&&... deadlines)
      : deadlines_(std::forward<Args>(deadlines)...),
        load_ahead_(load_ahead_ns),
        elapsed_(TickOf(now_ns)) {
    assert(load_ahead_ns >= 0);
  }
  ~BasicTimerWheel();

  BasicTimerWheel(const BasicTimerWheel&) = delete;
  BasicTimerWheel& operator=(const BasicTimerWheel&) = delete;

  // REQUIRES: !Contains(id).
  void Insert(uint32_t id, int64_t deadline_ns);
  // Insert(id, deadline) for each of ids[0, n) in order, the deadline read
  // from the Deadlines, where the caller has put it (a Deadlines over the
  // caller's own records, like the engine's JobDeadlines). For a caller that
  // gathers its inserts: each costs about half as much in one tight loop as
  // on its own between the caller's other work (the engine's After).
  // REQUIRES: !Contains(id) for each.
  void InsertAll(const uint32_t* ids, size_t n);
  bool Remove(uint32_t id);
  bool Contains(uint32_t id) const { return id < states_.size() && State(states_[id]) != kAbsent; }
  // Starts loading id's state and deadline, for a caller about to Remove or
  // Reschedule it.
  void Prefetch(uint32_t id) const {
    if (id < states_.size()) PrefetchNode(id);
  }
  // REQUIRES: Contains(id).
  int64_t Deadline(uint32_t id) const { return deadlines_[id]; }
  // The deadline of an id PopExpired has just handed out (valid until the
  // owner writes the word or the id is inserted again).
  int64_t PoppedDeadline(uint32_t id) const { return deadlines_[id]; }
  void Reschedule(uint32_t id, int64_t deadline_ns) {
    Remove(id);
    Insert(id, deadline_ns);
  }
  int64_t NextDeadline();
  size_t PopExpired(int64_t now_ns, size_t max, std::vector<uint32_t>& out);
  // Staging (see above): whether the slot holding the next window has
  // entries left to stage, and moving one chunk of them (at most 510 entries).
  // Returns whether more remain. Optional: without it the hand-over does all.
  bool CanStage() const;
  bool StageAhead();
  size_t size() const { return size_; }
  // The buffer of the last large slot fired, once drained, for the owner to
  // free outside its lock (NearQueue::TakeDrained).
  std::vector<NearEntry> TakeDrained() { return near_.TakeDrained(); }

  // Bytes held by the wheel (capacity, not size), including the object and
  // its deadlines.
  size_t MemoryBytes() const;

 private:
  // An id's state: where it is (the low two bits) and the tag of its latest
  // insert (the other 14).
  using NodeState = uint16_t;
  static constexpr NodeState kAbsent = 0;
  static constexpr NodeState kNear = 1;
  static constexpr NodeState kWheel = 2;
  static constexpr NodeState kStateMask = 3;
  static constexpr int kTagShift = 2;
  // A slot entry keeps the tick's low kTickBits and the tag above them.
  static constexpr int kTickBits = 32 - (16 - kTagShift);
  static constexpr uint32_t kTickMask = (uint32_t{1} << kTickBits) - 1;

  static NodeState State(NodeState s) { return s & kStateMask; }
  static uint16_t Tag(NodeState s) { return s >> kTagShift; }
  static void SetState(NodeState& s, NodeState state) {
    s = static_cast<NodeState>((s & ~kStateMask) | state);
  }
  static uint16_t TagOf(const SlotEntry& entry) {
    return static_cast<uint16_t>(entry.tick_lo >> kTickBits);
  }
  // Whether the entry is the id's live one in the wheel, for an entry whose
  // tick is `tick`: the state's tag is the entry's, and the deadline in it.
  bool IsLive(const SlotEntry& entry, uint64_t tick) {
    const NodeState s = states_[entry.id];
    return State(s) == kWheel && Tag(s) == TagOf(entry) && TickOf(deadlines_[entry.id]) == tick;
  }
  bool IsStale(const NearEntry& entry) {
    const NodeState s = states_[entry.id];
    return State(s) != kNear || Tag(s) != entry.tag || deadlines_[entry.id] != entry.deadline;
  }
  void PrefetchNode(uint32_t id) const {
    PrefetchForWrite(&states_[id]);
    deadlines_.Prefetch(id);
  }
  // Insert's work, inlined into InsertAll's loop.
  [[gnu::always_inline]] void InsertOne(uint32_t id, int64_t deadline_ns);
  // Files an entry whose tick is > elapsed_ into its level and slot.
  void FileInWheel(const SlotEntry& entry, uint64_t tick);
  // Moves a slot entry of tick elapsed_ into the NearQueue, with sequence
  // number `seq`, if it is live and its id not yet admitted (garbage and
  // duplicates are dropped).
  void AdmitNear(const SlotEntry& entry, uint64_t seq);
  // The tick of `entry` in slot `slot` of `level`, a slot whose ticks share
  // their higher digits with `ref`; kNoTick for an entry found to be garbage.
  // Up to level 3 the slot gives every bit above the entry's low kTickBits
  // (no deadline is read); at levels 4 to 6 (78 hours away and more) the
  // deadline gives the tick.
  static constexpr uint64_t kNoTick = UINT64_MAX;
  uint64_t EntryTick(const SlotEntry& entry, uint64_t ref, int level, int slot);
  void PrefetchUpcoming() const;
  void DropStaleTop();
  void MaybeCompactNear();
  void MaybeSweep();
  // Filters the next non-empty list of the pass (starting one if none is on).
  void SweepStep();
  // Keeps the live entries of sweep list i.
  void FilterList(int i);
  // The lists a sweep pass filters, in order: slots_ (kSlots), loading_,
  // staged_ (kSlots).
  static constexpr int kSlots = kNumLevels * kSlotsPerLevel;
  static constexpr int kSweepLists = 2 * kSlots + 1;
  SlotList& SweepList(int i);
  // Processes the next occupied slot if it starts at or before `tick`.
  // REQUIRES: near_ is empty and nothing is loading. Returns false when there
  // is no such slot.
  bool AdvanceOneSlot(uint64_t tick);
  // Starts loading a level-0 slot's entries into near_ (see Loading above).
  void AdmitSlot(SlotList& list);
  // Moves up to `budget` chunks of the loading slot into near_ (spending the
  // budget) and, once all are in, sorts near_'s run. Returns whether the load
  // is complete.
  bool Load(size_t& budget);
  void CascadeChain(SlotChunk* chain, int level, int slot);
  struct Source {
    int level;
    int slot;
    uint64_t window;  // first tick of the next level-0 window
  };
  Source NextSource() const;
  void InstallStaged();

  Deadlines deadlines_;
  // Indexed by id, in chunks of 32,768 (64 KiB): in chunks of 4,096, each
  // new heap chunk woke MapAhead's thread (ChunkArena::TakePlain), some
  // 17,000 cycles a chunk, 4 an insert of a fresh id.
  ChunkedArray<NodeState, 15> states_;
  std::array<uint64_t, kNumLevels> occupied_{};
  std::array<SlotList, static_cast<size_t>(kNumLevels) * kSlotsPerLevel> slots_;
  ChunkPool pool_;
  NearQueue near_;
  // The level-0 slot being loaded into near_ (its tick is elapsed_), and
  // whether near_ waits for the end of a load (FinishLoad).
  SlotList loading_;
  bool load_pending_ = false;
  // The next sequence number of the loading slot's entries: AdmitSlot
  // reserves one for each, so that single inserts into near_ meanwhile
  // (which take next_seq_) come after all of them.
  uint64_t load_seq_ = 0;
  // Levels 0 .. staged_level_ - 1 as they will be from staged_window_ on,
  // filed ahead by StageAhead; installed when elapsed_ reaches that tick.
  std::array<SlotList, static_cast<size_t>(kNumLevels) * kSlotsPerLevel> staged_;
  uint64_t staged_window_ = 0;
  int staged_level_ = 0;
  bool staging_ = false;
  size_t near_stale_ = 0;     // removed entries still in near_
  size_t wheel_entries_ = 0;  // slot entries, live or garbage
  size_t wheel_live_ = 0;     // ids in a wheel state
  int sweep_next_ = -1;       // the next list of the sweep pass under way; -1: none
  const int64_t load_ahead_;
  uint64_t elapsed_;
  uint64_t next_seq_ = 0;  // NearQueue sequence numbers
  size_t size_ = 0;
};

using TimerWheel = BasicTimerWheel<OwnDeadlines>;

template <class D>
inline void BasicTimerWheel<D>::Insert(uint32_t id, int64_t deadline_ns) {
  InsertOne(id, deadline_ns);
}

template <class D>
inline void BasicTimerWheel<D>::InsertAll(const uint32_t* ids, size_t n) {
  for (size_t i = 0; i < n; ++i) InsertOne(ids[i], deadlines_[ids[i]]);
}

template <class D>
inline void BasicTimerWheel<D>::InsertOne(uint32_t id, int64_t deadline_ns) {
  if (id >= states_.size()) [[unlikely]] {
    states_.EnsureIndex(id);
  }
  deadlines_.Ensure(id);
  NodeState& s = states_[id];
  assert(State(s) == kAbsent);
  // The next tag; the state bits (absent) are clear.
  const auto tag = static_cast<NodeState>(s + (1 << kTagShift));
  deadlines_[id] = deadline_ns;
  ++size_;
  const uint64_t tick = TickOf(deadline_ns);
  if (tick <= elapsed_) [[unlikely]] {
    s = tag | kNear;
    near_.Push({deadline_ns, next_seq_++, id, Tag(tag)});
    return;
  }
  s = tag | kWheel;
  ++wheel_live_;
  FileInWheel({id, (static_cast<uint32_t>(tick) & kTickMask) |
                       (static_cast<uint32_t>(Tag(tag)) << kTickBits)},
              tick);
}

template <class D>
inline void BasicTimerWheel<D>::FileInWheel(const SlotEntry& entry, uint64_t tick) {
  const int level = LevelFor(elapsed_, tick);
  const int slot = SlotFor(tick, level);
  slots_[level * kSlotsPerLevel + slot].Append(entry, pool_);
  occupied_[level] |= uint64_t{1} << slot;
  ++wheel_entries_;
}

template <class D>
inline bool BasicTimerWheel<D>::Remove(uint32_t id) {
  if (!Contains(id)) return false;
  NodeState& s = states_[id];
  const bool near = State(s) == kNear;
  SetState(s, kAbsent);
  --size_;
  if (near) {
    ++near_stale_;  // left in near_ and skipped when met
    MaybeCompactNear();
  } else {
    --wheel_live_;  // its slot entry is garbage now
    MaybeSweep();
  }
  return true;
}

template <class D>
inline void BasicTimerWheel<D>::MaybeSweep() {
  if (sweep_next_ >= 0 || wheel_entries_ - wheel_live_ > wheel_live_ + 1024) [[unlikely]] {
    SweepStep();
  }
}

}  // namespace ax::internal
