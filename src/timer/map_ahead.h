// MapAhead: maps in memory that its owner is about to write, on a background
// thread, so that the owner's first write does not stop for a page fault.
//
// On the test VM the first touch of a 2 MiB transparent huge page costs
// 3.5-5 ms (the hypervisor backs it). Scheduling a million jobs met that
// about 30 times, each time in a submission holding the engine lock, so
// every other call and the firing waited too. ChunkArena asks for the huge
// page after the one it is filling (chunk_arena.h).
//
// Fresh 4 KiB pages are another matter there: after a MapIn (madvise) the
// first write from user mode still costs 7-9 µs of a fault's 12, while a
// page some thread has written to costs nothing more. So Touch writes to the
// pages of memory its owner hands over until the thread is done.
//
// One process-wide thread, started at the first request and stopped by
// StopIdle (a scheduler's end: SPEC 2.11, no thread outlives it) when no
// other owner's requests are queued; the next request starts it again.
// Requests are served in order. If the thread cannot start, requests are
// dropped and the owner faults its pages in as before.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace ax::internal {

class MapAhead {
 public:
  // Queues [p, p + bytes) to be mapped in (MapIn) for `owner`. Never blocks
  // on the mapping itself.
  static void Request(const void* owner, void* p, size_t bytes);
  // Queues a write of one byte at each of `pages` (an address in each 4 KiB
  // page to map in) for `owner`, then sets *done (release). Until the owner
  // reads *done as true (acquire), the memory is the thread's: the owner must
  // not touch it. A request the thread cannot serve (it did not start) sets
  // *done at once.
  static void Touch(const void* owner, std::vector<void*> pages, std::atomic<bool>* done);
  // Drops the owner's queued requests (their done flags stay false) and
  // waits for the one in progress, if it is the owner's. Afterwards the
  // thread does not touch the owner's memory: call it before freeing that
  // memory.
  static void Forget(const void* owner);
  // Waits until every request queued so far has been served.
  static void Drain();
  // Ends and joins the thread if it has nothing queued or under way; with
  // another owner's requests, leaves it to them. Call it once the owners
  // that are ending have been destroyed.
  static void StopIdle();
  // A member whose destructor calls StopIdle: declared before the members
  // that own memory MapAhead serves, it ends after them.
  struct StopWhenIdle {
    StopWhenIdle() = default;
    StopWhenIdle(const StopWhenIdle&) = delete;
    StopWhenIdle& operator=(const StopWhenIdle&) = delete;
    ~StopWhenIdle() { StopIdle(); }
  };
};

}  // namespace ax::internal
