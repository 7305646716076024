#include "time/short_slice.h"

#include <linux/sched.h>
#include <linux/sched/types.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ax::internal {
namespace {

thread_local bool spins_yield = false;

// glibc 2.36 has no wrappers for sched_getattr and sched_setattr.
bool GetAttr(sched_attr& a) { return syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) == 0; }

// The policies with slices; real-time threads have none.
bool Fair(uint32_t policy) {
  return policy == SCHED_NORMAL || policy == SCHED_BATCH || policy == SCHED_IDLE;
}

}  // namespace

bool TakeShortSlice(int64_t ns) {
  sched_attr a{};
  if (!GetAttr(a) || !Fair(a.sched_policy)) return false;
  a.size = sizeof a;
  a.sched_flags &= SCHED_FLAG_RESET_ON_FORK;  // the policy and nice as read
  a.sched_runtime = static_cast<uint64_t>(ns);
  if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) return false;
  spins_yield = ThreadSlice() == ns;
  return spins_yield;
}

bool SpinsYield() { return spins_yield; }

int64_t ThreadSlice() {
  sched_attr a{};
  return GetAttr(a) && Fair(a.sched_policy) ? static_cast<int64_t>(a.sched_runtime) : 0;
}

}  // namespace ax::internal
