// Unit tests of ChunkArena: heap chunks while small, then chunks carved from
// 2 MiB-aligned mappings; every chunk distinct, aligned and writable.
#include "timer/chunk_arena.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "timer/chunked_array.h"

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
