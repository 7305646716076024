// SlotList: the contents of one wheel slot, an append-only list of
// {id, tick} entries (8 B) kept in 4 KiB chunks drawn from a shared
// ChunkPool. Chunks instead of one vector per slot: no reallocation copies,
// at most one partly filled chunk per slot (a doubling vector may carry 100%
// slack), and drained chunks are recycled without touching malloc.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "timer/prefetch.h"

namespace ax::internal {

// The tick holds the deadline's position to the slot's resolution; the exact
// deadline is the node's. Only the tick's low 32 bits are kept: a slot's
// place gives the rest (TimerWheel::EntryTick).
struct SlotEntry {
  uint32_t id;
  uint32_t tick_lo;
};
static_assert(sizeof(SlotEntry) == 8);

struct SlotChunk {
  static constexpr uint32_t kCapacity = (4096 - 16) / sizeof(SlotEntry);  // 510
  SlotChunk* next = nullptr;
  // Entries in use; a list's tail chunk keeps its count in the list instead
  // (SlotList::tail_count_) until the chunk is full or taken out.
  uint32_t count = 0;
  SlotEntry entries[kCapacity];
};

// Recycles chunks; keeps at most kMaxIdle of them and frees the rest.
//
// Fresh chunks are written to ahead of use by MapAhead's thread: on the test
// VM the first write to a fresh 4 KiB page costs 12 µs (3,000 chunks, 36 ms,
// for a million pending jobs), with or without MapIn before it. The pool
// keeps kReserve allocated chunks that the thread touches, and takes them once
// it is done; if it is not, the pool allocates one on the spot, as before.
// The reserve covers the 1.6-1.8 ms the thread may spend faulting in a huge
// page for another array first (16 chunks did not: docs/engine.md). A
// small wheel (fewer than kReserveFrom chunks, some 20,000 entries) keeps no
// reserve and starts no thread.
class ChunkPool {
 public:
  ChunkPool() = default;
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;
  ~ChunkPool();

  SlotChunk* Get();
  void Put(SlotChunk* chunk);
  size_t chunks_allocated() const { return allocated_; }

 private:
  static constexpr size_t kMaxIdle = 256;  // 1 MiB
  static constexpr size_t kReserve = 64;   // 256 KiB
  static constexpr size_t kReserveFrom = 64;
  // Refills idle_ from the reserve, or with fresh chunks, and asks for the
  // next reserve.
  void Refill();
  std::vector<SlotChunk*> idle_;
  std::vector<void*> reserve_;  // being touched until reserve_done_
  std::atomic<bool> reserve_done_{false};
  size_t allocated_ = 0;
};

class SlotList {
 public:
  bool empty() const { return head_ == nullptr; }
  size_t size() const { return size_; }
  // The first chunk and its entries in use. REQUIRES: !empty().
  const SlotChunk* front() const { return head_; }
  uint32_t front_count() const { return head_ == tail_ ? tail_count_ : head_->count; }

  void Append(const SlotEntry& entry, ChunkPool& pool) {
    if (tail_ == nullptr || tail_count_ == SlotChunk::kCapacity) [[unlikely]] {
      AddChunk(pool);
    }
    // Counted here, not in the chunk: every chunk starts a 4 KiB page, so
    // the counts of the tails appended to in turn share one L1 set, and the
    // count's update was the hottest instruction of the engine's inserts
    // (W1's `After`: 34.4 against 35.6 ns, 10 alternating pairs, lower in 8).
    const uint32_t at = tail_count_++;
    ++size_;
    // Lines of a slot's tail are written once each, often long after the
    // chunk was last touched: start loading the next line now, while other
    // slots take the appends in between (a cascade writes to up to 64 slots
    // in turn).
    constexpr uint32_t kNextLine = 64 / sizeof(SlotEntry) + 1;
    PrefetchForWrite(&tail_->entries[std::min(at + kNextLine, SlotChunk::kCapacity - 1)]);
    tail_->entries[at] = entry;
  }

  // Detaches the chunk chain (walk it with `next`, return it with Release);
  // the list is empty afterwards.
  SlotChunk* Take() {
    SealTail();
    SlotChunk* head = head_;
    head_ = tail_ = nullptr;
    size_ = 0;
    return head;
  }
  static void Release(SlotChunk* chain, ChunkPool& pool) {
    Drain(chain, pool, [](const SlotChunk&) {});
  }
  // Calls fn(chunk) for each chunk of a detached chain and returns it to the
  // pool right after, so that what fn appends elsewhere can reuse it (a
  // cascade of a million entries then allocates almost no new chunks).
  template <typename Fn>
  static void Drain(SlotChunk* chain, ChunkPool& pool, Fn fn) {
    while (chain != nullptr) {
      SlotChunk* next = chain->next;
      fn(*chain);
      pool.Put(chain);
      chain = next;
    }
  }
  // Detaches the first chunk (null when empty); the rest stays.
  SlotChunk* TakeFront() {
    SlotChunk* chunk = head_;
    if (chunk != nullptr) {
      if (chunk == tail_) SealTail();
      size_ -= chunk->count;
      head_ = chunk->next;
      if (head_ == nullptr) tail_ = nullptr;
      chunk->next = nullptr;
    }
    return chunk;
  }

  // Keeps the entries for which keep(entry) holds, in order; calls
  // prefetch(entry) kAhead entries before keep(entry).
  template <typename Keep, typename Prefetch>
  void Filter(Keep keep, Prefetch prefetch, ChunkPool& pool);

 private:
  void AddChunk(ChunkPool& pool);
  // Writes the tail's count into its chunk, for readers of the chunk.
  void SealTail() {
    if (tail_ != nullptr) tail_->count = tail_count_;
  }

  SlotChunk* head_ = nullptr;
  SlotChunk* tail_ = nullptr;
  size_t size_ = 0;          // entries
  uint32_t tail_count_ = 0;  // entries in use in tail_ (its own count is stale)
};

template <typename Keep, typename Prefetch>
void SlotList::Filter(Keep keep, Prefetch prefetch, ChunkPool& pool) {
  constexpr uint32_t kAhead = 16;
  Drain(Take(), pool, [&](const SlotChunk& chunk) {
    const uint32_t count = chunk.count;
    for (uint32_t i = 0; i < count && i < kAhead; ++i) prefetch(chunk.entries[i]);
    for (uint32_t i = 0; i < count; ++i) {
      if (i + kAhead < count) prefetch(chunk.entries[i + kAhead]);
      if (keep(chunk.entries[i])) Append(chunk.entries[i], pool);
    }
  });
}

}  // namespace ax::internal
