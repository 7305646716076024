#include "engine/key_map.h"

#include <utility>

namespace ax::internal {

void KeyMap::Place(std::vector<Entry>& entries, Entry e) {
  const size_t mask = entries.size() - 1;
  size_t i = e.tag & mask;
  while (entries[i].slot != kNone) i = (i + 1) & mask;
  entries[i] = e;
}

// Doubles a shard (at most 3/4 full): a sequential pass over its entries
// alone; the keys are not read.
void KeyMap::Grow(Shard& shard) {
  std::vector<Entry> bigger(shard.entries.empty() ? 16 : shard.entries.size() * 2);
  for (const Entry& e : shard.entries) {
    if (e.slot != kNone) Place(bigger, e);
  }
  shard.entries = std::move(bigger);
}

void KeyMap::Insert(std::string_view key, uint32_t slot) {
  const uint64_t h = HashOf(key);
  Shard& shard = shards_[ShardOf(h)];
  if ((shard.used + 1) * 4 > shard.entries.size() * 3) Grow(shard);
  Place(shard.entries, {static_cast<uint32_t>(h), slot});
  ++shard.used;
  ++size_;
}

void KeyMap::Erase(std::string_view key, uint32_t slot) {
  const uint64_t h = HashOf(key);
  Shard& shard = shards_[ShardOf(h)];
  size_t i = Probe(shard, static_cast<uint32_t>(h), [slot](uint32_t s) { return s == slot; });
  if (i == kNowhere) return;
  const size_t mask = shard.entries.size() - 1;
  // Backward-shift deletion: move later entries of the probe run into the
  // hole when their home position allows, so no tombstones are needed.
  for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    const Entry& e = shard.entries[j];
    if (e.slot == kNone) break;
    const size_t home = e.tag & mask;
    // e may move to i if i lies cyclically in [home, j).
    const bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      shard.entries[i] = e;
      i = j;
    }
  }
  shard.entries[i] = Entry{};
  --shard.used;
  --size_;
}

}  // namespace ax::internal
