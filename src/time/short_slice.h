// File: time/short_slice.h
//
// A thread's time slice under Linux's EEVDF CPU scheduler (6.12 on), and the
// spin it makes safe to yield.
//
// A worker asks to wake a little before its run's deadline (WakeMargin) and,
// in the wake-ups that come sooner, spins the rest of the way
// (SystemClock::WaitUntil). While it spins it holds its CPU, and a second
// worker woken there for its own deadline waits behind it: on the 2-vCPU VMs
// of docs/performance.md that wait set much of W3's p99. A spin that yields
// (sched_yield) lets the other worker run first. But a thread that yields
// goes behind every other runnable thread on its CPU for up to their slice
// (1.4 ms by default on those VMs): beside two CPU-bound processes, W3's
// median lateness went from 4 to 492 us. With a short slice of its own
// (0.1 ms), a yield moves the thread's virtual deadline on by that much only,
// so threads woken with slices as short go first and a busy thread with the
// default slice mostly does not (the same test: a median of 8 us). And a
// worker woken with a short slice may preempt a busy thread at once.
#pragma once

#include <cstdint>

namespace ax::internal {

// Asks the kernel for a slice of `ns` (0.1-100 ms) for the calling thread,
// keeping its policy and nice value. True when the kernel took it (read back:
// kernels before 6.12 ignore the request), and only then do the thread's
// spins in SystemClock::WaitUntil yield the CPU instead of pausing.
bool TakeShortSlice(int64_t ns);

// Whether the calling thread's spins yield (it took a short slice).
bool SpinsYield();

// The calling thread's slice in ns as the kernel reports it: 0 where it
// reports none (before 6.12; a real-time thread).
int64_t ThreadSlice();

}  // namespace ax::internal
