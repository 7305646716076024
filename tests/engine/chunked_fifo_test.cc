#include "engine/chunked_fifo.h"

#include <cstdint>
#include <deque>
#include <random>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

struct Entry {
  uint32_t a;
  uint32_t b;
  int64_t c;
};

// Random pushes and pops, in runs long enough to cross many chunks, grow the
// ring and empty the queue at and between chunk boundaries: the queue holds
// what std::deque holds, in the same order.
TEST(ChunkedFifo, HoldsWhatADequeHolds) {
  constexpr size_t kPerChunk = ChunkedFifo<Entry>::kChunkElems;
  ChunkedFifo<Entry> fifo;
  std::deque<Entry> want;
  std::mt19937_64 rng(42);
  uint32_t next = 0;
  for (int round = 0; round < 400; ++round) {
    const size_t pushes = rng() % (3 * kPerChunk);
    for (size_t i = 0; i < pushes; ++i) {
      const Entry e{next, ~next, int64_t{next} * 3};
      ++next;
      fifo.push_back(e);
      want.push_back(e);
    }
    // Sometimes down to empty, sometimes to exactly a chunk boundary.
    size_t pops = rng() % (want.size() + 1);
    if (round % 7 == 0) pops = want.size();
    for (size_t i = 0; i < pops; ++i) {
      ASSERT_EQ(fifo.front().a, want.front().a);
      fifo.pop_front();
      want.pop_front();
    }
    ASSERT_EQ(fifo.size(), want.size());
    ASSERT_EQ(fifo.empty(), want.empty());
    for (size_t i = 0; i < want.size(); i += 1 + rng() % 97) {
      ASSERT_EQ(fifo[i].a, want[i].a);
      ASSERT_EQ(fifo[i].b, want[i].b);
      ASSERT_EQ(fifo[i].c, want[i].c);
    }
  }
}

// A queue that keeps about the same length reuses the chunks its front
// leaves: as many chunks as it spans, plus one.
TEST(ChunkedFifo, SteadyLengthReusesChunks) {
  constexpr size_t kPerChunk = ChunkedFifo<Entry>::kChunkElems;
  ChunkedFifo<Entry> fifo;
  const size_t length = 10 * kPerChunk + kPerChunk / 2;
  for (uint32_t i = 0; i < length; ++i) fifo.push_back({i, 0, 0});
  const size_t held = fifo.chunks();
  for (uint32_t i = 0; i < 100 * kPerChunk; ++i) {
    fifo.pop_front();
    fifo.push_back({i, 0, 0});
  }
  EXPECT_LE(fifo.chunks(), held + 1);
  EXPECT_EQ(fifo.size(), length);
}

}  // namespace
}  // namespace ax::internal
