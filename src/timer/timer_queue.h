// The contract every timer structure of the engine meets (the hierarchical
// wheel in wheel.h, and the ordered-set reference in tests/timer used as an
// oracle). Documented here once; implementations repeat only what differs.
//
// Entries are dense uint32 ids chosen by the owner (the engine uses its job
// slot index). Deadlines are int64 nanoseconds on the engine clock. One owner
// thread; no locks inside.
//
//   void Insert(uint32_t id, int64_t deadline_ns);
//       REQUIRES: !Contains(id). A deadline in the past is allowed: it is due.
//   bool Remove(uint32_t id);             // false when absent
//   bool Contains(uint32_t id) const;
//   int64_t Deadline(uint32_t id) const;  // REQUIRES: Contains(id)
//   void Reschedule(uint32_t id, int64_t deadline_ns);
//       Remove + Insert: the entry takes a new place in insertion order.
//   int64_t NextDeadline();
//       A lower bound on the earliest deadline (INT64_MAX when empty): no entry
//       is due before it. May be earlier than the true earliest deadline
//       (e.g. a coarse slot's start, or for the wheel that start less its
//       load-ahead) but never later.
//   size_t PopExpired(int64_t now_ns, size_t max, std::vector<uint32_t>& out);
//       Removes and appends to `out` at most `max` ids whose deadline <= now,
//       ordered by (deadline, insertion order). If it returns fewer than
//       `max`, NextDeadline() > now afterwards -- or, for the wheel, it is in
//       the middle of loading a large slot, which it does a bounded piece per
//       call: then NextDeadline() is INT64_MIN, and the owner calls again.
//   size_t size() const;
#pragma once
