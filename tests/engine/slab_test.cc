#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "engine/job_table.h"

namespace ax::internal {
namespace {

struct Record {
  int64_t link = 0;
  uint32_t value = 0;
};
using StackSlab = Slab<Record, 4>;
using LinkedSlab = Slab<Record, 4, &Record::link>;

// Random allocations and releases across many chunks: both free lists hand
// out the most recently released record first, never one that is in use, and
// fresh records only when nothing is free. The linked one keeps no stack:
// the list runs through the free records' `link`.
template <class S>
void CheckAgainstModel() {
  S slab(4096);
  std::vector<uint32_t> free_model;  // a stack, as the slab's free list
  std::set<uint32_t> live;
  std::mt19937_64 rng(7);
  uint32_t fresh = 0;
  for (int round = 0; round < 300; ++round) {
    const size_t allocations = rng() % 100;
    for (size_t i = 0; i < allocations; ++i) {
      const uint32_t got = slab.Allocate();
      if (free_model.empty()) {
        ASSERT_EQ(got, fresh++);
      } else {
        ASSERT_EQ(got, free_model.back());
        free_model.pop_back();
      }
      ASSERT_TRUE(live.insert(got).second) << "record " << got << " handed out twice";
      slab[got].value = got;
    }
    size_t releases = live.empty() ? 0 : rng() % (live.size() + 1);
    if (round % 11 == 0) releases = live.size();  // sometimes everything
    for (size_t i = 0; i < releases; ++i) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      ASSERT_EQ(slab[*it].value, *it);
      slab.Release(*it);
      free_model.push_back(*it);
      live.erase(it);
    }
    ASSERT_EQ(slab.live(), live.size());
    ASSERT_EQ(slab.size(), fresh);
  }
}

TEST(Slab, StackFreeListReusesTheLastReleasedFirst) { CheckAgainstModel<StackSlab>(); }

TEST(Slab, LinkedFreeListReusesTheLastReleasedFirst) { CheckAgainstModel<LinkedSlab>(); }

}  // namespace
}  // namespace ax::internal
