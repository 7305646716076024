#include "timer/slot_list.h"

namespace ax::internal {

ChunkPool::~ChunkPool() {
  for (SlotChunk* chunk : idle_) delete chunk;
}

SlotChunk* ChunkPool::Get() {
  if (idle_.empty()) {
    ++allocated_;
    return new SlotChunk;
  }
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
    delete chunk;
  }
}

void SlotList::AddChunk(ChunkPool& pool) {
  SlotChunk* chunk = pool.Get();
  if (tail_ == nullptr) {
    head_ = chunk;
  } else {
    tail_->next = chunk;
  }
  tail_ = chunk;
}

}  // namespace ax::internal
