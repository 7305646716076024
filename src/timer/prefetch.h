// PrefetchForWrite: starts loading the cache line at `p`, to be written.
#pragma once

namespace ax::internal {

// Not __builtin_prefetch alone: GCC 12 takes a function whose only effect is
// a prefetch for a pure one and deletes the calls to it, so a helper such as
// ChunkedArray::Prefetch compiled to nothing wherever it was called from
// another small function (the wheel's Prefetch, the job slab's). The empty
// asm statement, with the address as its input, is an effect the optimiser
// keeps, and costs no instruction.
inline void PrefetchForWrite(const void* p) {
  __builtin_prefetch(p, 1);
  asm volatile("" : : "r"(p));
}

}  // namespace ax::internal
