// Unit tests of KeyMap (key -> job slot index) against std::unordered_map
// as an oracle: random inserts, lookups and erases through several growths,
// so that probe runs wrap around the tables and erases shift entries back.
#include "engine/key_map.h"

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

// The slot -> key table a scheduler keeps in its job records.
struct Keys {
  std::vector<std::string> of_slot;
  auto Is(std::string_view key) const {
    return [this, key](uint32_t slot) { return of_slot[slot] == key; };
  }
};

TEST(KeyMap, EmptyFindsNothing) {
  KeyMap map;
  Keys keys;
  EXPECT_EQ(map.Find("order-1", keys.Is("order-1")), KeyMap::kNone);
  map.Erase("order-1", 0);  // absent: no effect
  EXPECT_EQ(map.size(), 0u);
}

TEST(KeyMap, FindsEachKeyAfterGrowingAndForgetsErasedOnes) {
  KeyMap map;
  Keys keys;
  constexpr uint32_t kCount = 100'000;  // every shard grows several times
  for (uint32_t slot = 0; slot < kCount; ++slot) {
    keys.of_slot.push_back("order-" + std::to_string(slot));
    map.Insert(keys.of_slot[slot], slot);
  }
  EXPECT_EQ(map.size(), kCount);
  for (uint32_t slot = 0; slot < kCount; ++slot) {
    ASSERT_EQ(map.Find(keys.of_slot[slot], keys.Is(keys.of_slot[slot])), slot);
  }
  for (uint32_t slot = 0; slot < kCount; slot += 2) map.Erase(keys.of_slot[slot], slot);
  EXPECT_EQ(map.size(), kCount / 2);
  for (uint32_t slot = 0; slot < kCount; ++slot) {
    const uint32_t want = slot % 2 == 0 ? KeyMap::kNone : slot;
    ASSERT_EQ(map.Find(keys.of_slot[slot], keys.Is(keys.of_slot[slot])), want) << slot;
  }
}

// The same key may be entered again for a new slot once its entry for the
// old slot is erased (a key is free again when its job ends).
TEST(KeyMap, EraseRemovesOnlyTheEntryOfThatSlot) {
  KeyMap map;
  Keys keys{{"k", "k"}};
  map.Insert("k", 0);
  map.Erase("k", 1);  // not its slot: kept
  EXPECT_EQ(map.Find("k", keys.Is("k")), 0u);
  map.Erase("k", 0);
  map.Insert("k", 1);
  EXPECT_EQ(map.Find("k", keys.Is("k")), 1u);
  EXPECT_EQ(map.size(), 1u);
}

TEST(KeyMap, MatchesAnOracleUnderRandomInsertsAndErases) {
  KeyMap map;
  Keys keys;
  std::unordered_map<std::string, uint32_t> oracle;
  std::mt19937_64 rng(7);
  constexpr int kKeySpace = 20'000;  // small: keys come back after erases
  for (int step = 0; step < 400'000; ++step) {
    const std::string key = "k" + std::to_string(rng() % kKeySpace);
    auto it = oracle.find(key);
    if (it == oracle.end()) {
      const auto slot = static_cast<uint32_t>(keys.of_slot.size());
      keys.of_slot.push_back(key);
      map.Insert(key, slot);
      oracle.emplace(key, slot);
    } else if (rng() % 3 == 0) {
      ASSERT_EQ(map.Find(key, keys.Is(key)), it->second) << "step " << step;
    } else {
      map.Erase(key, it->second);
      oracle.erase(it);
      ASSERT_EQ(map.Find(key, keys.Is(key)), KeyMap::kNone) << "step " << step;
    }
    ASSERT_EQ(map.size(), oracle.size());
  }
  for (const auto& [key, slot] : oracle) ASSERT_EQ(map.Find(key, keys.Is(key)), slot) << key;
}

}  // namespace
}  // namespace ax::internal
