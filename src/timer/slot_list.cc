#include "timer/slot_list.h"

#include <new>
#include <utility>

#include "timer/map_ahead.h"

namespace ax::internal {
namespace {

// A chunk is a page's size but not page-aligned: glibc serves a page-aligned
// page by splitting a larger block, and the pieces it cuts off stayed in the
// heap, resident and unused (8.5 MB at a million pending jobs, 10 B a job).
// An unaligned chunk spans two pages, so its pool touches both ends.
static_assert(sizeof(SlotChunk) == 4096);

void* AllocateChunk() { return ::operator new(sizeof(SlotChunk)); }

void DeleteChunk(SlotChunk* chunk) {
  chunk->~SlotChunk();
  ::operator delete(chunk);
}

}  // namespace

ChunkPool::~ChunkPool() {
  if (!reserve_.empty()) {
    MapAhead::Forget(this);
    for (void* memory : reserve_) ::operator delete(memory);
  }
  for (SlotChunk* chunk : idle_) DeleteChunk(chunk);
}

void ChunkPool::Refill() {
  if (!reserve_.empty() && reserve_done_.load(std::memory_order_acquire)) {
    for (void* memory : reserve_) idle_.push_back(new (memory) SlotChunk);
    reserve_.clear();
  } else {
    // Nothing reserved yet, or the thread is behind: one chunk now, faulted
    // in by its first write.
    idle_.push_back(new (AllocateChunk()) SlotChunk);
    ++allocated_;
  }
  if (reserve_.empty() && allocated_ >= kReserveFrom) {
    std::vector<void*> pages;
    pages.reserve(2 * kReserve);
    for (size_t i = 0; i < kReserve; ++i) {
      reserve_.push_back(AllocateChunk());
      pages.push_back(reserve_.back());
      pages.push_back(static_cast<char*>(reserve_.back()) + sizeof(SlotChunk) - 1);
    }
    allocated_ += kReserve;
    reserve_done_.store(false, std::memory_order_relaxed);
    MapAhead::Touch(this, std::move(pages), &reserve_done_);
  }
}

SlotChunk* ChunkPool::Get() {
  if (idle_.empty()) Refill();
  SlotChunk* chunk = idle_.back();
  idle_.pop_back();
  chunk->next = nullptr;
  chunk->count = 0;
  return chunk;
}

void ChunkPool::Put(SlotChunk* chunk) {
  if (idle_.size() < kMaxIdle) {
    idle_.push_back(chunk);
  } else {
    --allocated_;
    DeleteChunk(chunk);
  }
}

void SlotList::AddChunk(ChunkPool& pool) {
  SlotChunk* chunk = pool.Get();
  SealTail();
  if (tail_ == nullptr) {
    head_ = chunk;
  } else {
    tail_->next = chunk;
  }
  tail_ = chunk;
  tail_count_ = 0;
}

}  // namespace ax::internal
