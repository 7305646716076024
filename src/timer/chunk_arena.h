// ChunkArena: memory for the chunks of the engine's large, long-lived arrays
// (the job slab, the wheel's node table).
//
// A million pending jobs touch about 90 MB. Faulted in 4 KiB at a time that
// is some 23,000 page faults -- about a third of the cost of scheduling them
// on a virtual machine -- and random access to the records (cancel, change)
// misses the TLB on nearly every call. So once an array has outgrown
// kPlainBytes (or its own budget), its further chunks are carved one after another from large
// anonymous mappings aligned to 2 MiB and marked MADV_HUGEPAGE: the kernel
// backs them with transparent huge pages where it offers them, and faults
// them in only as they are touched, so RSS still follows use (to within two
// huge pages per array: the one being filled, and the one mapped in ahead,
// below). Small arrays (a scheduler with a few thousand jobs)
// stay on ordinary heap memory and cost nothing extra; their chunks are
// mapped in by one madvise each, not by a page fault per 4 KiB.
//
// Chunks are never returned one by one: an array keeps its chunks until it is
// destroyed, as before.
//
// The first touch of a 2 MiB page faults it in whole: cheaper in total than
// 512 small faults, but a pause of 3.5-5 ms on the test VM, in the caller
// (for the job slab: a submission, under the engine lock, so every other
// call and the firing waited too). So an arena keeps the huge page after the
// one being filled mapped in ahead by MapAhead's thread (map_ahead.h), and
// near the end of a block (or of the heap chunks) maps the next block early
// and has its first huge page mapped in. That costs at most one huge page of
// RSS ahead of use. The wheel's slot chunks, which the scheduler thread takes
// while it fires, do not come from here (docs/engine.md).
//
// Heap chunks have the same problem in small: the first write to each fresh
// 4 KiB page costs 12 µs on the test VM (0.6 ms for a 4,096-job chunk of the
// job slab, 24 ms in all for the heap chunks of the job slab and the node
// table), and a MapIn before it saves little there. So once an array has
// grown past its first chunk, its next heap chunk is allocated ahead and
// written to by MapAhead's thread (MapAhead::Touch); Get takes it if the
// thread is done, and allocates one on the spot if not (at most one heap
// chunk is held ahead). The helper takes longer to fault in a chunk of the
// job slab than a fast caller takes to fill one, so the job slab's heap
// budget is two chunks (SchedulerImpl::kJobPlainBytes).
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace ax::internal {

class ChunkArena {
 public:
  // Chunks of `chunk_bytes`, from the heap until `plain_bytes` are handed out.
  explicit ChunkArena(size_t chunk_bytes, size_t plain_bytes = kPlainBytes)
      : chunk_bytes_(chunk_bytes), plain_bytes_(plain_bytes) {}
  ~ChunkArena();
  ChunkArena(const ChunkArena&) = delete;
  ChunkArena& operator=(const ChunkArena&) = delete;

  // Uninitialised memory for one chunk, aligned to 64 bytes.
  void* Get();

  static constexpr size_t kPlainBytes = size_t{4} << 20;   // heap below this
  static constexpr size_t kBlockBytes = size_t{64} << 20;  // one mapping

 private:
  struct Mapping {
    void* base;
    size_t bytes;
  };
  // Whether the chunk that brings the bytes handed out to `handed_out` comes
  // from the heap.
  bool IsPlain(size_t handed_out) const {
    return handed_out <= plain_bytes_ || chunk_bytes_ > kBlockBytes / 4;
  }
  // A heap chunk: the one touched ahead if it is ready, else a fresh one.
  void* TakePlain();
  char* MapBlock();
  void EnterBlock();
  void MapAheadOfNext();
  void Ask(void* p, size_t bytes);

  const size_t chunk_bytes_;
  const size_t plain_bytes_;
  size_t handed_out_ = 0;  // bytes
  std::vector<void*> plain_;
  std::vector<Mapping> blocks_;
  // The current block: chunks are carved from next_ on; it is asked for up
  // to ahead_.
  char* next_ = nullptr;
  char* end_ = nullptr;
  char* ahead_ = nullptr;
  char* spare_ = nullptr;        // the next block, mapped early, its first huge page asked for
  bool asked_ = false;           // anything was asked of MapAhead
  void* plain_ahead_ = nullptr;  // the next heap chunk, being touched until done
  std::atomic<bool> plain_ahead_done_{false};
};

}  // namespace ax::internal
