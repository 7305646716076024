#include "timer/chunk_arena.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <utility>

#include <sys/mman.h>

#include "timer/map_ahead.h"
#include "timer/map_in.h"

namespace ax::internal {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr uintptr_t kPage = 4096;
constexpr std::align_val_t kAlign{64};

}  // namespace

ChunkArena::~ChunkArena() {
  if (asked_) MapAhead::Forget(this);
  if (plain_ahead_ != nullptr) ::operator delete(plain_ahead_, kAlign);
  for (void* p : plain_) ::operator delete(p, kAlign);
  for (const Mapping& m : blocks_) munmap(m.base, m.bytes);
}

void* ChunkArena::Get() {
  const bool plain = IsPlain(handed_out_ + chunk_bytes_);
  handed_out_ += chunk_bytes_;
  void* p = nullptr;
  if (plain) {
    p = TakePlain();
    plain_.push_back(p);
  } else {
    if (static_cast<size_t>(end_ - next_) < chunk_bytes_) EnterBlock();
    p = next_;
    next_ += (chunk_bytes_ + 63) & ~size_t{63};
  }
  MapAheadOfNext();
  return p;
}

void* ChunkArena::TakePlain() {
  void* p = nullptr;
  if (plain_ahead_ != nullptr && plain_ahead_done_.load(std::memory_order_acquire)) {
    p = std::exchange(plain_ahead_, nullptr);
  } else {
    p = ::operator new(chunk_bytes_, kAlign);
    // The caller writes the whole chunk at once (ChunkedArray value-initialises it).
    MapIn(p, chunk_bytes_);
  }
  // From the second chunk on (a small array never grows past its first),
  // the next heap chunk within the heap budget is touched ahead.
  if (plain_ahead_ == nullptr && !plain_.empty() && handed_out_ + chunk_bytes_ <= plain_bytes_) {
    plain_ahead_ = ::operator new(chunk_bytes_, kAlign);
    auto* const first = static_cast<char*>(plain_ahead_);
    std::vector<void*> pages{first};  // a byte in each page the chunk spans
    for (size_t at = kPage - reinterpret_cast<uintptr_t>(first) % kPage; at < chunk_bytes_;
         at += kPage) {
      pages.push_back(first + at);
    }
    plain_ahead_done_.store(false, std::memory_order_relaxed);
    asked_ = true;
    MapAhead::Touch(this, std::move(pages), &plain_ahead_done_);
  }
  return p;
}

void ChunkArena::EnterBlock() {
  if (spare_ != nullptr) {
    next_ = std::exchange(spare_, nullptr);
    ahead_ = next_ + kHugePage;
  } else {
    next_ = MapBlock();
    ahead_ = next_;
  }
  end_ = next_ + kBlockBytes;
}

// See the header: the huge page after the one being filled is asked for
// ahead, and near the end of the heap chunks or of a block, the first page of
// the next block.
void ChunkArena::MapAheadOfNext() {
  if (IsPlain(handed_out_ + chunk_bytes_)) return;
  if (end_ != nullptr) {
    // The huge page after the one being filled (the first one not touched).
    char* const base = end_ - kBlockBytes;
    const auto used = static_cast<size_t>(next_ - base);
    char* const page = base + ((used + kHugePage - 1) & ~(kHugePage - 1));
    if (page < end_) {
      if (ahead_ < page + kHugePage) {
        char* const from = std::max(ahead_, page);
        Ask(from, static_cast<size_t>(page + kHugePage - from));
        ahead_ = page + kHugePage;
      }
      return;
    }
  }
  if (spare_ == nullptr) {  // the next chunk starts a block: map it early
    spare_ = MapBlock();
    Ask(spare_, kHugePage);
  }
}

void ChunkArena::Ask(void* p, size_t bytes) {
  asked_ = true;
  MapAhead::Request(this, p, bytes);
}

// Maps kBlockBytes at a 2 MiB boundary (over-maps, then trims both ends).
char* ChunkArena::MapBlock() {
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
  return block;
}

}  // namespace ax::internal
