// ChunkedArray<T>: a dense array indexed by uint32 id, stored in fixed chunks
// of 2^kChunkBits elements. Growing never moves elements (no pause to copy
// hundreds of MB on the owner thread) and over-allocates at most one chunk,
// where a doubling vector may hold twice what it needs. Lookup costs one
// extra load from a small, cache-resident chunk table. Chunks come from a
// ChunkArena (huge pages once the array is large).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "timer/chunk_arena.h"
#include "timer/prefetch.h"

namespace ax::internal {

template <typename T, int kChunkBits = 12>
class ChunkedArray {
 public:
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;

  // Heap chunks until `plain_bytes`, huge pages after (ChunkArena).
  explicit ChunkedArray(size_t plain_bytes = ChunkArena::kPlainBytes)
      : arena_(kChunkSize * sizeof(T), plain_bytes) {}
  ChunkedArray(const ChunkedArray&) = delete;
  ChunkedArray& operator=(const ChunkedArray&) = delete;
  ~ChunkedArray() {
    for (T* chunk : chunks_) std::destroy_n(chunk, kChunkSize);
  }

  // Number of addressable elements (a multiple of kChunkSize).
  size_t size() const { return chunks_.size() * kChunkSize; }

  T& operator[](uint32_t index) { return chunks_[index >> kChunkBits][index & (kChunkSize - 1)]; }
  const T& operator[](uint32_t index) const {
    return chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
  }

  // Starts loading element `index` (every cache line it spans; chunks are
  // 64-byte aligned). REQUIRES: index < size().
  void Prefetch(uint32_t index) const {
    const char* p = reinterpret_cast<const char*>(&(*this)[index]);
    PrefetchForWrite(p);
    if constexpr (sizeof(T) > 64 || 64 % sizeof(T) != 0) {
      for (size_t off = 64; off < sizeof(T); off += 64) PrefetchForWrite(p + off);
      PrefetchForWrite(p + sizeof(T) - 1);
    }
  }

  // Reserves the chunk table for every uint32 index (virtual memory only, a
  // pointer per chunk), so that growing never moves it: then a thread may
  // reach an element through Unmoving while another grows the array, given
  // that it learns of the element's chunk through a release-acquire pair
  // (Slab::Peek).
  void ReserveAll() { chunks_.reserve(size_t{1} << (32 - kChunkBits)); }
  // operator[] through the table's start alone (never its size), for
  // ReserveAll's readers.
  T& Unmoving(uint32_t index) const {
    return chunks_.data()[index >> kChunkBits][index & (kChunkSize - 1)];
  }

  // Makes `index` addressable; new elements are value-initialised.
  void EnsureIndex(uint32_t index) {
    while (size() <= index) {
      T* chunk = static_cast<T*>(arena_.Get());
      std::uninitialized_value_construct_n(chunk, kChunkSize);
      chunks_.push_back(chunk);
    }
  }

  size_t MemoryBytes() const {
    return (chunks_.size() * kChunkSize * sizeof(T)) + (chunks_.capacity() * sizeof(void*));
  }

 private:
  ChunkArena arena_;
  std::vector<T*> chunks_;
};

}  // namespace ax::internal
