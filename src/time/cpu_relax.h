// CpuRelax: one step of a spin-wait. On x86 a `pause`, which lets the other
// hardware thread of the core run and spares the memory-order flush when
// the wait ends; elsewhere nothing.
#pragma once

namespace ax::internal {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace ax::internal
