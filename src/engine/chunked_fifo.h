// ChunkedFifo<T>: a first-in first-out queue with indexed access, for the
// engine's retired jobs (pushed as jobs end, forgotten from the front).
//
// Elements live in chunks of about 4 KiB. A chunk the front leaves is kept
// for the back to reuse (up to kSpares of them), so a queue that stays about
// the same length allocates nothing; growing never copies elements, only the
// small ring of chunk pointers. std::deque did the same work with 512-byte
// blocks it freed and allocated as the queue moved, and its size() and
// operator[] cost a dozen instructions each: retiring a job and forgetting an
// older one took about 150 instructions, under the engine lock, for every
// job that ended (callgrind, W1 and W2).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace ax::internal {

template <class T>
class ChunkedFifo {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  static constexpr size_t kChunkElems = std::bit_floor(4096 / sizeof(T));
  static constexpr size_t kSpares = 8;

  ChunkedFifo() = default;
  ChunkedFifo(const ChunkedFifo&) = delete;
  ChunkedFifo& operator=(const ChunkedFifo&) = delete;
  ~ChunkedFifo() {
    for (T* chunk : ring_) delete[] chunk;
  }

  bool empty() const { return head_ == tail_; }
  size_t size() const { return static_cast<size_t>(tail_ - head_); }
  // REQUIRES: i < size().
  T& operator[](size_t i) { return At(head_ + i); }
  const T& operator[](size_t i) const { return At(head_ + i); }
  T& front() { return At(head_); }
  const T& front() const { return At(head_); }

  void push_back(const T& value) {
    if (tail_ % kChunkElems == 0) [[unlikely]] {
      AddChunk();
    }
    At(tail_) = value;
    ++tail_;
  }
  // REQUIRES: !empty().
  void pop_front() {
    ++head_;
    if (head_ % kChunkElems == 0) [[unlikely]] {
      ReleaseChunk(Chunk(head_ - 1));
    }
  }

  // Chunks held, in use or spare.
  size_t chunks() const { return live_chunks_ + spare_.size(); }

 private:
  T*& Chunk(uint64_t element) { return ring_[(element / kChunkElems) & (ring_.size() - 1)]; }
  T& At(uint64_t element) const {
    return ring_[(element / kChunkElems) & (ring_.size() - 1)][element % kChunkElems];
  }

  // The back enters a new chunk: give it one, first making room in the ring.
  void AddChunk() {
    if (live_chunks_ == ring_.size()) Grow();
    std::unique_ptr<T[]> chunk;
    if (spare_.empty()) {
      chunk = std::make_unique<T[]>(kChunkElems);
    } else {
      chunk = std::move(spare_.back());
      spare_.pop_back();
    }
    Chunk(tail_) = chunk.release();
    ++live_chunks_;
  }

  void ReleaseChunk(T*& slot) {
    std::unique_ptr<T[]> chunk(slot);
    slot = nullptr;
    --live_chunks_;
    if (spare_.size() < kSpares) spare_.push_back(std::move(chunk));
  }

  // Doubles the ring, keeping each live chunk at its element's position.
  void Grow() {
    std::vector<T*> ring(ring_.empty() ? 4 : 2 * ring_.size(), nullptr);
    const uint64_t first = head_ / kChunkElems;
    for (uint64_t c = first; c < first + live_chunks_; ++c) {
      ring[c & (ring.size() - 1)] = ring_[c & (ring_.size() - 1)];
    }
    ring_ = std::move(ring);
  }

  std::vector<T*> ring_;  // chunk c at ring_[c % size]; a power of two
  std::vector<std::unique_ptr<T[]>> spare_;
  size_t live_chunks_ = 0;
  uint64_t head_ = 0;  // element counts since the start
  uint64_t tail_ = 0;
};

}  // namespace ax::internal
