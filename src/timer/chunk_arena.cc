#include "timer/chunk_arena.h"

#include <cstdint>
#include <new>

#include <sys/mman.h>

#include "timer/map_in.h"

namespace ax::internal {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr std::align_val_t kAlign{64};

}  // namespace

ChunkArena::~ChunkArena() {
  for (void* p : plain_) ::operator delete(p, kAlign);
  for (const Mapping& m : blocks_) munmap(m.base, m.bytes);
}

void* ChunkArena::Get() {
  handed_out_ += chunk_bytes_;
  if (handed_out_ <= kPlainBytes || chunk_bytes_ > kBlockBytes / 4) {
    plain_.push_back(::operator new(chunk_bytes_, kAlign));
    // The caller writes the whole chunk at once (ChunkedArray value-initialises it).
    MapIn(plain_.back(), chunk_bytes_);
    return plain_.back();
  }
  if (static_cast<size_t>(end_ - next_) < chunk_bytes_) MapBlock();
  void* p = next_;
  next_ += (chunk_bytes_ + 63) & ~size_t{63};
  return p;
}

// Maps kBlockBytes at a 2 MiB boundary (over-maps, then trims both ends).
void ChunkArena::MapBlock() {
  const size_t bytes = kBlockBytes + kHugePage;
  void* raw = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  char* const start = static_cast<char*>(raw);
  const size_t head = (kHugePage - reinterpret_cast<uintptr_t>(raw) % kHugePage) % kHugePage;
  char* const block = start + head;
  if (head > 0) munmap(start, head);
  munmap(block + kBlockBytes, bytes - head - kBlockBytes);  // the tail: kHugePage - head > 0
  // Advice only: without transparent huge pages this fails and the block is
  // ordinary memory.
  (void)madvise(block, kBlockBytes, MADV_HUGEPAGE);
  blocks_.push_back({block, kBlockBytes});
  next_ = block;
  end_ = next_ + kBlockBytes;
}

}  // namespace ax::internal
