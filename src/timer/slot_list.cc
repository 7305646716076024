#include "timer/slot_list.h"

#include <new>

#include <sys/mman.h>

namespace ax::internal {
namespace {

// Chunks are whole pages, so that a fresh one can be mapped in by one
// madvise(MADV_POPULATE_WRITE): about 3 µs on the test VM, against 11-12 µs
// for the page fault its first write would take (a fault is a trip to the
// hypervisor there). A million pending jobs fill some 3,000 chunks.
constexpr std::align_val_t kChunkAlign{4096};
static_assert(sizeof(SlotChunk) == 4096);

SlotChunk* NewChunk() {
  void* memory = ::operator new(sizeof(SlotChunk), kChunkAlign);
#ifdef MADV_POPULATE_WRITE
  madvise(memory, sizeof(SlotChunk), MADV_POPULATE_WRITE);  // on failure: a fault, as before
#endif
  return new (memory) SlotChunk;
}

void DeleteChunk(SlotChunk* chunk) {
  chunk->~SlotChunk();
  ::operator delete(chunk, kChunkAlign);
}

}  // namespace

ChunkPool::~ChunkPool() {
  for (SlotChunk* chunk : idle_) DeleteChunk(chunk);
}

SlotChunk* ChunkPool::Get() {
  if (idle_.empty()) {
    ++allocated_;
    return NewChunk();
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
    DeleteChunk(chunk);
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
