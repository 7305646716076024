// KeyMap: job keys -> job slots, for the jobs that have a key.
//
// The key text stays in the job's cold record; the map keeps, per key, only
// 32 bits of its hash and the slot (8 bytes), in open-addressing tables with
// linear probing. A lookup reads one cache line of the table, and the job's
// key only when the hash bits match (a hit, or about one miss in 4 billion).
//
// Why not std::unordered_map<std::string, uint32_t>: it reached a node
// through a bucket array and the node before it in its list -- two or three
// dependent cache misses per lookup, on pages the VM had let go cold -- and
// it rehashed every node at once as it grew: a submission of 160 ms at
// 700,000 keyed jobs and of 350 ms at 1.4 million, under the engine lock.
// Here the keys are spread over kShards tables by hash, so a growth moves
// only one shard's entries (and not their keys), and the shards grow at
// different calls.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace ax::internal {

class KeyMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The slot of `key`: the one whose entry matches the hash and for which
  // key_is(slot) holds, or kNone.
  template <typename KeyIs>
  uint32_t Find(std::string_view key, KeyIs key_is) const {
    const uint64_t h = HashOf(key);
    const Shard& shard = shards_[ShardOf(h)];
    const size_t i = Probe(shard, static_cast<uint32_t>(h), key_is);
    return i == kNowhere ? kNone : shard.entries[i].slot;
  }
  // REQUIRES: no entry for (key, slot); slot != kNone.
  void Insert(std::string_view key, uint32_t slot);
  // Removes the entry of (key, slot), if there is one.
  void Erase(std::string_view key, uint32_t slot);
  size_t size() const { return size_; }

 private:
  static constexpr int kShardBits = 8;
  static constexpr size_t kShards = size_t{1} << kShardBits;

  struct Entry {
    uint32_t tag = 0;       // the low 32 bits of the key's hash
    uint32_t slot = kNone;  // kNone: empty
  };
  struct Shard {
    std::vector<Entry> entries;  // a power of two in size, or empty
    size_t used = 0;
  };

  static uint64_t HashOf(std::string_view key) { return std::hash<std::string_view>{}(key); }
  // The top bits pick the shard; the low 32 (the tag) the position in it.
  static size_t ShardOf(uint64_t hash) { return hash >> (64 - kShardBits); }
  static constexpr size_t kNowhere = SIZE_MAX;
  // The position of the entry with this tag whose slot satisfies match, in
  // its probe run, or kNowhere.
  template <typename Match>
  static size_t Probe(const Shard& shard, uint32_t tag, Match match) {
    if (shard.entries.empty()) return kNowhere;
    const size_t mask = shard.entries.size() - 1;
    for (size_t i = tag & mask;; i = (i + 1) & mask) {
      const Entry& e = shard.entries[i];
      if (e.slot == kNone) return kNowhere;
      if (e.tag == tag && match(e.slot)) return i;
    }
  }
  static void Place(std::vector<Entry>& entries, Entry e);
  static void Grow(Shard& shard);

  std::array<Shard, kShards> shards_;
  size_t size_ = 0;
};

}  // namespace ax::internal
