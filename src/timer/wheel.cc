#include "timer/wheel_impl.h"

namespace ax::internal {

template class BasicTimerWheel<OwnDeadlines>;

}  // namespace ax::internal
