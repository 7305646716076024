// ReferenceQueue: the timer_queue.h contract on an ordered set. O(log n) per
// operation; kept as the test oracle for the wheel.
#pragma once

#include <cassert>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

namespace ax::internal {

class ReferenceQueue {
 public:
  explicit ReferenceQueue(int64_t /*now_ns*/ = 0) {}

  void Insert(uint32_t id, int64_t deadline_ns) {
    if (id >= slots_.size()) slots_.resize(id + 1);
    assert(!slots_[id].present);
    slots_[id] = {true, deadline_ns, next_seq_};
    set_.emplace(deadline_ns, next_seq_++, id);
  }
  bool Remove(uint32_t id) {
    if (!Contains(id)) return false;
    set_.erase({slots_[id].deadline, slots_[id].seq, id});
    slots_[id].present = false;
    return true;
  }
  bool Contains(uint32_t id) const { return id < slots_.size() && slots_[id].present; }
  int64_t Deadline(uint32_t id) const { return slots_[id].deadline; }
  void Reschedule(uint32_t id, int64_t deadline_ns) {
    Remove(id);
    Insert(id, deadline_ns);
  }
  int64_t NextDeadline() const {
    return set_.empty() ? std::numeric_limits<int64_t>::max() : std::get<0>(*set_.begin());
  }
  size_t PopExpired(int64_t now_ns, size_t max, std::vector<uint32_t>& out) {
    size_t n = 0;
    while (n < max && !set_.empty() && std::get<0>(*set_.begin()) <= now_ns) {
      uint32_t id = std::get<2>(*set_.begin());
      set_.erase(set_.begin());
      slots_[id].present = false;
      out.push_back(id);
      ++n;
    }
    return n;
  }
  size_t size() const { return set_.size(); }

 private:
  struct Slot {
    bool present = false;
    int64_t deadline = 0;
    uint64_t seq = 0;
  };
  std::set<std::tuple<int64_t, uint64_t, uint32_t>> set_;
  std::vector<Slot> slots_;
  uint64_t next_seq_ = 0;
};

}  // namespace ax::internal
