// Unit tests of ChunkArena: heap chunks while small, then chunks carved from
// 2 MiB-aligned mappings; every chunk distinct, aligned and writable, and
// mapped in before the caller first writes it.
#include "timer/chunk_arena.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>

#include "timer/chunked_array.h"
#include "timer/map_ahead.h"
#include "timer/slot_list.h"

namespace ax::internal {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

TEST(ChunkArena, ChunksAreDistinctAlignedAndWritablePastTheHeapBudget) {
  constexpr size_t kChunk = 229'376;  // a job slab chunk: 4096 records of 56 B
  ChunkArena arena(kChunk);
  const size_t count = 3 * ChunkArena::kBlockBytes / kChunk;  // several mappings
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  size_t first_mapped = count;
  for (size_t i = 0; i < count; ++i) {
    auto* p = static_cast<unsigned char*>(arena.Get());
    ASSERT_NE(p, nullptr);
    const auto at = reinterpret_cast<uintptr_t>(p);
    EXPECT_EQ(at % 64, 0u) << "chunk " << i;
    std::memset(p, static_cast<int>(i & 0xff), kChunk);
    ranges.emplace_back(at, at + kChunk);
    if (first_mapped == count && (i + 1) * kChunk > ChunkArena::kPlainBytes) first_mapped = i;
  }
  // The first chunk past the heap budget starts a mapping: on a 2 MiB line.
  ASSERT_LT(first_mapped, count);
  EXPECT_EQ(ranges[first_mapped].first % kHugePage, 0u);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_LE(ranges[i - 1].second, ranges[i].first) << "chunks overlap";
  }
}

TEST(ChunkArena, AnArrayMayHaveASmallerHeapBudget) {
  constexpr size_t kChunk = 163'840;  // a job slab chunk: 4096 records of 40 B
  ChunkArena arena(kChunk, 2 * kChunk);
  std::vector<uintptr_t> at;
  for (int i = 0; i < 3; ++i) {
    auto* p = static_cast<unsigned char*>(arena.Get());
    std::memset(p, i, kChunk);
    at.push_back(reinterpret_cast<uintptr_t>(p));
  }
  EXPECT_NE(at[0] % kHugePage, 0u);  // heap chunks
  EXPECT_NE(at[1] % kHugePage, 0u);
  EXPECT_EQ(at[2] % kHugePage, 0u);  // the third starts a mapping
}

// Pages holding part of [p, p + bytes) that are backed by memory (mincore).
size_t ResidentPages(const void* p, size_t bytes) {
  const size_t head = reinterpret_cast<uintptr_t>(p) % 4096;
  const size_t length = (head + bytes + 4095) / 4096 * 4096;
  void* const from = const_cast<char*>(static_cast<const char*>(p) - head);
  std::vector<unsigned char> pages(length / 4096);
  if (mincore(from, length, pages.data()) != 0) return 0;
  return static_cast<size_t>(
      std::count_if(pages.begin(), pages.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

// Past the heap budget, each chunk's pages were mapped in ahead (by
// MapAhead's thread) before the caller first writes them, across a block
// boundary too; and no more than the next huge page is mapped in ahead of
// use.
TEST(ChunkArena, ChunksAreMappedInBeforeTheFirstWrite) {
  constexpr size_t kChunk = 65'536;  // a node-table chunk: 4096 nodes of 16 B
  ChunkArena arena(kChunk);
  const size_t count = (ChunkArena::kPlainBytes + ChunkArena::kBlockBytes) / kChunk + 64;
  size_t not_resident = 0;
  const unsigned char* block = nullptr;  // the first chunk past the heap budget
  for (size_t i = 0; i < count; ++i) {
    MapAhead::Drain();
    auto* p = static_cast<unsigned char*>(arena.Get());
    if (ResidentPages(p, kChunk) < kChunk / 4096) ++not_resident;
    std::memset(p, 1, kChunk);
    if (block == nullptr && (i + 1) * kChunk > ChunkArena::kPlainBytes) {
      block = p;
      MapAhead::Drain();
      // One huge page ahead of the one in use, and nothing beyond it.
      EXPECT_EQ(ResidentPages(block + kHugePage, kHugePage), kHugePage / 4096);
      EXPECT_EQ(ResidentPages(block + 2 * kHugePage, 4 * kHugePage), 0u);
    }
  }
  EXPECT_NE(block, nullptr);
  EXPECT_EQ(not_resident, 0u) << "of " << count << " chunks";
}

// Touch writes to every page it is given, and only then sets the flag: what
// the thread wrote is visible to the owner once it reads the flag.
TEST(MapAhead, TouchWritesEachPageAndThenSetsDone) {
  constexpr size_t kPages = 64;
  void* raw =
      mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(raw, MAP_FAILED);
  auto* memory = static_cast<unsigned char*>(raw);
  std::memset(memory, 0xab, kPages * 4096);
  std::vector<void*> pages;
  for (size_t i = 0; i < kPages; ++i) pages.push_back(memory + i * 4096);
  std::atomic<bool> done{false};
  const int owner = 0;
  MapAhead::Touch(&owner, pages, &done);
  while (!done.load(std::memory_order_acquire)) std::this_thread::yield();
  for (size_t i = 0; i < kPages; ++i) {
    EXPECT_EQ(memory[i * 4096], 0) << "page " << i;
    EXPECT_EQ(memory[i * 4096 + 1], 0xab) << "page " << i;
  }
  MapAhead::Forget(&owner);
  munmap(raw, kPages * 4096);
}

// A pool large enough to keep a reserve hands out chunks the thread wrote to
// only once it is done (under TSan, a write of ours racing with the thread's
// would be reported) and never one chunk twice.
TEST(ChunkPool, ReservedChunksAreHandedOutOnlyOnceTouched) {
  ChunkPool pool;
  std::vector<SlotChunk*> chunks;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 500; ++i) {
      SlotChunk* chunk = pool.Get();
      ASSERT_EQ(chunk->next, nullptr);
      ASSERT_EQ(chunk->count, 0u);
      std::memset(static_cast<void*>(chunk->entries), round, sizeof(chunk->entries));
      chunks.push_back(chunk);
    }
    std::vector<SlotChunk*> sorted = chunks;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
    for (SlotChunk* chunk : chunks) pool.Put(chunk);
    chunks.clear();
  }
  EXPECT_LT(pool.chunks_allocated(), 500u);  // idle chunks beyond the pool's bound are freed
}

TEST(ChunkArena, ChunkedArrayKeepsValuesAcrossManyChunks) {
  ChunkedArray<uint64_t> array;
  constexpr uint32_t kCount = 3'000'000;  // 24 MB: past the heap budget
  array.EnsureIndex(kCount - 1);
  for (uint32_t i = 0; i < kCount; ++i) EXPECT_EQ(array[i], 0u) << i;  // value-initialised
  for (uint32_t i = 0; i < kCount; ++i) array[i] = uint64_t{i} * 7;
  for (uint32_t i = 0; i < kCount; i += 997) ASSERT_EQ(array[i], uint64_t{i} * 7);
}

}  // namespace
}  // namespace ax::internal
