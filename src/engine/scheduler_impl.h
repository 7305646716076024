// SchedulerImpl: the engine behind ax::Scheduler.
//
// Ground rules
// - One mutex (mu_) guards the job table, both timer wheels, the key map and
//   the counters. Lock scopes are short and never contain user code: tasks
//   run, and are destroyed, outside it; observer events are queued under it
//   and delivered by the EventQueue thread.
// - The scheduler thread (Loop) sleeps on the clock until the earliest
//   deadline (`armed_`); a call that inserts an earlier one signals it. It pops
//   due jobs in batches, decides their runs under the lock, and hands the run
//   numbers to the WorkerPool after unlocking, so it never waits for a worker.
//   Jobs due within hand_ahead it hands ahead to idle workers instead, which
//   sleep until the deadline and fire them under the lock (ahead_; dispatch.cc).
// - A job's logical state (Running, the attempt's outcome) is separate from
//   its physical runs (`held`): a timed-out run is resolved at once, while its
//   callback may still be executing; the task is released only when no
//   callback holds it.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "ax/scheduler.h"

#include "engine/cancel_marks.h"
#include "engine/chunked_fifo.h"
#include "engine/event_queue.h"
#include "engine/fast_mutex.h"
#include "engine/job_table.h"
#include "engine/key_map.h"
#include "engine/worker_pool.h"
#include "time/cpu_relax.h"
#include "time/tsc_estimate.h"
#include "timer/map_ahead.h"
#include "timer/wheel.h"

namespace ax::internal {

// now - scheduled in ns, saturated: a job due at kInstantMin is later than
// int64 counts.
inline int64_t LatenessNs(Instant now, Instant scheduled) {
  int64_t out = 0;
  if (__builtin_sub_overflow(ToUnixNanos(now), ToUnixNanos(scheduled), &out)) {
    return now > scheduled ? INT64_MAX : INT64_MIN;
  }
  return out;
}

class SchedulerImpl final : public Scheduler {
 public:
  explicit SchedulerImpl(SchedulerOptions options);
  ~SchedulerImpl() override;

  Result<JobId> At(Instant when, Task task, JobOptions options) override;
  Result<JobId> After(Duration delay, Task task, JobOptions options) override;
  Result<JobId> At(Instant when, Task task) override;
  Result<JobId> After(Duration delay, Task task) override;
  Result<JobId> Every(Duration period, Task task, JobOptions options) override;
  Result<JobId> Every(Duration period, Instant first, Task task, JobOptions options) override;
  Result<JobId> Cron(std::string_view expr, std::string_view tz, Task task,
                     JobOptions options) override;
  Result<JobId> Cron(std::string_view expr, std::string_view tz, Instant first, Task task,
                     JobOptions options) override;
  Status RegisterHandler(std::string type, Handler handler) override;
  Result<Task> BindHandler(std::string_view type, std::string payload) const override;

  Status Cancel(JobRef job) override;
  Status Pause(JobRef job) override;
  Status Resume(JobRef job) override;
  Status SetDelay(JobRef job, Duration delay) override;
  Status SetPeriod(JobRef job, Duration period) override;

  Result<JobInfo> Info(JobRef job) const override;
  Result<JobId> Find(std::string_view key) const override;
  std::vector<JobInfo> List(std::optional<JobState> state, size_t limit) const override;
  std::vector<Event> DeadLetters() const override;
  Stats GetStats() const override;
  Instant Now() const override { return clock_->Now(); }
  bool WaitIdle(Duration timeout) override;
  bool WaitDispatched(Duration timeout) override;
  ShutdownReport Shutdown(Duration timeout) override;
  ShutdownReport Drain(Duration timeout) override;

 private:
  using Lock = std::unique_lock<FastMutex>;

  // Takes mu_, trying a while before sleeping on it: the lock is held for
  // short stretches, and a futex sleep and wake-up costs several microseconds
  // (it was the tail of every call, W4's change_ns_p99). A caller tries
  // kCallerSpins times, the engine's own threads (the scheduler thread, the
  // workers) kEngineSpins: on the PVM host of 2026-12-07, 128 tries for
  // callers took W4's change p99 from 2.4 to 2.0 µs (6 pairs, lower in 5),
  // and for the engine's threads too they cost W2 and W3 CPU
  // (docs/performance-history.md, "Changed on 2026-12-07 (16:40 UTC on)").
  // The first try is inlined into every caller: once SubmitOnce grew (FileNew),
  // GCC stopped inlining Acquire there, and the call cost W1's `After` 1.3-1.75
  // ns of 33 (33.4 -> 31.65 and 33.45 -> 32.2 ns, 16 pairs each).
  [[gnu::always_inline]] Lock Acquire() const {
    Lock l(mu_, std::defer_lock);
    if (!l.try_lock()) [[unlikely]] {
      Relock(l);
    }
    return l;
  }
  static constexpr int kCallerSpins = 128;
  static constexpr int kEngineSpins = 32;
  // The scheduler thread's loop calls Relock(l, sleepers_, kEngineSpins).
  void Relock(Lock& l) const {
    if (WorkerPool::InWorker()) {
      Relock(l, worker_sleepers_, kEngineSpins);
    } else {
      Relock(l, sleepers_, kCallerSpins);
    }
  }
  // Counts itself in `sleepers` while it sleeps on mu_.
  static void Relock(Lock& l, std::atomic<int>& sleepers, int spins) {
    for (int i = 0; i < spins; ++i) {
      if (l.try_lock()) return;
      CpuRelax();
    }
    sleepers.fetch_add(1, std::memory_order_relaxed);
    l.lock();
    sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
  // The scheduler thread, about to take mu_ again at once for more work,
  // first lets in the threads asleep on it (LetSleepersIn in dispatch.cc);
  // a worker in a storm, those that are not workers.
  void LetSleepersIn(bool workers_too) const;

  // How a new job is first scheduled.
  struct Plan {
    JobKind kind = JobKind::kOnce;
    Instant at{};                   // once: deadline; periodic: first tick
    std::optional<Duration> delay;  // once via After: counts from the parent
    Duration period{0};
    std::optional<CronSchedule> cron;
    bool first_given = false;  // periodic: `at` came from the caller
  };

  // ---- submission
  Result<JobId> Submit(Plan& plan, Task& task, const JobOptions& options);
  Result<JobId> SubmitOnce(Instant at, const Duration* delay, Task& task);
  [[gnu::always_inline]] uint32_t NewJob(JobKind kind, Task& task);
  bool IsFull() const;
  [[gnu::noinline]] bool FullAfterDrain();
  Status Full() const;
  static Status NegativeDelay(Duration delay);
  Status ValidateOptions(const JobOptions& o) const;
  Result<uint32_t> ParentOf(const JobOptions& options);
  Result<std::optional<JobId>> ClaimKey(const JobOptions& options);
  static Status PlanFrom(Instant now, Plan& plan);
  void WaitForParent(uint32_t slot, uint32_t parent, const Plan& plan);
  void FirstSchedule(uint32_t slot, const Plan& plan, Instant now);
  void ApplySubmitMisfire(uint32_t slot, Instant first, Instant now);
  // Ticks examined one by one before a cron job's missed ticks are skipped in
  // one jump (FirePeriodic) or a window before now (ApplySubmitMisfire).
  static constexpr uint64_t kMaxTickScan = 100'000;
  struct RecentTicks {
    std::vector<Instant> ticks;  // the newest `keep`, oldest first
    uint64_t count = 0;          // ticks found in the window
    uint64_t before = 0;         // ticks estimated between `from` and the window
    Instant next = kInstantMax;  // the first tick after now
  };
  RecentTicks RecentTicksOf(const Job& j, Instant from, Instant now, size_t keep,
                            int64_t spacing) const;

  // ---- lookups (REQUIRES mu_)
  Result<uint32_t> Resolve(const JobRef& ref) const;
  // A job's state as callers see it: Cancelled once a cancel without the
  // lock has won its gate, before DrainCancels has counted it.
  static JobState StateOf(const Job& j) {
    return j.gate() == Gate::kCancelling ? JobState::kCancelled : j.state;
  }
  // A job's cold record: null for one without (ColdOf), made if need be
  // (Cold; the callable and the counts of a job without one move into it, so
  // no run may be under way); and the callable, wherever it is.
  static JobCold* ColdOf(const Job& j) { return j.has_cold ? j.cold : nullptr; }
  static Task& TaskOf(Job& j) { return j.has_cold ? j.cold->task : j.task; }
  JobCold& Cold(Job& j);
  void DropCold(Job& j);
  // A job's runs dispatched and not yet resolved (Active), and those whose
  // callback has not returned (Held); the run of a job without a cold record
  // (kNoIndex if none).
  uint32_t Active(const Job& j) const { return j.has_cold ? ColdOf(j)->active : j.run_active; }
  uint32_t Held(const Job& j) const { return j.has_cold ? ColdOf(j)->held : j.run_held; }
  void AddHeld(Job& j, int delta);
  void AddActive(Job& j, int delta);
  static uint32_t PlainRun(const Job& j) {
    return j.run_active ? static_cast<uint32_t>(j.word) : kNoIndex;
  }
  uint32_t FindKey(std::string_view key) const;  // KeyMap::kNone if absent
  std::string KeyOf(const Job& j) const;
  std::string IdText(uint32_t slot) const;
  JobInfo MakeInfo(uint32_t slot) const;

  // ---- timers (REQUIRES mu_)
  // Puts a job in the wheel at `deadline`, or moves it there (and takes it
  // back if it was handed ahead); Disarm takes it out of both.
  void Arm(uint32_t slot, Instant deadline);
  void Disarm(uint32_t slot) {
    Wheel().Remove(slot);
    jobs_[slot].reserved = false;
  }
  // Whether a job waits for a deadline (in the wheel, still to be filed
  // there, or handed ahead): then Job::word holds it.
  bool Pending(uint32_t slot) const {
    return wheel_.Contains(slot) || jobs_[slot].reserved ||
           std::find(new_.begin(), new_.begin() + new_count_, slot) != new_.begin() + new_count_;
  }
  // The job wheel, the jobs SubmitOnce left to file filed first: every use
  // of the wheel but SubmitOnce's goes through here.
  BasicTimerWheel<JobDeadlines>& Wheel() {
    if (new_count_ != 0) [[unlikely]] {
      FileNew();
    }
    return wheel_;
  }
  void FileNew();
  void ArmRunTimer(uint32_t run);
  // Makes the scheduler thread wake for a deadline at `ns`, within the slack.
  void WakeBy(int64_t ns) { WakeFor(FromUnixNanos(WithSlack(ns))); }
  // Wakes the scheduler thread by `at` if it sleeps past it (no slack).
  void WakeFor(Instant at) {
    const int64_t ns = ToUnixNanos(at);
    if (ns < armed_) {
      armed_ = ns;
      interrupt_.Signal();
    }
  }
  // The latest instant the scheduler may wake for a deadline at `ns`.
  int64_t WithSlack(int64_t ns) const {
    const int64_t slack = options_.timer_slack.count();
    return ns > INT64_MAX - slack ? INT64_MAX : ns + slack;
  }
  std::optional<Instant> NextTick(const Job& j, Instant after) const;

  // ---- the scheduler thread
  void Loop();
  // Fires the jobs due by `now` (up to `batch`) and the run timers; the
  // scheduler thread's pass, or a worker's in a storm (PullDue). REQUIRES mu_.
  size_t ProcessDue(Instant now, bool jobs, std::vector<uint32_t>& dispatch, size_t batch);
  void Fire(uint32_t slot, Instant due, Instant now, std::vector<uint32_t>& dispatch);
  void FirePeriodic(uint32_t slot, Instant due, Instant now, std::vector<uint32_t>& dispatch);
  void Skip(uint32_t slot, Instant tick, uint64_t count, std::string_view why, Instant now);
  void Overlapping(uint32_t slot, Instant tick, Instant now, std::vector<uint32_t>& dispatch);
  void FireRunTimer(uint32_t run, Instant now);
  uint32_t NewRun(uint32_t slot, int attempt, Instant scheduled);
  // Forgets the retired jobs past the retention, and the oldest beyond `keep`.
  void PurgeRetired(Instant now, size_t keep);

  // ---- jobs handed ahead of their deadlines (dispatch.cc, "Handing ahead")
  static constexpr int kUnclaimed = -1;
  static constexpr int kHeld = -2;  // the scheduler thread starts it itself
  struct Ahead {
    int64_t at;  // the job's deadline
    uint64_t seq;
    uint32_t slot;
    uint32_t gen;
    int owner;  // the worker asleep until `at`, kUnclaimed or kHeld
  };
  // Takes the jobs due within hand_ahead out of the wheel into ahead_.
  // REQUIRES mu_.
  // Returns true when it stopped at kAheadChunk with more to hand.
  bool ReserveAhead(int64_t now_ns);
  // Fires a job handed ahead, unless it was taken back. REQUIRES mu_.
  void StartAhead(const Ahead& a, Instant now, std::vector<uint32_t>& dispatch);
  // A worker with nothing queued claims the earliest unclaimed job of
  // ahead_, sleeps until its deadline and starts it; true if it did anything.
  bool RunAhead(int worker);
  // The entry RunAhead starts in place of `own`, or end(). REQUIRES mu_.
  std::deque<Ahead>::iterator ChooseStart(const std::deque<Ahead>::iterator& own, Instant now);
  bool HasUnclaimed() const;
  // Jobs handed ahead wait with no worker asleep for them while one is
  // blocked on the queue, which Nudge would wake. REQUIRES mu_. Who makes an
  // entry unclaimed sets unclaimed_ before it reads Blocked() here; a worker
  // counts itself in Blocked() before it reads unclaimed_ (the pool's
  // has_work): one of the two sees the other.
  bool WantsNudge() const { return claimers_ == 0 && pool_->Blocked() > 0 && HasUnclaimed(); }
  // The worker whose claim is the latest, or -1. REQUIRES mu_.
  int LatestClaimer() const;

  // ---- runs (worker threads)
  // In a storm, a worker with nothing queued fires the next due jobs itself
  // and runs them (dispatch.cc, "Storms"); true if it did anything.
  bool PullDue(int worker);
  // mu_ for a storm's take: spins rather than sleeps while the holder runs
  // on another CPU, for at most kTakeSpin (dispatch.cc).
  Lock AcquireForTake();
  // Most workers that fire a storm together: one per CPU.
  int StormWorkers() const;
  void SetStorm(int64_t until);  // REQUIRES mu_
  void Execute(Run& r, int worker);
  // Resolves the worker's finished plain runs under the lock; with
  // `may_defer`, only if the lock is free (kDeferFlush in dispatch.cc).
  void Flush(int worker, bool may_defer = false);
  // Flush in two halves, for a caller that holds the lock anyway (PullDue):
  // the runs resolved, REQUIRES mu_; then, the lock let go, their captures
  // destroyed and the runs counted out.
  uint64_t ResolveFinished(int worker);
  void FinishResolved(int worker, uint64_t n);
  // Runs user code; `worker` is the worker whose finished plain runs may wait
  // for a Flush meanwhile (-1: none).
  Status Invoke(Task& task, const RunContext& ctx, int worker);
  bool Start(uint32_t run, Task*& task, std::optional<RunContext>& ctx);
  // Starts a queued run (Start) in the hold of mu_ that `l` has, runs its
  // callback without the lock and resolves it: the slow path of Execute.
  void RunLocked(uint32_t run, Lock& l);
  // Decides the outcome of an attempt. REQUIRES mu_.
  void Resolve(uint32_t run, const Status& status, Instant now);
  void ResolveSuccess(uint32_t slot, Instant now);
  void ResolveFailure(uint32_t slot, const Run& r, const Status& status, Instant now);
  void AfterOccurrence(uint32_t slot, Instant now);
  void ReleaseRun(uint32_t run, Task& released);
  // Resolves and releases a plain one-shot job's successful run, if it is
  // one; false (nothing done) otherwise. REQUIRES mu_.
  bool CompletePlain(Run& r, Instant now, Task& released);
  void FinishHeld(Task& released);
  void RunsGone(uint64_t n);
  int64_t NextWake(bool jobs);
  // Runs started and not finished (flushed), over all workers.
  uint64_t Executing() const;
  // Wakes the waiters on idle_cv_ once no run executes (shutting down: at
  // most one, a callback's own). REQUIRES mu_.
  void NotifyIfNoneExecuting();
  // Shutdown and Drain: nothing new starts, then the wait (SPEC 2.11).
  ShutdownReport Stop(Duration timeout, bool ask_runs_to_stop);

  // ---- state changes (REQUIRES mu_)
  void SetState(Job& j, JobState state) {
    --by_state_[static_cast<size_t>(j.state)];
    ++by_state_[static_cast<size_t>(state)];
    j.state = state;
  }
  // Cancel's rare ends (scheduler_impl.cc), and any cancel but that of an
  // open job (Gate): CancelLocked.
  Status CancelWon(Job* j, uint32_t slot);
  Status WakeToDrain();
  Status CancelLocked(JobRef ref);
  // Finishes up to `max` of the cancels queued by Cancel: the jobs leave
  // the wheel, are counted cancelled and retired, and their gates close.
  // Returns how many. REQUIRES mu_.
  size_t DrainCancels(Instant now, size_t max);
  // The scheduler thread's share of it (Loop); true when more are queued.
  bool MaybeDrainCancels(Instant now);
  // Puts a job that has just become terminal into retired_ (forgotten after
  // the retention, or at once beyond max_retained).
  void Retire(uint32_t slot, Instant now) { Remember({slot, jobs_[slot].gen(), now}); }
  void Terminate(uint32_t slot, JobState state, std::string reason, Instant now, Task& released);
  // The children waiting for the job, taken out of children_.
  std::vector<JobId> TakeChildren(uint32_t slot);
  void ReleaseChildren(uint32_t slot, Instant now);
  void EndChildren(uint32_t slot, JobState parent_state, Instant now, std::vector<Task>& released);
  void StopActiveRuns(Job& j);
  // Drops a run handed to a worker and not started, which then never starts
  // and lets its callable go; false when it has started.
  bool DropQueued(Job& j, uint32_t run);
  // Takes a resolved run out of its job's active runs.
  void ForgetRun(Job& j, uint32_t run);
  Event MakeEvent(EventType type, uint32_t slot, Instant now) const;
  void Emit(Event e);
  bool WaitFor(Duration timeout, bool runs_too);

  // Finished plain runs of each worker, resolved together under one lock.
  struct Finished {
    Run* run;
    Status status;
  };
  // One cache line (or more) per worker: the vectors' headers side by side
  // were written by two workers on every run, and the line bounced between
  // their cores; so did one shared count of the runs executing.
  struct alignas(64) WorkerLocal {
    std::vector<Finished> finished;
    std::vector<Task> released;  // Flush's, kept for its capacity
    // Plain runs this worker started and has not flushed yet. Written by
    // the worker alone (raised in Execute, lowered in Flush under mu_), so
    // with a plain store, not a locked read-modify-write; read by
    // Executing().
    std::atomic<uint64_t> executing{0};
    // Handing ahead: the deadline this worker sleeps until (INT64_MAX: none;
    // under mu_), what wakes it before, and the runs of the job it starts.
    int64_t claim_at = INT64_MAX;
    Interrupt wake;
    std::vector<uint32_t> dispatch;
    std::vector<Run*> pulled;  // PullDue's runs, and how many it takes next
    size_t pull = 16;
    bool pulling = false;        // running PullDue's runs
    LatenessHistogram lateness;  // of the runs in `finished`
  };

  // First, so last to go: the memory-mapping thread ends after the slabs
  // and wheels it maps memory for (SPEC 2.11).
  MapAhead::StopWhenIdle stop_map_ahead_;

  // Constant after construction (or, for stopping_runs_, written once), and
  // read by every run: kept off the cache lines that mu_ and the counters
  // below dirty all the time (sharing one with mu_, clock_ missed on every
  // run in a W2 profile).
  const SchedulerOptions options_;
  const std::shared_ptr<Clock> clock_;
  // A manual clock jumps when a test moves it: a cancel without the lock is
  // drained at once (Cancel), so that its retention starts at the
  // instant of the cancel, as on the locked path.
  const bool manual_clock_;
  // The system clock's counter estimate, read in place (null on any other
  // clock): `After` makes no virtual call, nor three more, around its
  // counter read.
  TscEstimate* const counter_;
  Instant NowOrLater() const {
    return counter_ != nullptr ? FromUnixNanos(counter_->NowOrLater()) : clock_->NowOrLater();
  }
  Instant NowApprox() const {
    return counter_ != nullptr ? FromUnixNanos(counter_->NowApprox()) : clock_->NowApprox();
  }
  std::unique_ptr<EventQueue> events_;      // null without an observer
  std::unique_ptr<WorkerLocal[]> local_;    // [options_.workers]; owned by that worker
  std::atomic<bool> stopping_runs_{false};  // shutdown: nothing new starts

  // The cancels without the lock (Cancel), marked for the lock's side.
  // The scheduler thread drains them once a burst of cancels is over (the
  // count of marks has not moved for kDrainQuiet), once the first has
  // waited kDrainAge, or once kDrainBacklog (or half the slab) were made,
  // kDrainBatch at a time (MaybeDrainCancels). Until then
  // the job's gate tells that it is cancelled (StateOf), and the counts are
  // corrected by the backlog; the job's record is reused only after.
  static constexpr size_t kDrainBatch = 4096;
  static constexpr Duration kDrainQuiet = std::chrono::milliseconds(2);
  static constexpr Duration kDrainAge = std::chrono::seconds(5);
  static constexpr uint64_t kDrainBacklog = uint64_t{1} << 20;
  CancelMarks cancels_;

  alignas(64) mutable FastMutex mu_;
  // The CPU of the worker holding mu_ for a storm's take, else -1; beside
  // mu_, as the workers spinning for a take read both (AcquireForTake).
  std::atomic<int> take_cpu_{-1};
  // Protected by mu_.
  // Huge pages from the third chunk of 4,096 records (8,192 jobs, 320 KB),
  // not from 1 MiB: a heap chunk (160 KB, 40 small pages) that MapAhead's
  // thread has not finished touching is faulted in by the caller, under the
  // lock, while a huge page (52,000 records) is mapped in ahead in about
  // 0.2 ms. W1: 61.4 against 62.2 B a pending job (14 alternating pairs,
  // lower in 13), 37.3 against 38.0 ns a call (lower in 8: within the
  // noise). A scheduler past 8,192 jobs thus holds up to two huge pages
  // ahead of its records (ChunkArena). The runs, the free lists and the
  // wheel's arrays keep 4 MiB: at 1 MiB W2 drained 6 % slower.
  static constexpr size_t kJobPlainBytes = size_t{2} * 4096 * sizeof(Job);
  // Cold records (Cold, DropCold), declared before jobs_, whose records
  // point into it. Chunks of 256 (96 KB), on huge pages past 1 MiB (2,730
  // records): from the heap, a change reaching a random job's cold record
  // missed the TLB too. W4 (20,000 cold records), 30 alternating pairs:
  // change p50 lower in 28 (596 -> 456, 581 -> 476, 616 -> 521 ns by set);
  // its p99 lower in 18, within the noise. Past a smaller threshold a
  // scheduler with a few hundred periodic jobs holds two huge pages ahead.
  static constexpr size_t kColdPlainBytes = size_t{1} << 20;
  Slab<JobCold, 8> colds_{kColdPlainBytes};
  JobSlab jobs_{kJobPlainBytes};
  // Small chunks: at most kMaxHeld runs are out at a time, and the first
  // fire should not have to fault in a quarter of a megabyte.
  Slab<Run, 8> runs_;
  BasicTimerWheel<JobDeadlines> wheel_;  // job slot -> next deadline; use Wheel()
  // New plain one-shot jobs (SubmitOnce), their deadlines in Job::word, not
  // yet in the wheel: filed in order kNewBatch at a time, or before any other
  // use of the wheel (Wheel()), so that no call sees the difference. Filed
  // one a call, the insert was 17 ns of W1's 41-ns `After` (a throwaway
  // without it took 24); filed in one loop, about 9 (W1: 43.3 -> 35.4 ns,
  // 10 alternating pairs, lower in 10). Batches of 16, 64 and 256 did the
  // same; 16 keeps the call that files them short (about 0.2 us).
  static constexpr size_t kNewBatch = 16;
  std::array<uint32_t, kNewBatch> new_{};
  size_t new_count_ = 0;
  TimerWheel run_wheel_;  // run -> its timeout or slow threshold
  // The children waiting for a parent (Job::has_children), by its slot.
  absl::flat_hash_map<uint32_t, std::vector<JobId>> children_;
  KeyMap keys_;
  std::unordered_map<std::string, Handler, std::hash<std::string>> handlers_;
  struct Retired {
    uint32_t slot;
    uint32_t gen;
    Instant at;
  };
  void Remember(Retired r);
  // FIFO by `at`. Chunked, not a vector: at 20,000 completions a second a
  // doubling vector copied megabytes and faulted fresh pages under mu_ every
  // few seconds, and those pauses were W3's p99.9.
  ChunkedFifo<Retired> retired_;
  Instant cancels_seen_ = kInstantMax;   // when the scheduler thread saw the first marked
  Instant cancels_moved_ = kInstantMax;  // when it saw the count of marks move last
  uint64_t cancels_marked_ = 0;          // the count it saw then
  uint64_t cancels_base_ = 0;            // the count before the burst
  bool cancels_draining_ = false;        // taking the marks there are
  std::vector<uint32_t> draining_;       // scratch of DrainCancels
  std::vector<Event> dead_letters_;
  // Lists a dead letter, the oldest dropped beyond max_dead_letters.
  void AddDeadLetter(const Event& dead);
  // Callables let go under mu_ where no caller takes them (the children of a
  // job that died in a run): destroyed once the lock is let go (TakeDoomed).
  std::vector<Task> doomed_;
  // What mu_'s holder lets go of, to destroy once it has let go of mu_ too:
  // those callables, and the buffer of a storm's slot the wheel has fired
  // (24 MB for W2's million jobs, whose freeing held the lock 1.6-2.3 ms).
  struct Doomed {
    std::vector<Task> tasks;
    std::vector<NearEntry> drained;
  };
  Doomed TakeDoomed() { return {std::exchange(doomed_, {}), Wheel().TakeDrained()}; }
  // Records in use by state, kept by SetState: GetStats's gauges without a
  // scan of every record under the lock (2.4 ms at a million jobs).
  static constexpr size_t kJobStates = static_cast<size_t>(JobState::kDead) + 1;
  std::array<uint64_t, kJobStates> by_state_{};
  // Jobs not yet terminal: what max_jobs bounds.
  uint64_t LiveJobs() const {
    return by_state_[static_cast<size_t>(JobState::kWaiting)] +
           by_state_[static_cast<size_t>(JobState::kRunning)] +
           by_state_[static_cast<size_t>(JobState::kPaused)];
  }
  std::atomic<uint64_t> held_total_{0};  // runs dispatched and not yet finished
  std::atomic<uint64_t> executing_{0};   // of those, the ones that started (but plain
                                         // runs: WorkerLocal::executing)
  std::atomic<bool> throttled_{false};   // Loop holds due jobs back (kMaxHeld)
  // Threads asleep on mu_ (Relock): workers, and the others.
  mutable std::atomic<int> worker_sleepers_{0};
  mutable std::atomic<int> sleepers_{0};
  // Jobs handed ahead, by deadline (ReserveAhead); at most kMaxAhead, which
  // an 8 ms window reaches at 128,000 fires a second (W3 has 20,000). Once
  // it is full, the next job in the wheel goes the usual way.
  static constexpr size_t kMaxAhead = 1024;
  std::deque<Ahead> ahead_;
  uint64_t ahead_seq_ = 0;
  size_t ahead_held_ = 0;  // entries of ahead_ that are kHeld
  int claimers_ = 0;       // workers asleep until a claimed deadline
  // Set (under mu_) when an entry of ahead_ becomes unclaimed; cleared by a
  // worker that finds none. Read without the lock by a worker about to block.
  std::atomic<bool> unclaimed_{false};
  // A storm (dispatch.cc): the instant of the scheduler thread's last pass
  // if it left due jobs in the wheel, else INT64_MIN; the flag says so
  // without the lock.
  int64_t storm_until_ = INT64_MIN;
  std::atomic<bool> storm_{false};
  uint64_t pulls_ = 0;       // workers' takes in a storm that found more due
  uint64_t pulls_seen_ = 0;  // pulls_ at the scheduler thread's last pass
  // The scheduler thread has runs of a pass not yet in the workers' queue.
  std::atomic<bool> pushing_{false};
  std::vector<uint32_t> due_;  // scratch of ProcessDue
  std::vector<uint32_t> run_due_;
  int64_t armed_ = INT64_MAX;  // the instant the scheduler thread sleeps until
  bool shutting_down_ = false;
  bool runs_asked_to_stop_ = false;  // by Shutdown (Drain does not ask)
  bool loop_exit_ = false;
  Stats stats_;
  std::mt19937_64 rng_;

  std::condition_variable_any idle_cv_;
  Interrupt interrupt_;
  std::unique_ptr<WorkerPool> pool_;
  std::thread thread_;
};

}  // namespace ax::internal
