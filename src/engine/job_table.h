// JobTable: the engine's job and run records, in chunked slabs so that a
// record never moves (workers call a job's task and read a run's stop flag
// through plain pointers while other jobs are added). All access is under the
// scheduler's mutex, except where scheduler_impl.h says otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ax/cron.h"
#include "ax/job_id.h"
#include "ax/job_info.h"
#include "ax/options.h"
#include "ax/task.h"
#include "ax/time.h"

#include "timer/chunked_array.h"

namespace ax::internal {

inline constexpr uint32_t kNoIndex = UINT32_MAX;

// Everything a job needs beyond the basics. Allocated only for jobs that have
// a key, options, a period or a parent, or that failed: a plain one-shot job
// with default options has none, which keeps a pending job small. It holds
// the job's callable, in the place of which the record points to it.
//
// The fields are grouped by the paths that read them, and the record starts
// on a cache line: a change (SetDelay, SetPeriod) touches its first line
// alone, and the scheduler thread's firing of a periodic job the first and
// the third, where in declaration order they were spread over 408 bytes
// (firing read six lines). W4: 23.9 -> 22.9 % of a core exact and 6.8 ->
// 5.7 % with 1 ms of slack, change latency unchanged within the noise
// (medians of 8 alternating runs).
//
// The records live in a slab of their own (SchedulerImpl::colds_), on huge
// pages once there are many: a change reaches a random job's cold record,
// and from the heap (4 KiB pages) that was a TLB miss as well as a cache miss.
struct alignas(64) JobCold {
  // Firing, changes, resolution.
  Duration period{0};   // kEvery
  Instant next_tick{};  // periodic: the schedule's next tick
  Instant retry_at{};
  Duration timeout{0};
  uint64_t runs = 0;
  int attempt = 1;             // attempt of the next or current run
  uint32_t active = 0;         // runs dispatched and not yet resolved
  uint32_t held = 0;           // runs dispatched whose callback has not returned
  int catch_up = 0;            // Misfire::kAll runs still owed
  bool retry_pending = false;  // periodic: the wheel holds a retry
  bool buffered = false;       // buffer_one: a tick waits for the run
  bool pause_after_run = false;
  Overlap overlap = Overlap::kSkip;
  Misfire misfire = Misfire::kSkip;

  // Starting a run.
  Task task;
  std::string key;
  Duration slow_after{0};

  // Runs under way and the outcomes of runs.
  std::vector<uint32_t> runs_active;  // run indices (overlap modes)
  uint64_t failures = 0;
  uint64_t skips = 0;
  int consecutive_failures = 0;
  int auto_pause_after = 10;
  Instant buffered_at{};

  RetryPolicy retry;
  std::optional<CronSchedule> cron;  // kCron
  Instant one_shot_at{};             // one-shot: deadline kept while paused
  int max_catch_up = 100;
  uint32_t index = kNoIndex;  // own slab index (SchedulerImpl::colds_)
  std::string last_error;
  std::string reason;
  std::optional<Instant> rearm_at;       // SetDelay on a running one-shot
  std::optional<Duration> resume_delay;  // SetDelay while paused

  JobId parent;                           // valid while waiting for the parent
  std::optional<Instant> release_at;      // child: run at this instant, or
  std::optional<Duration> release_delay;  //   this long after the parent's success,
                                          //   or else (cron) on its calendar
};

// A job's gate, for the cancel that takes no lock (SchedulerImpl::Cancel).
// Closed: everything about the job is under the engine lock. Open: a plain
// one-shot job waiting for its deadline (no cold record, no run, no parent or
// children, no observer), which any thread may cancel by compare-and-swap,
// open -> cancelling. The thread that wins owns the job's callable and
// releases it; it then queues the job for the lock's side, which takes it
// out of the wheel and retires it (SchedulerImpl::DrainCancels) and closes
// the gate. Under the lock a job is closed (Close) before anything about it
// changes; a cancelling job is treated as cancelled, and nothing on the
// lock's side touches its callable.
enum class Gate : uint32_t { kClosed = 0, kOpen = 1, kCancelling = 2 };

struct Job {
  // While the job is in the wheel: its deadline (the wheel's word,
  // JobDeadlines). While a job without a cold record has a run dispatched:
  // the run's index (SchedulerImpl::PlainRun). The two never overlap: such a
  // job is out of the wheel while it runs. While the record is free: the next
  // free record's index (JobSlab's free list).
  int64_t word = 0;
  // Without a cold record, the job's callable; with one, the record, which
  // holds the callable (SchedulerImpl::TaskOf). A job gets its cold record
  // only while no run is under way, so the callable never moves under one.
  union {
    Task task;
    JobCold* cold;
  };
  // The generation (30 bits, kGenBits) and the gate (2 bits), in one word so
  // that one compare-and-swap checks both: a stale id can never cancel the
  // record's next job.
  static constexpr int kGenBits = 30;
  static constexpr uint32_t kGenMask = (uint32_t{1} << kGenBits) - 1;
  static constexpr uint32_t GateWord(uint32_t gen, Gate g) {
    return gen << 2 | static_cast<uint32_t>(g);
  }
  uint32_t gen() const { return gen_gate.load(std::memory_order_relaxed) >> 2; }
  Gate gate() const { return static_cast<Gate>(gen_gate.load(std::memory_order_acquire) & 3); }
  // The next generation (never 0), with the gate closed. REQUIRES the lock,
  // and a closed gate.
  void NextGen() {
    const uint32_t next = (gen() + 1) & kGenMask;
    gen_gate.store(GateWord(next == 0 ? 1 : next, Gate::kClosed), std::memory_order_relaxed);
  }
  // Opens the gate: the job's fields, its callable first, are published to
  // the cancelling threads. REQUIRES the lock, and a closed gate.
  void Open() { gen_gate.store(GateWord(gen(), Gate::kOpen), std::memory_order_release); }
  // Closes an open gate; false when a cancel won it first (the gate says
  // cancelling until the lock's side has finished the cancel). A closed gate
  // stays closed without the lock: no locked instruction then.
  bool Close() {
    uint32_t w = gen_gate.load(std::memory_order_acquire);
    if (static_cast<Gate>(w & 3) == Gate::kOpen &&
        gen_gate.compare_exchange_strong(w, w & ~uint32_t{3}, std::memory_order_acquire)) {
      return true;
    }
    return static_cast<Gate>(w & 3) != Gate::kCancelling;
  }
  std::atomic<uint32_t> gen_gate{0};
  JobState state = JobState::kWaiting;
  JobKind kind = JobKind::kOnce;
  bool free = true;
  bool waits_parent : 1 = false;
  bool has_cold : 1 = false;
  // Without a cold record a job has at most one run, and these say where it
  // is: dispatched and not yet resolved, and its callback not yet returned.
  // A cold record keeps the counts instead (JobCold::active, held).
  bool run_active : 1 = false;
  bool run_held : 1 = false;
  bool has_children : 1 = false;  // SchedulerImpl::children_ lists some
  // Out of the wheel, handed ahead of its deadline (`word`, still) and
  // otherwise as it was (SchedulerImpl::ahead_).
  bool reserved : 1 = false;
  // Without a cold record: its run had started when a cancel stopped it
  // (JobInfo::runs).
  bool ran : 1 = false;

  Job() : task() {}
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() {
    if (!has_cold) task.~Task();  // a cold record is its slab's
  }
};
// A pending plain job costs this plus the wheel's 10 B
// (rss_bytes_per_pending): the cold record, the run and their counts share
// the place of other fields, so that a job and its timer take 40 bytes.
static_assert(sizeof(Job) == 40);

// A run's phase, decided by compare-and-swap: a worker takes kQueued ->
// kStarted (without the scheduler's lock for plain runs), a cancel or
// shutdown takes kQueued -> kDropped; whoever wins decides whether it starts.
enum RunPhase : uint8_t { kQueued, kStarted, kDropped };

struct Run {
  uint32_t index = kNoIndex;  // own slab index
  uint32_t job = kNoIndex;
  uint32_t gen = 0;
  int attempt = 1;
  Instant scheduled{};
  Task* task = nullptr;  // the job's task (job records never move)
  bool fast = false;     // no cold record, no observer: start without the lock
  std::atomic<bool> stop{false};
  std::atomic<uint8_t> phase{kQueued};
  bool resolved = false;  // outcome decided (returned, timed out, replaced, cancelled)
  bool slow_done = false;
  // Dropped before it started (a cancel, a replace): its hold on the job's
  // callable is let go then, so that a cancel destroys the callable at once,
  // not when a worker comes to the run; ReleaseRun leaves the job alone.
  bool let_go = false;
  // SetDelay on a running job without a cold record: run again at this
  // instant after this run. It goes to the cold record when the run is
  // resolved, when the callable may move.
  std::optional<Instant> rearm_at;
  Instant started_at{};
  Instant timeout_at = kInstantMax;
  Instant slow_at = kInstantMax;
};

// A slab of T: dense indices over a ChunkedArray (records never move, and
// huge pages once the slab is large), with a free list. Chunks hold
// 2^kChunkBits records.
//
// With kLink, a member of T that a free record does not use, the free list
// runs through the free records themselves (the next one's index in kLink),
// not through a stack of indices beside them. In W2's storm the workers
// forget 900,000 finished jobs under the engine lock; the stack grew by
// 3.6 MB of fresh pages as they did, and each new chunk of it woke the
// memory-mapping thread, which took the worker's vCPU while it held the lock
// (64 times in one drain, and 5 % of the drain's CPU for the mapping thread).
template <class T, int kChunkBits = 12, int64_t T::*kLink = nullptr>
class Slab {
 public:
  explicit Slab(size_t plain_bytes = ChunkArena::kPlainBytes) : records_(plain_bytes) {}
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  T& operator[](uint32_t i) { return records_[i]; }
  const T& operator[](uint32_t i) const { return records_[i]; }
  uint32_t size() const { return size_; }
  // Starts loading record i. REQUIRES: i < size().
  void Prefetch(uint32_t i) const { records_.Prefetch(i); }
  // Index of a fresh or recycled record (the caller resets its fields).
  uint32_t Allocate() {
    if constexpr (kLink != nullptr) {
      if (free_count_ > 0) {
        const uint32_t i = free_head_;
        free_head_ = static_cast<uint32_t>(records_[i].*kLink);
        --free_count_;
        return i;
      }
    } else if (free_count_ > 0) {
      return free_[--free_count_];
    }
    if (size_ == records_.size()) [[unlikely]] {
      records_.EnsureIndex(size_);
      addressable_.store(records_.size(), std::memory_order_release);
    }
    return size_++;
  }
  // Lets other threads Peek while the owner allocates.
  void AllowPeek() { records_.ReserveAll(); }
  // Record i, from any thread without the owner's lock, or null when it was
  // never allocated. Its fields are the owner's but for those that say
  // otherwise (atomics). REQUIRES AllowPeek().
  T* Peek(uint32_t i) const {
    if (i >= addressable_.load(std::memory_order_acquire)) return nullptr;
    return &records_.Unmoving(i);
  }
  void Release(uint32_t i) {
    if constexpr (kLink != nullptr) {
      records_[i].*kLink = free_head_;
      free_head_ = i;
    } else {
      free_.EnsureIndex(free_count_);
      free_[free_count_] = i;
    }
    ++free_count_;
  }
  size_t live() const { return size_ - free_count_; }

 private:
  ChunkedArray<T, kChunkBits> records_;
  // The free list, a stack in fixed chunks kept at their peak: a doubling
  // vector copied its contents and faulted in fresh pages under the engine
  // lock each time it grew (a pause of about a millisecond that W3 met at the
  // same moment in every run), and a deque allocated and freed a block each
  // time the stack crossed a block boundary (runs do, at the fire rate).
  ChunkedArray<uint32_t> free_;  // without kLink
  uint32_t free_head_ = 0;       // with kLink: the last released
  uint32_t free_count_ = 0;
  uint32_t size_ = 0;
  std::atomic<size_t> addressable_{0};  // records_.size(), for Peek
};

// Free jobs are listed through their `word`.
using JobSlab = Slab<Job, 12, &Job::word>;

// Where the job wheel keeps its deadlines: in the job records themselves
// (Job::word), which the wheel's callers have loaded anyway.
class JobDeadlines {
 public:
  explicit JobDeadlines(JobSlab* jobs) : jobs_(jobs) {}
  int64_t& operator[](uint32_t id) { return (*jobs_)[id].word; }
  const int64_t& operator[](uint32_t id) const { return (*jobs_)[id].word; }
  void Ensure(uint32_t /*id*/) {}  // the job's record exists before its timer
  void Prefetch(uint32_t id) const { jobs_->Prefetch(id); }
  size_t MemoryBytes() const { return 0; }  // counted with the jobs

 private:
  JobSlab* jobs_;
};

}  // namespace ax::internal
