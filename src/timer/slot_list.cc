#include "timer/slot_list.h"

#include <new>

#include "timer/map_ahead.h"

namespace ax::internal {
namespace {

// Chunks are whole pages (see ChunkPool for how they are mapped in).
constexpr std::align_val_t kChunkAlign{4096};
static_assert(sizeof(SlotChunk) == 4096);

void* AllocateChunk() { return ::operator new(sizeof(SlotChunk), kChunkAlign); }

void DeleteChunk(SlotChunk* chunk) {
  chunk->~SlotChunk();
  ::operator delete(chunk, kChunkAlign);
}

}  // namespace

ChunkPool::~ChunkPool() {
  if (!reserve_.empty()) {
    MapAhead::Forget(this);
    for (void* memory : reserve_) ::operator delete(memory, kChunkAlign);
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
    for (size_t i = 0; i < kReserve; ++i) reserve_.push_back(AllocateChunk());
    allocated_ += kReserve;
    reserve_done_.store(false, std::memory_order_relaxed);
    MapAhead::Touch(this, reserve_, &reserve_done_);
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
