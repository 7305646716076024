// SchedulerImpl: the scheduler thread, the run lifecycle on the workers, and
// the state changes they share. See scheduler_impl.h for the ground rules.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <thread>

#include <sched.h>

#include "ax/duration.h"

#include "engine/scheduler_impl.h"
#include "timer/prefetch.h"

namespace ax::internal {
namespace {

// Most due entries handled per lock hold; between batches the scheduler
// releases the lock so calls and workers get in (SPEC 2.8: change storms
// never starve due jobs, and due storms never starve calls). In W2's storm
// the lock is busy nearly all the time, and each hand-over to a worker's
// Flush costs the scheduler thread a futex sleep and wake: batches of 4,096
// instead of 1,024 drained 5.79 -> 6.68 M fires a second at 447 -> 388 ms of
// CPU (medians of 8 alternating runs), while calls made during the storm
// waited 0.72-0.91 ms at p99 instead of 0.30-0.64 (8,192: 7.2-9.1 M fires a
// second, but 2.1-2.9 ms at p99).
constexpr size_t kBatch = 4096;
// Back-pressure: with this many runs handed off and not finished, the
// scheduler leaves further due jobs on the wheel until the workers are down
// to kResumeHeld. The run records stay few and hot in cache, and a job not
// yet handed off can still be cancelled or changed.
constexpr uint64_t kMaxHeld = 8 * kBatch;
constexpr uint64_t kResumeHeld = 2 * kBatch;
// In a storm a worker fires as many due jobs at once as it runs in about
// kPullTime, at most kPullMax (PullDue); the scheduler thread leaves the
// firing to the workers for kStormStep between its passes.
constexpr size_t kPullMax = 1024;
constexpr Duration kPullTime = std::chrono::microseconds(100);
constexpr Duration kStormStep = std::chrono::milliseconds(1);
// A worker about to take spins for the lock rather than sleep on it for up to
// this long, a little more than a take holds it (kPullMax jobs resolved and
// fired, 35-40 µs on the test VM), and not while the holder is on its own
// CPU (AcquireForTake).
constexpr Duration kTakeSpin = std::chrono::microseconds(60);
// Most jobs handed ahead per lock hold (ReserveAhead): a worker whose
// deadline comes meanwhile waits for the lock to start its job.
constexpr size_t kAheadChunk = 16;
// The least time to the next wake-up for the scheduler thread to stage a
// chunk of the wheel's next window (a chunk takes some microseconds).
constexpr Duration kStageGap = std::chrono::microseconds(100);
// A worker resolves its finished plain runs together under one lock: when it
// has this many, when the first of them started this long ago, whenever it
// runs out of work, and in a storm at its next take (PullDue). In W2's
// drain, batches of 1,024 instead of 64 took 1.5 % as many lock hand-overs
// between the workers and the scheduler thread (each a futex sleep and wake
// when contended) and fired 15-20 % faster; the age bound keeps a job's
// state from lagging its run by more than that (plus the run in progress)
// while a worker stays busy.
//
// A worker with work left does not wait for the lock, though: if another
// thread holds it, the worker runs on and tries again after its next run,
// up to kDeferFlush times the batch or the age; only then, or when it runs
// out of work, does it wait. During W2's drain the scheduler thread holds
// the lock for a batch of due jobs at a time, and a worker that slept on it
// lost its core's time to the hand-over: with the wait deferred, the
// scheduler thread's yields to threads asleep on the lock went from 10,389
// to 1,189 a run, and W2 drained 7-12 % more fires a second at 2-7 % less
// CPU (medians of two sets of 10 interleaved runs).
constexpr size_t kFlushRuns = 1024;
constexpr Duration kFlushAge = std::chrono::milliseconds(1);
constexpr int kDeferFlush = 4;
// Longest the scheduler thread waits for threads asleep on its lock to get it
// (LetSleepersIn).
constexpr std::chrono::microseconds kSleeperWait(200);
// Most terminal jobs forgotten at once beyond SchedulerOptions::max_retained
// (fewer when max_retained / 64 is smaller, down to one).
constexpr size_t kPurgeBatch = 64;

}  // namespace

// ---------------------------------------------------------------- timers

void SchedulerImpl::Arm(uint32_t slot, Instant deadline) {
  const int64_t ns = ToUnixNanos(deadline);
  jobs_[slot].reserved = false;  // taken back if handed ahead
  BasicTimerWheel<JobDeadlines>& wheel = Wheel();
  if (wheel.Contains(slot)) {
    wheel.Reschedule(slot, ns);
  } else {
    wheel.Insert(slot, ns);
  }
  WakeBy(ns);
}

void SchedulerImpl::ArmRunTimer(uint32_t run) {
  Run& r = runs_[run];
  const Instant next = r.slow_done ? r.timeout_at : std::min(r.slow_at, r.timeout_at);
  run_wheel_.Remove(run);
  if (next == kInstantMax) return;
  const int64_t ns = ToUnixNanos(next);
  run_wheel_.Insert(run, ns);
  WakeBy(ns);
}

std::optional<Instant> SchedulerImpl::NextTick(const Job& j, Instant after) const {
  if (j.kind == JobKind::kEvery) return AddDuration(after, ColdOf(j)->period);
  if (j.kind == JobKind::kCron) return ColdOf(j)->cron->Next(after);
  return std::nullopt;
}

// ---------------------------------------------------------------- scheduler thread

void SchedulerImpl::Loop() {
  std::vector<uint32_t> dispatch;
  std::vector<void*> runs;
  Lock l = Acquire();
  while (!loop_exit_) {
    armed_ = INT64_MIN;  // no self-signals while processing
    const Instant now = clock_->Now();
    const int64_t now_ns = ToUnixNanos(now);
    const bool more_cancels = MaybeDrainCancels(now);
    const bool throttle = held_total_.load(std::memory_order_seq_cst) >= kMaxHeld;
    // In a storm the workers fire ("Storms"); this thread fires a batch
    // only when none of them did since its last pass.
    const bool workers_fire = storm_until_ != INT64_MIN && pulls_ != pulls_seen_;
    pulls_seen_ = pulls_;
    const size_t handled = ProcessDue(now, !throttle && !workers_fire, dispatch, kBatch);
    const bool storm = !throttle && (workers_fire || handled >= kBatch);
    SetStorm(storm ? now_ns : INT64_MIN);
    const bool more_ahead = !storm && !throttle && ReserveAhead(now_ns);
    // Every new run is in `dispatch`: one shared update per batch, not one per run.
    held_total_.fetch_add(dispatch.size(), std::memory_order_seq_cst);
    PurgeRetired(now, options_.max_retained);
    const int64_t next = NextWake(!throttle && !storm);
    bool more = more_cancels || more_ahead;
    if (throttle) {
      // RunsGone() signals once the workers are down to kResumeHeld; seen
      // from both sides through sequentially consistent atomics.
      throttled_.store(true, std::memory_order_seq_cst);
      if (held_total_.load(std::memory_order_seq_cst) < kResumeHeld) {
        throttled_.store(false, std::memory_order_relaxed);
        more = true;
      }
    }
    // With a slack, the thread sleeps past the earliest deadline, and every
    // deadline up to the wake-up shares it. In a storm it looks again after
    // kStormStep, or when the workers are done with it (PullDue).
    int64_t wake = more ? INT64_MIN : WithSlack(next);
    if (!more && storm) wake = std::min(wake, now_ns + kStormStep.count());
    armed_ = wake;
    // With a moment to spare before the next wake-up, the wheel files the
    // next window ahead (TimerWheel::StageAhead), one chunk per pass, so its
    // hand-over never holds up a due job.
    const bool spare = !more && !storm && wake > now_ns &&
                       static_cast<uint64_t>(wake) - static_cast<uint64_t>(now_ns) >
                           static_cast<uint64_t>(kStageGap.count());
    const bool stage = spare && Wheel().CanStage();
    for (uint32_t run : dispatch) runs.push_back(&runs_[run]);
    // Runs pushed while every idle worker sleeps until a job handed ahead
    // wake the one with the latest; jobs handed ahead with no worker asleep
    // for them wake one (RunAhead).
    const int preempt =
        !dispatch.empty() && claimers_ > 0 && pool_->Blocked() == 0 ? LatestClaimer() : -1;
    const bool nudge = WantsNudge();
    idle_cv_.notify_all();
    if (!dispatch.empty()) pushing_.store(true, std::memory_order_relaxed);
    Doomed doomed = TakeDoomed();
    l.unlock();
    if (!dispatch.empty()) {
      pool_->Push(runs.data(), runs.size());
      pushing_.store(false, std::memory_order_release);
      dispatch.clear();
      runs.clear();
    }
    doomed = {};  // after the push: the runs do not wait for it
    if (preempt >= 0) local_[static_cast<size_t>(preempt)].wake.Signal();
    if (nudge) pool_->Nudge();
    if (stage) {
      Relock(l, sleepers_, kEngineSpins);
      Wheel().StageAhead();
      l.unlock();
    }
    if (!more) clock_->WaitUntil(FromUnixNanos(wake), interrupt_);  // armed_ is mu_'s
    interrupt_.Clear();
    LetSleepersIn(true);
    Relock(l, sleepers_, kEngineSpins);
    ++stats_.wakeups;
  }
}

// A thread that sleeps on mu_ is woken when the lock is released, and takes
// tens of microseconds to run on this kind of VM; the scheduler thread, back
// for its next batch within a microsecond, took the lock first again and
// again. During W2's storm, calls waited 1.5-2 ms at p99 and up to 50 ms so.
// Now it steps aside until they are in, for at most kSleeperWait; a worker
// about to fire jobs in a storm does the same, but for the other workers.
void SchedulerImpl::LetSleepersIn(bool workers_too) const {
  auto asleep = [&] {
    return sleepers_.load(std::memory_order_relaxed) > 0 ||
           (workers_too && worker_sleepers_.load(std::memory_order_relaxed) > 0);
  };
  if (!asleep()) return;
  const auto until = std::chrono::steady_clock::now() + kSleeperWait;
  while (asleep() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

// The earliest instant the scheduler thread has work: a run timer, a job
// (unless shutting down, or `jobs` is false while due jobs are held back),
// forgetting the oldest retired job, or looking at the cancels made without
// the lock.
int64_t SchedulerImpl::NextWake(bool jobs) {
  int64_t next = run_wheel_.NextDeadline();
  if (!shutting_down_ && jobs) {
    int64_t job = Wheel().NextDeadline();
    // Handing ahead: in time to hand the next job ahead, while there is room.
    const int64_t hand_ahead = options_.hand_ahead.count();
    if (hand_ahead > 0 && job != INT64_MAX && ahead_.size() < kMaxAhead) {
      job = job < INT64_MIN + hand_ahead / 2 ? INT64_MIN : job - hand_ahead / 2;
    }
    next = std::min(next, job);
    if (ahead_held_ > 0) {  // the first held one is the earliest
      for (const Ahead& a : ahead_) {
        if (a.owner != kHeld) continue;
        next = std::min(next, a.at);
        break;
      }
    }
  }
  if (!retired_.empty()) {
    const std::optional<Instant> purge = AddDuration(retired_.front().at, options_.retention);
    next = std::min(next, purge ? ToUnixNanos(*purge) : INT64_MAX);
  }
  if (cancels_seen_ != kInstantMax) {  // the next look at the cancels' burst
    next = std::min(next, ToUnixNanos(cancels_moved_) + kDrainQuiet.count());
  }
  return next;
}

// The scheduler thread drains the cancels made without the lock once their
// burst is over: a caller cancelling many jobs at once (W1's million) then
// has the memory to itself, where a drain beside it, on the other core, made
// each cancel take 1.3-2 times as long. A burst is over when the count of
// marks has not moved for kDrainQuiet; the drain starts anyway once the first
// mark has waited kDrainAge, or kDrainBacklog marks (half the slab, if more)
// have been made since. It then takes the marks there are, kDrainBatch
// at a time (the lock is let go between batches), and waits for the next
// burst to end if more came meanwhile. With a manual clock, or shutting
// down, at once. Returns whether it has more to take now.
bool SchedulerImpl::MaybeDrainCancels(Instant now) {
  if (!cancels_draining_) {
    if (cancels_seen_ == kInstantMax && cancels_.Armed()) return false;
    const uint64_t marked = cancels_.Marked();
    if (cancels_seen_ == kInstantMax) {
      cancels_seen_ = now;
      cancels_base_ = cancels_marked_;
    }
    if (marked != cancels_marked_ || cancels_moved_ == kInstantMax) {
      cancels_marked_ = marked;
      cancels_moved_ = now;
    }
    // The records of jobs cancelled and not drained wait to be reused: at
    // most a million of them, or half the slab.
    const uint64_t most = std::max<uint64_t>(kDrainBacklog, jobs_.size() / 2);
    cancels_draining_ = manual_clock_ || shutting_down_ || now < cancels_seen_ ||
                        now - cancels_moved_ >= kDrainQuiet || now - cancels_seen_ >= kDrainAge ||
                        marked - cancels_base_ >= most;
    if (!cancels_draining_) return false;
  }
  if (DrainCancels(now, kDrainBatch) == kDrainBatch) return true;
  cancels_draining_ = false;
  if (cancels_.Rearm()) {
    cancels_seen_ = cancels_moved_ = kInstantMax;
    return false;
  }
  // Marked while it drained: the next burst's, drained once it is over.
  cancels_seen_ = cancels_moved_ = now;
  cancels_base_ = cancels_marked_;
  return manual_clock_ || shutting_down_;
}

size_t SchedulerImpl::ProcessDue(Instant now, bool jobs, std::vector<uint32_t>& dispatch,
                                 size_t batch) {
  const int64_t now_ns = ToUnixNanos(now);
  size_t handled = 0;
  if (!shutting_down_ && jobs) {
    // Due jobs in deadline order, those handed ahead (ahead_) among those in
    // the wheel. A job in the wheel with the deadline of one handed ahead
    // came after it (it was filed later, or is the rest of its group), so
    // the one handed ahead goes first.
    for (;;) {
      const bool ahead = !ahead_.empty() && ahead_.front().at <= now_ns;
      const int64_t until = ahead ? ahead_.front().at - 1 : now_ns;
      due_.clear();
      handled += Wheel().PopExpired(until, batch - handled, due_);
      // Firing a job re-arms at most that job, so each popped deadline is
      // still there when its turn comes.
      for (uint32_t slot : due_)
        Fire(slot, FromUnixNanos(Wheel().PoppedDeadline(slot)), now, dispatch);
      // Done up to now, out of batch, or more of the wheel to load first.
      if (!ahead || handled >= batch || Wheel().NextDeadline() <= until) break;
      const Ahead a = ahead_.front();
      ahead_.pop_front();
      if (a.owner == kHeld) --ahead_held_;
      StartAhead(a, now, dispatch);
    }
  }
  run_due_.clear();
  handled = std::max(handled, run_wheel_.PopExpired(now_ns, batch, run_due_));
  for (uint32_t run : run_due_) FireRunTimer(run, now);
  return handled;
}

uint32_t SchedulerImpl::NewRun(uint32_t slot, int attempt, Instant scheduled) {
  Job& j = jobs_[slot];
  const uint32_t idx = runs_.Allocate();
  Run& r = runs_[idx];
  r.index = idx;
  r.task = &TaskOf(j);
  r.rearm_at.reset();
  r.fast = !j.has_cold && !events_;
  r.phase.store(kQueued, std::memory_order_relaxed);
  r.job = slot;
  r.gen = j.gen();
  r.attempt = attempt;
  r.scheduled = scheduled;
  r.stop.store(false, std::memory_order_relaxed);
  r.resolved = false;
  r.slow_done = false;
  r.let_go = false;
  r.timeout_at = kInstantMax;
  r.slow_at = kInstantMax;
  if (JobCold* c = ColdOf(j)) {
    c->runs_active.push_back(idx);
  } else {
    j.word = idx;  // the job is out of the wheel
  }
  AddActive(j, 1);
  AddHeld(j, 1);  // held_total_ counts the batch in Loop
  SetState(j, JobState::kRunning);
  ++stats_.fired;
  return idx;
}

void SchedulerImpl::Fire(uint32_t slot, Instant due, Instant now, std::vector<uint32_t>& dispatch) {
  Job& j = jobs_[slot];
  if (j.free || IsTerminal(j.state) || j.state == JobState::kPaused) return;
  if (!j.Close()) return;  // cancelled without the lock: DrainCancels retires it
  if (j.kind == JobKind::kOnce) {
    const JobCold* c = ColdOf(j);
    dispatch.push_back(NewRun(slot, c != nullptr ? c->attempt : 1, due));
    return;
  }
  FirePeriodic(slot, due, now, dispatch);
}

void SchedulerImpl::FirePeriodic(uint32_t slot, Instant due, Instant now,
                                 std::vector<uint32_t>& dispatch) {
  Job& j = jobs_[slot];
  JobCold& c = *ColdOf(j);
  if (c.retry_pending && c.retry_at <= now) {  // a retry of the last occurrence
    c.retry_pending = false;
    dispatch.push_back(NewRun(slot, c.attempt, due));
    return;  // the next tick is armed when the occurrence is over
  }
  if (c.buffered && c.active == 0) {  // buffer_one: the tick that waited
    c.buffered = false;
    dispatch.push_back(NewRun(slot, 1, c.buffered_at));
    Arm(slot, c.next_tick);
    return;
  }
  Instant tick = c.next_tick;
  if (tick > now) {  // nothing due (the wheel entry was a buffered run's)
    Arm(slot, tick);
    return;
  }
  std::optional<Instant> next = NextTick(j, tick);
  const bool catching_up = c.catch_up > 0;
  if (!catching_up) {
    // SPEC 2.5: ticks missed by a period or more (their successor is due
    // too) are skipped and counted, not bunched; the newest due tick runs.
    uint64_t missed = 0;
    if (j.kind == JobKind::kEvery && next && *next <= now) {
      // Whole periods at once: `tick` and the k - 1 after it have a due
      // successor. Unsigned: a clock step may put `tick` centuries back.
      const uint64_t p = static_cast<uint64_t>(c.period.count());
      const uint64_t k =
          (static_cast<uint64_t>(ToUnixNanos(now)) - static_cast<uint64_t>(ToUnixNanos(*next))) /
              p +
          1;
      missed = k;
      tick = FromUnixNanos(static_cast<int64_t>(static_cast<uint64_t>(ToUnixNanos(tick)) + p * k));
      next = AddDuration(tick, c.period);
    }
    const Instant first = tick;
    while (next && *next <= now) {
      ++missed;
      tick = *next;
      if (missed < kMaxTickScan) {
        next = NextTick(j, tick);
        continue;
      }
      // Far behind (a clock step): the newest tick comes from a window before
      // now, and the ticks up to it are counted from their spacing so far, as
      // in ApplySubmitMisfire. (A jump to now used to run the stale tick and
      // count only the ticks walked.)
      const int64_t spacing = std::max<int64_t>(
          1, (ToUnixNanos(tick) - ToUnixNanos(first)) / static_cast<int64_t>(missed));
      const RecentTicks recent = RecentTicksOf(j, tick, now, 1, spacing);
      missed += recent.before + recent.count - 1;  // all in [tick, now] but the newest
      tick = recent.ticks.back();
      next = recent.next == kInstantMax ? std::nullopt : std::optional<Instant>(recent.next);
    }
    if (missed > 0) Skip(slot, tick, missed, "missed ticks", now);
  }
  c.next_tick = next.value_or(kInstantMax);
  if (c.active > 0 && !catching_up) {
    Overlapping(slot, tick, now, dispatch);
  } else {
    c.attempt = 1;
    dispatch.push_back(NewRun(slot, 1, tick));
  }
  if (catching_up) {
    --c.catch_up;  // catch-up runs go one after another: armed on resolution
    return;
  }
  if (c.next_tick != kInstantMax) Arm(slot, c.next_tick);
}

// Counts `count` skipped ticks (the last one `tick`) and tells the observer.
void SchedulerImpl::Skip(uint32_t slot, Instant tick, uint64_t count, std::string_view why,
                         Instant now) {
  ColdOf(jobs_[slot])->skips += count;
  stats_.skipped += count;
  if (!events_) return;
  Event e = MakeEvent(EventType::kSkipped, slot, now);
  e.scheduled_at = tick;
  e.count = count;
  e.message = std::string(why);
  Emit(std::move(e));
}

// A tick comes while the previous run is still going (SPEC 2.5).
void SchedulerImpl::Overlapping(uint32_t slot, Instant tick, Instant now,
                                std::vector<uint32_t>& dispatch) {
  Job& j = jobs_[slot];
  JobCold& c = *ColdOf(j);
  switch (c.overlap) {
    case Overlap::kSkip:
      Skip(slot, tick, 1, "previous run still running", now);
      break;
    case Overlap::kBufferOne:
      if (c.buffered) {
        Skip(slot, tick, 1, "previous run still running; one run already buffered", now);
      } else {
        c.buffered = true;
        c.buffered_at = tick;
      }
      break;
    case Overlap::kReplace:
      StopActiveRuns(j);
      dispatch.push_back(NewRun(slot, 1, tick));
      break;
    case Overlap::kConcurrent:
      dispatch.push_back(NewRun(slot, 1, tick));
      break;
  }
}

void SchedulerImpl::FireRunTimer(uint32_t run, Instant now) {
  Run& r = runs_[run];
  if (r.resolved || r.phase.load(std::memory_order_relaxed) != kStarted) return;
  Event e = MakeEvent(EventType::kSlow, r.job, now);
  e.scheduled_at = r.scheduled;
  e.attempt = r.attempt;
  if (!r.slow_done && r.slow_at <= now) {
    r.slow_done = true;
    e.message = "running for more than " + FormatDuration(r.slow_at - r.started_at);
    Emit(std::move(e));
    ArmRunTimer(run);
    return;
  }
  if (r.timeout_at <= now) {
    r.stop.store(true, std::memory_order_release);
    ++stats_.timed_out;
    e.type = EventType::kTimedOut;
    e.message = "timed out after " + FormatDuration(r.timeout_at - r.started_at);
    Emit(e);
    Resolve(run, Status::DeadlineExceeded(e.message), now);
  }
}

void SchedulerImpl::PurgeRetired(Instant now, size_t keep) {
  // The oldest records are cache-cold: once there is something to forget,
  // keep kAhead loads in flight.
  constexpr size_t kAhead = 16;
  bool loading = false;
  // Each entry is looked at once a call: one whose callback still runs goes
  // to the back, and with only such entries left beyond `keep`, going round
  // them again would never end.
  for (size_t budget = retired_.size(); budget > 0; --budget) {
    const Retired r = retired_.front();
    if (retired_.size() <= keep) {  // within the bound: only the expired go
      const std::optional<Instant> expiry = AddDuration(r.at, options_.retention);
      if (expiry && *expiry > now) break;
    }
    if (!loading) {
      for (size_t i = 1; i < std::min(retired_.size(), kAhead); ++i) {
        jobs_.Prefetch(retired_[i].slot);
      }
      loading = true;
    }
    retired_.pop_front();
    if (retired_.size() >= kAhead) jobs_.Prefetch(retired_[kAhead - 1].slot);
    Job& j = jobs_[r.slot];
    if (j.free || j.gen() != r.gen || !IsTerminal(j.state)) continue;
    if (Held(j) > 0) {  // a timed-out callback still runs: keep the record
      retired_.push_back({r.slot, r.gen, now});
      continue;
    }
    if (const JobCold* c = ColdOf(j); c != nullptr && !c->key.empty()) {
      keys_.Erase(c->key, r.slot);
    }
    DropCold(j);
    --by_state_[static_cast<size_t>(j.state)];
    j.free = true;
    jobs_.Release(r.slot);
  }
}

// ---------------------------------------------------------------- handing ahead

// A run at a deadline used to cost two wake-ups: the scheduler thread's, at
// the deadline, and then a worker's, woken by the hand-off. On the 2-vCPU
// test VM each is a context switch with a VM exit or two, 6-10 µs of CPU,
// and at W4's 9,200 runs a second they were most of its CPU. Now, with a
// worker idle, the scheduler thread hands the jobs due within hand_ahead
// (8 ms) out of the wheel into ahead_, in deadline order, about once per half
// window, kAheadChunk per lock hold; an idle worker claims the earliest
// unclaimed one, sleeps until its deadline on its own interrupt, and starts
// it there (Fire, under the lock, as the scheduler thread would have, then
// runs it): one wake-up a run. The scheduler thread has decided what is due
// and when; the worker only keeps the appointment, and no user code ever
// runs on the scheduler thread.
//
// - A job handed ahead stays Waiting, with its deadline in Job::word and
//   Job::reserved set. Anything that moves it (Arm) or takes it out (Disarm)
//   clears the flag, which takes it back; its entry is then stale and
//   skipped (StartAhead checks the flag, the generation and the deadline).
// - Same-deadline order: a job whose deadline it shares with the next one
//   in the wheel or the entry before it, and a job not Waiting, are kHeld:
//   the scheduler thread starts them itself at their deadline, before it
//   pops the wheel.
// - A job filed inside the window after a hand-off (a change, or a new job)
//   is handed ahead at the thread's next pass, in its place by deadline;
//   held if a worker sleeps until a later entry, as that worker would not
//   wake for it. (Until 2026-12-04 such a job stopped the handing ahead
//   until its deadline, which kept the window short: see hand_ahead.)
// - The scheduler thread starts every entry due at each of its passes,
//   claimed or not, in deadline order with the wheel's (ProcessDue): a
//   worker held up past its deadline loses it to the pass, and finds it gone.
// - A slow callback holds up only its worker: the other idle workers claim
//   the following entries. With none asleep for the entries left, the
//   thread that leaves them (a worker about to run a callback, the scheduler
//   thread after handing some ahead) wakes a blocked worker (Nudge), if one
//   is blocked; a busy one claims them when it is done.
// - Runs pushed while no worker is blocked on the queue wake the worker
//   asleep until the latest claim (Loop), which gives up its claim.
bool SchedulerImpl::ReserveAhead(int64_t now_ns) {
  const int64_t hand_ahead = options_.hand_ahead.count();
  if (hand_ahead == 0 || shutting_down_) return false;
  const int64_t horizon = now_ns > INT64_MAX - hand_ahead ? INT64_MAX : now_ns + hand_ahead;
  // Woken half a window before the next deadline (NextWake), the thread
  // hands ahead what the window holds then: the deadlines of half a window or
  // more in one wake-up. (Woken a whole window before, it woke once a job.)
  // A group of one deadline is handed whole, every job of it held.
  // With a slack, a job is claimable only if no other deadline lies within
  // the slack of its own (the wheel's next one is a lower bound): deadlines
  // that can share a wake-up share the scheduler thread's, and a worker wakes
  // for each lone one.
  const int64_t slack = options_.timer_slack.count();
  const auto apart = [slack](int64_t earlier, int64_t later) {
    return later > earlier && static_cast<uint64_t>(later) - static_cast<uint64_t>(earlier) >
                                  static_cast<uint64_t>(slack);
  };
  int64_t next = Wheel().NextDeadline();
  for (size_t handed = 0; ahead_.size() < kMaxAhead && next <= horizon; ++handed) {
    if (handed == kAheadChunk) return true;
    due_.clear();
    if (Wheel().PopExpired(horizon, 1, due_) == 0) return false;
    const uint32_t slot = due_[0];
    Job& j = jobs_[slot];
    const int64_t at = j.word;
    next = Wheel().NextDeadline();
    // After every entry due no later: one of its deadline was filed first.
    const auto pos = std::upper_bound(ahead_.begin(), ahead_.end(), at,
                                      [](int64_t t, const Ahead& a) { return t < a.at; });
    // Held, too, where a worker could start it out of order: behind an entry
    // of its deadline, or ahead of one a worker sleeps for (that worker
    // would not wake for it); with a slack, also unless it is lone.
    const bool lone = slack == 0 || ((next == INT64_MAX || apart(at, next)) &&
                                     (pos == ahead_.end() || apart(at, pos->at)) &&
                                     (pos == ahead_.begin() || apart(std::prev(pos)->at, at)));
    const bool claimable =
        next != at && at > now_ns && j.state == JobState::kWaiting &&
        (pos == ahead_.begin() || std::prev(pos)->at != at) && lone &&
        std::none_of(pos, ahead_.end(), [](const Ahead& a) { return a.owner >= 0; });
    ahead_.insert(pos, {at, ++ahead_seq_, slot, j.gen(), claimable ? kUnclaimed : kHeld});
    if (claimable) unclaimed_.store(true, std::memory_order_seq_cst);
    if (!claimable) ++ahead_held_;
    ++stats_.handed_ahead;
    j.reserved = true;
    // Firing reads the cold record's first line, which a worker missed on:
    // loaded here, where the job's record is at hand, the worker's firing
    // went from 7.4 to 4.6 % of W4's samples.
    if (const JobCold* c = ColdOf(j)) PrefetchForWrite(c);
  }
  return false;
}

void SchedulerImpl::StartAhead(const Ahead& a, Instant now, std::vector<uint32_t>& dispatch) {
  Job& j = jobs_[a.slot];
  if (j.free || j.gen() != a.gen || !j.reserved || j.word != a.at) return;  // taken back
  j.reserved = false;
  Fire(a.slot, FromUnixNanos(a.at), now, dispatch);
}

bool SchedulerImpl::HasUnclaimed() const {
  return std::any_of(ahead_.begin(), ahead_.end(),
                     [](const Ahead& a) { return a.owner == kUnclaimed; });
}

int SchedulerImpl::LatestClaimer() const {
  int latest = -1;
  for (int i = 0; i < options_.workers; ++i) {
    const int64_t at = local_[static_cast<size_t>(i)].claim_at;
    if (at != INT64_MAX && (latest < 0 || at > local_[static_cast<size_t>(latest)].claim_at)) {
      latest = i;
    }
  }
  return latest;
}

// The scheduler thread may be behind a worker woken for its claim `own`:
// both woken by a jump of the clock (a manual clock's advance, a wall clock
// stepped, a process suspended), or its wake-up late on a loaded host.
// Earlier jobs then still wait: entries before `own` left to the scheduler
// thread or to no one, and jobs in the wheel it has not looked at. The worker
// starts the earliest such entry instead of its own, which waits for the next
// claimer or pass; with jobs in the wheel, it leaves its entry to the
// scheduler thread (returns end()), whose pass is due already (armed_ <= now:
// no signal needed) and starts them all in order.
std::deque<SchedulerImpl::Ahead>::iterator SchedulerImpl::ChooseStart(
    const std::deque<Ahead>::iterator& own, Instant now) {
  auto first = std::find_if(ahead_.begin(), own, [](const Ahead& e) { return e.owner < 0; });
  if (armed_ <= ToUnixNanos(now) && Wheel().NextDeadline() < first->at) {
    own->owner = kHeld;
    ++ahead_held_;
    return ahead_.end();
  }
  if (first != own) {
    own->owner = kUnclaimed;
    unclaimed_.store(true, std::memory_order_seq_cst);
    if (first->owner == kHeld) --ahead_held_;
  }
  return first;
}

bool SchedulerImpl::RunAhead(int worker) {
  if (options_.hand_ahead.count() == 0) return false;
  WorkerLocal& local = local_[static_cast<size_t>(worker)];
  local.wake.Clear();
  Lock l = Acquire();
  auto claim = std::find_if(ahead_.begin(), ahead_.end(),
                            [](const Ahead& a) { return a.owner == kUnclaimed; });
  if (shutting_down_ || claim == ahead_.end()) {
    unclaimed_.store(false, std::memory_order_relaxed);  // set again only under mu_
    return false;
  }
  claim->owner = worker;
  const uint64_t seq = claim->seq;
  const int64_t at = claim->at;
  local.claim_at = at;
  ++claimers_;
  l.unlock();
  bool preempted = false;
  Instant now = clock_->Now();
  while (ToUnixNanos(now) < at) {
    // Runs queued meanwhile go first (Loop wakes the latest claimer for them).
    if (local.wake.signalled() || pool_->QueueDepth() > 0) {
      preempted = true;
      break;
    }
    clock_->WaitUntil(FromUnixNanos(at), local.wake);
    now = clock_->Now();
  }
  Relock(l);
  --claimers_;
  local.claim_at = INT64_MAX;
  auto it =
      std::find_if(ahead_.begin(), ahead_.end(), [seq](const Ahead& a) { return a.seq == seq; });
  if (it == ahead_.end()) return true;  // the scheduler thread started it
  if (preempted) {
    it->owner = kUnclaimed;
    unclaimed_.store(true, std::memory_order_seq_cst);
    const bool nudge = WantsNudge();
    l.unlock();
    if (nudge) pool_->Nudge();
    return true;
  }
  it = ChooseStart(it, now);
  if (it == ahead_.end()) return true;  // left to the scheduler thread
  const Ahead a = *it;
  ahead_.erase(it);
  std::vector<uint32_t>& dispatch = local.dispatch;
  dispatch.clear();
  if (!shutting_down_) StartAhead(a, now, dispatch);
  assert(dispatch.size() <= 1);  // a job fires one run at a time
  stats_.started_ahead += dispatch.size();
  held_total_.fetch_add(dispatch.size(), std::memory_order_seq_cst);
  // The next entries must not wait for this callback.
  const bool nudge = WantsNudge();
  if (dispatch.empty()) {
    idle_cv_.notify_all();  // WaitIdle may be waiting for it
    l.unlock();
    if (nudge) pool_->Nudge();
    return true;
  }
  Run& r = runs_[dispatch[0]];
  pool_->SetBusy(worker, true);
  if (!r.fast) {  // started in this lock hold (the worker has nothing to flush)
    if (nudge) pool_->Nudge();
    RunLocked(r.index, l);
  } else {
    l.unlock();
    if (nudge) pool_->Nudge();
    Execute(r, worker);
  }
  pool_->SetBusy(worker, false);
  return true;
}

// ---------------------------------------------------------------- storms

// "Everything due on the hour" (W2): the scheduler thread fired every due job
// and handed its run to a worker, so each job's record was written on one
// core (Fire) and again on another (the worker's CompletePlain), and three
// busy threads shared the two vCPUs. Now, when a pass leaves due jobs in the
// wheel, the scheduler thread marks a storm until its instant (storm_until_);
// a worker with nothing queued fires the next jobs due by then itself, under
// the lock, as the scheduler thread would have at that instant, and runs
// them. The scheduler thread has decided what is due; the workers only do
// the firing. It looks again every kStormStep, and fires a batch itself only
// if no worker took one meanwhile (all busy with long callbacks, say).
//
// - A take is sized to run in about kPullTime (up to kPullMax jobs, down to
//   one when callbacks are slow), so a worker never sits on due jobs that an
//   idle worker could have run.
// - Order: a worker takes only when no run the scheduler thread fired is on
//   its way to the queue (pushing_) or in it: with one worker, same-deadline
//   jobs still start in submission order. With several, a later job may start
//   on another worker up to one take (about kPullTime of runs) before an
//   earlier one.
// - The storm ends with the first pass, the scheduler thread's or a
//   worker's, that finds fewer due jobs than it could take, or when the
//   workers hold kMaxHeld runs; a worker that ends it wakes the scheduler
//   thread.
// - Calls: a worker about to take lets in first the callers asleep on the
//   lock (LetSleepersIn), as the scheduler thread does between its batches.
void SchedulerImpl::SetStorm(int64_t until) {
  storm_until_ = until;
  storm_.store(until != INT64_MIN, std::memory_order_relaxed);
}

bool SchedulerImpl::PullDue(int worker) {
  if (!storm_.load(std::memory_order_relaxed)) return false;
  WorkerLocal& local = local_[static_cast<size_t>(worker)];
  std::vector<uint32_t>& dispatch = local.dispatch;
  dispatch.clear();
  // Takes follow one another: without this, calls made during W2's storm
  // waited 3.8 ms at p99 (0.66 before takes; 0.21 with this). Other workers
  // asleep on the lock are not waited for: with them, 10.3 against 11.0 M
  // fires a second (12 pairs).
  LetSleepersIn(false);
  Lock l = AcquireForTake();
  take_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
  // The worker's finished runs go in the same hold: one hand-over of the
  // lock a batch, not two (see the comment above kFlushRuns).
  const uint64_t flushed = ResolveFinished(worker);
  const bool storm = storm_until_ != INT64_MIN && !shutting_down_ &&
                     !pushing_.load(std::memory_order_acquire) && pool_->QueueDepth() == 0;
  const size_t batch = local.pull;
  size_t handled = 0;
  std::vector<Run*>& runs = local.pulled;
  runs.clear();
  if (storm) {
    const Instant until = FromUnixNanos(storm_until_);
    // The flushed runs are counted out once the lock is let go.
    const bool throttle = held_total_.load(std::memory_order_seq_cst) - flushed >= kMaxHeld;
    handled = throttle ? 0 : ProcessDue(until, true, dispatch, batch);
    if (handled < batch) {  // over, or held back: the scheduler thread's turn
      SetStorm(INT64_MIN);
      WakeFor(until);
    } else {
      ++pulls_;
    }
    stats_.fired_by_workers += dispatch.size();
    held_total_.fetch_add(dispatch.size(), std::memory_order_seq_cst);
    for (uint32_t run : dispatch) runs.push_back(&runs_[run]);
  }
  // Destroyed on the way out, after the runs taken: a storm's drained slot
  // takes milliseconds to free.
  Doomed doomed = TakeDoomed();
  take_cpu_.store(-1, std::memory_order_relaxed);
  l.unlock();
  FinishResolved(worker, flushed);
  if (!storm) return false;
  // A worker that blocked on the queue while the storm went on (it looked
  // while the scheduler thread pushed runs, and the other workers took them)
  // is woken by nothing else: in 3 of 40 W2 runs one worker sat out the
  // drain. It joins while fewer workers are busy than there are CPUs.
  if (handled == batch && pool_->Blocked() > 0 && pool_->busy() + 1 < StormWorkers()) {
    pool_->Nudge();
  }
  if (runs.empty()) return handled > 0;
  pool_->SetBusy(worker, true);
  const Instant start = NowApprox();
  local.pulling = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i + 1 < runs.size()) PrefetchForWrite(runs[i + 1]);
    Execute(*runs[i], worker);
  }
  local.pulling = false;
  pool_->SetBusy(worker, false);
  // The next take lasts about kPullTime: doubled while this one took less than
  // half of it, cut in proportion when it took longer.
  const int64_t took = std::max<int64_t>((NowApprox() - start).count(), 1);
  if (runs.size() == batch && 2 * took < kPullTime.count()) {
    local.pull = std::min(2 * batch, kPullMax);
  } else if (took > kPullTime.count()) {
    local.pull = std::max<size_t>(
        1, static_cast<size_t>(static_cast<int64_t>(runs.size()) * kPullTime.count() / took));
  }
  return true;
}

int SchedulerImpl::StormWorkers() const {
  static const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::min(options_.workers, cpus);
}

// In W2's drain the two workers take turns at the lock, each holding it for
// a take (its finished runs resolved, the next jobs fired) while the other
// runs its jobs; a take and the runs it fires take about as long. A worker
// that slept on the lock was woken only at the holder's release and came to
// it 10-30 µs later on this kind of VM, and the lock sat idle meanwhile: in
// an instrumented drain it was held 65 % of the time. Spinning for it, a
// worker finds it at once; but a spinner on the holder's own CPU would only
// keep the holder off it, so it sleeps then. (Any thread may hold the lock;
// take_cpu_ tells only a take's holder apart, the holds that last.)
SchedulerImpl::Lock SchedulerImpl::AcquireForTake() {
  Lock l(mu_, std::defer_lock);
  if (l.try_lock()) return l;
  const int cpu = sched_getcpu();
  const auto until = std::chrono::steady_clock::now() + kTakeSpin;
  for (int i = 1; take_cpu_.load(std::memory_order_relaxed) != cpu; ++i) {
    CpuRelax();
    if (!mu_.held() && l.try_lock()) return l;
    if (i % 16 == 0 && std::chrono::steady_clock::now() >= until) break;
  }
  Relock(l);
  return l;
}

// ---------------------------------------------------------------- runs

void SchedulerImpl::Execute(Run& r, int worker) {
  const uint32_t run = r.index;
  if (r.fast) {
    // A plain run (no options, no observer): started by compare-and-swap, and
    // resolved later with the worker's other finished runs, under one lock.
    uint8_t queued = kQueued;
    const bool stopping = stopping_runs_.load(std::memory_order_acquire);
    WorkerLocal& local = local_[static_cast<size_t>(worker)];
    if (!stopping && r.phase.compare_exchange_strong(queued, kStarted, std::memory_order_acq_rel)) {
      local.executing.store(local.executing.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
      // For the lateness histogram and the flush's age only: the counter
      // estimate, not the exact read, whose serialising time-stamp read
      // ended the overlap of this run's misses with the next's (W2:
      // 1.27x the fires a second, 0.84x the CPU, 24 pairs).
      r.started_at = NowApprox();
      local.lateness.Record(LatenessNs(r.started_at, r.scheduled));
      const RunContext fast_ctx(JobId(r.job, r.gen), {}, r.attempt, r.scheduled,
                                StopToken(&r.stop));
      local.finished.push_back({&r, Invoke(*r.task, fast_ctx, worker)});
      const Instant first = local.finished.front().run->started_at;
      const size_t count = local.finished.size();
      const Duration age = r.started_at - first;
      // In a storm's batch the next take resolves them, unless they age.
      if ((count >= kFlushRuns && !local.pulling) || age >= kFlushAge) {
        Flush(worker, count < kDeferFlush * kFlushRuns && age < kDeferFlush * kFlushAge);
      }
      return;
    }
  }
  // The worker's finished plain runs first: a deferred Flush would otherwise
  // wait for the next plain run or for the worker to run out of work.
  Flush(worker);
  Lock l = Acquire();
  RunLocked(run, l);
}

void SchedulerImpl::RunLocked(uint32_t run, Lock& l) {
  Task released;
  Task* task = nullptr;
  std::optional<RunContext> ctx;
  if (!Start(run, task, ctx)) {
    ReleaseRun(run, released);
    NotifyIfNoneExecuting();
    l.unlock();
    FinishHeld(released);
    return;
  }
  l.unlock();
  const Status status = Invoke(*task, *ctx, -1);  // Execute flushed the worker's runs
  Relock(l);
  executing_.fetch_sub(1, std::memory_order_relaxed);
  if (!runs_[run].resolved) Resolve(run, status, clock_->Now());
  ReleaseRun(run, released);
  NotifyIfNoneExecuting();
  Doomed doomed = TakeDoomed();
  l.unlock();
  FinishHeld(released);
}

// The scheduler whose callback this thread is in, and its worker, so that
// Shutdown called from a callback does not wait for that callback.
struct InCallback {
  const SchedulerImpl* scheduler = nullptr;
  int worker = -1;
};
static thread_local InCallback in_callback;

// Runs user code: no exception escapes to the worker (SPEC 2.6).
Status SchedulerImpl::Invoke(Task& task, const RunContext& ctx, int worker) {
  struct Restore {
    InCallback outer;
    ~Restore() { in_callback = outer; }
  } restore{in_callback};
  in_callback = {this, worker};
  try {
    return task(ctx);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("callback threw: ") + e.what());
  } catch (...) {
    return Status::Internal("callback threw a non-standard exception");
  }
}

void SchedulerImpl::Flush(int worker, bool may_defer) {
  if (local_[static_cast<size_t>(worker)].finished.empty()) return;
  Lock l(mu_, std::defer_lock);
  if (may_defer) {
    if (!l.try_lock()) return;
  } else {
    Relock(l);
  }
  const uint64_t n = ResolveFinished(worker);
  Doomed doomed = TakeDoomed();
  l.unlock();
  FinishResolved(worker, n);
}

uint64_t SchedulerImpl::ResolveFinished(int worker) {
  WorkerLocal& local = local_[static_cast<size_t>(worker)];
  std::vector<Finished>& done = local.finished;
  if (done.empty()) return 0;
  std::vector<Task>& released = local.released;
  released.resize(done.size());
  const Instant now = clock_->Now();
  local.executing.store(local.executing.load(std::memory_order_relaxed) - done.size(),
                        std::memory_order_relaxed);
  stats_.lateness.Add(local.lateness);
  local.lateness = LatenessHistogram();
  for (size_t i = 0; i < done.size(); ++i) {
    Run& r = *done[i].run;
    if (done[i].status.ok() && CompletePlain(r, now, released[i])) continue;
    if (!r.resolved) Resolve(r.index, done[i].status, now);
    ReleaseRun(r.index, released[i]);
  }
  NotifyIfNoneExecuting();
  return done.size();
}

void SchedulerImpl::FinishResolved(int worker, uint64_t n) {
  if (n == 0) return;
  WorkerLocal& local = local_[static_cast<size_t>(worker)];
  local.finished.clear();
  local.released.clear();  // captures die here, unlocked
  RunsGone(n);
}

// The common end of a run, kept short on purpose (like Cancel): a plain
// one-shot job's only run returned OK. It is what Resolve, ResolveSuccess,
// Terminate and ReleaseRun do for such a job, without their cases for cold
// records, events, periodic jobs, children and run timers; anything else goes
// through them. In W2's storm the workers resolve a million runs under the
// lock, which everything else waits for. REQUIRES mu_.
bool SchedulerImpl::CompletePlain(Run& r, Instant now, Task& released) {
  if (r.resolved || !r.fast) return false;
  const uint32_t slot = r.job;
  Job& j = jobs_[slot];
  if (j.has_cold || j.kind != JobKind::kOnce || j.state != JobState::kRunning ||
      PlainRun(j) != r.index || !j.run_held || j.waits_parent || j.has_children || r.rearm_at ||
      Wheel().Contains(slot) || run_wheel_.Contains(r.index)) {
    return false;
  }
  r.resolved = true;
  j.run_active = false;
  j.run_held = false;
  SetState(j, JobState::kCompleted);
  ++stats_.succeeded;
  Retire(slot, now);
  released = std::move(j.task);
  r.job = kNoIndex;
  runs_.Release(r.index);
  return true;
}

// Counts finished runs out: wakes WaitIdle at zero, and the scheduler thread
// when it held due jobs back (Loop) and the workers have caught up.
void SchedulerImpl::RunsGone(uint64_t n) {
  const uint64_t left = held_total_.fetch_sub(n, std::memory_order_seq_cst) - n;
  if (left == 0) {
    Lock l = Acquire();
    idle_cv_.notify_all();
  }
  if (left < kResumeHeld && throttled_.load(std::memory_order_seq_cst) &&
      throttled_.exchange(false, std::memory_order_relaxed)) {
    interrupt_.Signal();
  }
}

// Marks a run started and gives its task and context; false when it must not
// start (cancelled, replaced, or shutting down). REQUIRES mu_.
bool SchedulerImpl::Start(uint32_t run, Task*& task, std::optional<RunContext>& ctx) {
  Run& r = runs_[run];
  Job& j = jobs_[r.job];
  uint8_t queued = kQueued;
  if (r.resolved || shutting_down_ ||
      !r.phase.compare_exchange_strong(queued, kStarted, std::memory_order_acq_rel)) {
    if (!r.resolved) {
      r.resolved = true;
      ForgetRun(j, run);
      if (j.state == JobState::kRunning && Active(j) == 0) SetState(j, JobState::kWaiting);
    }
    return false;
  }
  const Instant now = clock_->Now();
  r.started_at = now;
  executing_.fetch_add(1, std::memory_order_relaxed);
  stats_.lateness.Record(LatenessNs(now, r.scheduled));
  std::string_view key;
  if (JobCold* c = ColdOf(j)) {
    ++c->runs;
    key = c->key;
    if (c->slow_after.count() > 0) {
      r.slow_at = AddDuration(now, c->slow_after).value_or(kInstantMax);
    }
    if (c->timeout.count() > 0) r.timeout_at = AddDuration(now, c->timeout).value_or(kInstantMax);
    if (r.slow_at != kInstantMax || r.timeout_at != kInstantMax) ArmRunTimer(run);
  }
  task = &TaskOf(j);
  ctx.emplace(JobId(r.job, r.gen), key, r.attempt, r.scheduled, StopToken(&r.stop));
  if (events_) {
    Event e = MakeEvent(EventType::kStarted, r.job, now);
    e.scheduled_at = r.scheduled;
    e.attempt = r.attempt;
    e.lateness = Duration(LatenessNs(now, r.scheduled));
    Emit(std::move(e));
  }
  return true;
}

// Destroys a released task outside the lock, then counts the run as gone, so
// that WaitIdle() never returns while a callback's captures still live.
void SchedulerImpl::FinishHeld(Task& released) {
  released.Reset();
  RunsGone(1);
}

void SchedulerImpl::ReleaseRun(uint32_t run, Task& released) {
  Run& r = runs_[run];
  run_wheel_.Remove(run);
  if (!r.let_go) {
    Job& j = jobs_[r.job];
    AddHeld(j, -1);
    if (Held(j) == 0 && IsTerminal(j.state) && TaskOf(j)) released = std::move(TaskOf(j));
  }
  r.job = kNoIndex;
  runs_.Release(run);
}

void SchedulerImpl::NotifyIfNoneExecuting() {
  // Shutting down, a callback's own Shutdown waits for every run but its own.
  if (Executing() <= (shutting_down_ ? 1u : 0u)) idle_cv_.notify_all();
}

uint64_t SchedulerImpl::Executing() const {
  uint64_t n = executing_.load(std::memory_order_relaxed);
  for (int i = 0; i < options_.workers; ++i) {
    n += local_[static_cast<size_t>(i)].executing.load(std::memory_order_relaxed);
  }
  return n;
}

void SchedulerImpl::Resolve(uint32_t run, const Status& status, Instant now) {
  Run& r = runs_[run];
  r.resolved = true;
  run_wheel_.Remove(run);
  Job& j = jobs_[r.job];
  ForgetRun(j, run);
  // A SetDelay while it ran (Run::rearm_at): the callback has returned, so
  // the job may take its cold record now.
  if (r.rearm_at) {
    const bool plain = !j.has_cold;
    JobCold& c = Cold(j);
    if (plain) c.runs = 1;  // this run, its first
    c.rearm_at = *r.rearm_at;
  }
  if (IsTerminal(j.state)) return;
  if (status.ok()) {
    ++stats_.succeeded;
    if (events_) {
      Event e = MakeEvent(EventType::kSucceeded, r.job, now);
      e.scheduled_at = r.scheduled;
      e.attempt = r.attempt;
      Emit(std::move(e));
    }
    ResolveSuccess(r.job, now);
  } else {
    ResolveFailure(r.job, r, status, now);
  }
}

void SchedulerImpl::ResolveSuccess(uint32_t slot, Instant now) {
  Job& j = jobs_[slot];
  JobCold* c = ColdOf(j);
  if (c != nullptr) {
    c->consecutive_failures = 0;
    c->attempt = 1;
  }
  if (j.kind != JobKind::kOnce) {
    AfterOccurrence(slot, now);
    return;
  }
  if (c != nullptr && c->rearm_at) {  // SetDelay while running: run again
    const Instant at = *c->rearm_at;
    c->rearm_at.reset();
    if (c->active == 0) SetState(j, JobState::kWaiting);
    Arm(slot, at);
    return;
  }
  Task released;  // j.held > 0 here (the returning run), so nothing is released
  Terminate(slot, JobState::kCompleted, "", now, released);
  ReleaseChildren(slot, now);
}

void SchedulerImpl::ResolveFailure(uint32_t slot, const Run& r, const Status& status, Instant now) {
  Job& j = jobs_[slot];
  const bool had_cold = j.has_cold;
  JobCold& c = Cold(j);
  if (!had_cold) c.runs = 1;
  ++c.failures;
  ++c.consecutive_failures;
  ++stats_.failed;
  c.last_error = status.ToString();
  Event failed = MakeEvent(EventType::kFailed, slot, now);
  failed.scheduled_at = r.scheduled;
  failed.attempt = r.attempt;
  failed.message = c.last_error;
  Emit(failed);
  // Out of attempts: a dead letter (a periodic job: this occurrence).
  auto dead = [&] {
    ++stats_.dead;
    c.attempt = 1;
    Event e = MakeEvent(EventType::kDead, slot, now);
    e.scheduled_at = r.scheduled;
    e.attempt = r.attempt;
    e.message = "failed after " + std::to_string(r.attempt) + " attempt(s): " + c.last_error;
    AddDeadLetter(e);
    Emit(e);
    return e.message;
  };
  if (j.kind != JobKind::kOnce && c.auto_pause_after > 0 &&
      c.consecutive_failures >= c.auto_pause_after) {
    if (r.attempt >= c.retry.max_attempts) dead();
    c.retry_pending = false;
    c.buffered = false;
    c.attempt = 1;
    Disarm(slot);
    c.reason = "auto-paused after " + std::to_string(c.consecutive_failures) +
               " consecutive failed runs; last error: " + c.last_error;
    c.pause_after_run = c.active > 0;
    if (c.active == 0) SetState(j, JobState::kPaused);
    Event e = MakeEvent(EventType::kAutoPaused, slot, now);
    e.message = c.reason;
    Emit(std::move(e));
    return;
  }
  if (r.attempt < c.retry.max_attempts) {
    const double unit = std::uniform_real_distribution<double>(0, 1)(rng_);
    Instant at = AddDuration(now, c.retry.DelayAfter(r.attempt, unit)).value_or(kInstantMax);
    if (c.rearm_at) {  // SetDelay while it ran: the retry goes there
      at = *c.rearm_at;
      c.rearm_at.reset();
    }
    c.attempt = r.attempt + 1;
    ++stats_.retried;
    if (j.kind != JobKind::kOnce) {
      c.retry_pending = true;
      c.retry_at = at;
    }
    if (c.active == 0) SetState(j, JobState::kWaiting);
    Arm(slot, at);
    Event e = MakeEvent(EventType::kRetrying, slot, now);
    e.scheduled_at = r.scheduled;
    e.attempt = c.attempt;
    e.next_run = at;
    e.message = c.last_error;
    Emit(std::move(e));
    return;
  }
  std::string why = dead();
  if (j.kind != JobKind::kOnce) {
    AfterOccurrence(slot, now);
    return;
  }
  if (c.rearm_at) {
    const Instant at = *c.rearm_at;
    c.rearm_at.reset();
    if (c.active == 0) SetState(j, JobState::kWaiting);
    Arm(slot, at);
    return;
  }
  Task released;  // held by the returning run: nothing to release here
  Terminate(slot, JobState::kDead, std::move(why), now, released);
  EndChildren(slot, JobState::kDead, now, doomed_);  // their callables die unlocked
}

void SchedulerImpl::AddDeadLetter(const Event& dead) {
  if (options_.max_dead_letters == 0) return;
  if (dead_letters_.size() >= options_.max_dead_letters) {
    dead_letters_.erase(dead_letters_.begin());
  }
  dead_letters_.push_back(dead);
}

// A periodic job's occurrence (with its retries) is over.
void SchedulerImpl::AfterOccurrence(uint32_t slot, Instant now) {
  Job& j = jobs_[slot];
  JobCold& c = *ColdOf(j);
  c.retry_pending = false;
  if (c.pause_after_run) {
    if (c.active > 0) return;
    c.pause_after_run = false;
    c.buffered = false;
    Disarm(slot);
    SetState(j, JobState::kPaused);
    if (c.reason.empty()) c.reason = "paused";
    Emit(MakeEvent(EventType::kPaused, slot, now));
    return;
  }
  if (c.active == 0) SetState(j, JobState::kWaiting);
  if (c.buffered && c.active == 0) {
    Arm(slot, now);  // FirePeriodic starts the buffered run
  } else if (!Wheel().Contains(slot) && c.next_tick != kInstantMax) {
    Arm(slot, c.next_tick);
  }
}

// ---------------------------------------------------------------- state changes

bool SchedulerImpl::DropQueued(Job& j, uint32_t run) {
  Run& r = runs_[run];
  uint8_t queued = kQueued;
  if (!r.phase.compare_exchange_strong(queued, kDropped, std::memory_order_acq_rel)) return false;
  r.resolved = true;
  r.let_go = true;  // SPEC 2.3: a cancel releases the callable at once
  AddHeld(j, -1);
  AddActive(j, -1);
  return true;
}

void SchedulerImpl::StopActiveRuns(Job& j) {
  auto stop = [&](uint32_t run) {
    Run& r = runs_[run];
    r.stop.store(true, std::memory_order_release);
    r.resolved = true;  // its outcome no longer counts
    run_wheel_.Remove(run);
    if (DropQueued(j, run)) return true;  // not started: it never will be
    AddActive(j, -1);
    return false;
  };
  if (JobCold* c = ColdOf(j)) {
    for (uint32_t run : c->runs_active) stop(run);
    c->runs_active.clear();
  } else if (j.run_active) {
    j.ran = !stop(PlainRun(j));
  }
}

void SchedulerImpl::ForgetRun(Job& j, uint32_t run) {
  if (JobCold* c = ColdOf(j)) {
    std::erase(c->runs_active, run);
  } else {
    assert(PlainRun(j) == run);
  }
  AddActive(j, -1);
}

void SchedulerImpl::Terminate(uint32_t slot, JobState state, std::string reason, Instant now,
                              Task& released) {
  Job& j = jobs_[slot];
  assert(j.gate() == Gate::kClosed);
  Disarm(slot);
  StopActiveRuns(j);
  SetState(j, state);
  j.waits_parent = false;
  if (JobCold* c = ColdOf(j)) {
    if (!reason.empty()) c->reason = std::move(reason);
    c->retry_pending = false;
    c->buffered = false;
    c->pause_after_run = false;
    c->rearm_at.reset();
  } else if (state == JobState::kDead || (state == JobState::kCancelled && reason != "cancelled")) {
    Cold(j).reason = std::move(reason);  // a plain cancel needs no record of why
  }
  Retire(slot, now);
  if (Held(j) == 0) released = std::move(TaskOf(j));
  if (state == JobState::kCancelled) ++stats_.cancelled;
  if (events_ && state != JobState::kDead) {
    Emit(MakeEvent(state == JobState::kCancelled ? EventType::kCancelled : EventType::kCompleted,
                   slot, now));
  }
}

void SchedulerImpl::Remember(Retired r) {
  retired_.push_back(r);
  if (retired_.size() > options_.max_retained) {
    // Over the bound: forget the oldest here, a batch at a time (one per
    // call made every caller's path long, and each of those records is a
    // cache miss that a batch overlaps with the others).
    const size_t batch = std::min(options_.max_retained / 64, kPurgeBatch);
    PurgeRetired(r.at, options_.max_retained - batch);
    // The records the next purge forgets (batch + 1 of them) start loading
    // now, while the calls in between run: in cache when their turn comes
    // (W1 cancel: 372 -> 359 and 364 -> 359 ns, medians of two sets of 6 pairs).
    for (size_t i = 0; i < std::min(retired_.size(), batch + 1); ++i) {
      jobs_.Prefetch(retired_[i].slot);
    }
  } else if (retired_.size() == 1) {
    // The scheduler thread forgets it after the retention.
    WakeFor(AddDuration(r.at, options_.retention).value_or(kInstantMax));
  }
}

std::vector<JobId> SchedulerImpl::TakeChildren(uint32_t slot) {
  Job& parent = jobs_[slot];
  if (!parent.has_children) return {};
  parent.has_children = false;
  auto it = children_.find(slot);
  std::vector<JobId> children = std::move(it->second);
  children_.erase(it);
  return children;
}

void SchedulerImpl::ReleaseChildren(uint32_t slot, Instant now) {
  const std::vector<JobId> children = TakeChildren(slot);
  for (JobId id : children) {
    Result<uint32_t> s = Resolve(JobRef(id));
    if (!s.ok() || !jobs_[*s].waits_parent) continue;
    Job& child = jobs_[*s];
    JobCold& c = *ColdOf(child);
    child.waits_parent = false;
    c.parent = JobId();
    Plan plan;
    plan.kind = child.kind;
    plan.period = c.period;
    plan.cron = c.cron;
    // A cron child runs on its calendar, unless a SetDelay gave it a delay.
    plan.first_given = c.release_at || c.release_delay || child.kind == JobKind::kEvery;
    plan.at = c.release_at.value_or(
        AddDuration(now, c.release_delay.value_or(Duration(0))).value_or(kInstantMax));
    if (child.state == JobState::kPaused) {
      // Paused meanwhile: Resume arms it (a one-shot at this deadline, or at
      // once if it has passed by then).
      if (child.kind == JobKind::kOnce) c.one_shot_at = plan.at;
    } else {
      FirstSchedule(*s, plan, now);
    }
    if (!events_) continue;
    Event e = MakeEvent(EventType::kScheduled, *s, now);
    e.message = "parent " + IdText(slot) + " completed";
    Emit(std::move(e));
  }
}

void SchedulerImpl::EndChildren(uint32_t slot, JobState parent_state, Instant now,
                                std::vector<Task>& released) {
  const std::vector<JobId> children = TakeChildren(slot);
  if (children.empty()) return;
  const std::string why =
      "parent " + IdText(slot) + (parent_state == JobState::kDead ? " is dead" : " was cancelled");
  for (JobId id : children) {
    Result<uint32_t> s = Resolve(JobRef(id));
    if (!s.ok() || !jobs_[*s].waits_parent) continue;
    released.emplace_back();
    if (parent_state == JobState::kDead) {
      ++stats_.dead;
      Event dead = MakeEvent(EventType::kDead, *s, now);
      dead.message = why;
      AddDeadLetter(dead);
      Emit(std::move(dead));
    }
    Terminate(*s, parent_state, why, now, released.back());
    EndChildren(*s, parent_state, now, released);
  }
}

Event SchedulerImpl::MakeEvent(EventType type, uint32_t slot, Instant now) const {
  Event e;
  e.type = type;
  e.id = JobId(slot, jobs_[slot].gen());
  e.key = KeyOf(jobs_[slot]);
  e.at = now;
  if (Pending(slot)) e.next_run = FromUnixNanos(jobs_[slot].word);
  return e;
}

// Queued under mu_, so observers see events in the order they happened.
// Callers build events only when events_ is set (they cost strings).
void SchedulerImpl::Emit(Event e) {
  if (events_) events_->Push(std::move(e));
}

// ---------------------------------------------------------------- idle, shutdown

bool SchedulerImpl::WaitIdle(Duration timeout) { return WaitFor(timeout, true); }
bool SchedulerImpl::WaitDispatched(Duration timeout) { return WaitFor(timeout, false); }

bool SchedulerImpl::WaitFor(Duration timeout, bool runs_too) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  Lock l = Acquire();
  int64_t nudged = INT64_MIN;  // armed_ when the scheduler thread was last asked to look again
  const bool idle = idle_cv_.wait_until(l, until, [&] {
    const int64_t now = ToUnixNanos(clock_->Now());
    if ((runs_too && held_total_.load() != 0) || armed_ == INT64_MIN) return false;
    if (!ahead_.empty() && ahead_.front().at <= now) return false;  // a worker starts it
    if (NextWake(true) > now) return true;
    // The wheel's next instant is a lower bound (timer/wheel.h): an entry
    // filed after the thread's last pass into a slot within the load-ahead
    // makes it that slot's first tick less the load-ahead, which may have
    // passed, while the thread sleeps until the entry's own deadline. Idle
    // all the same, but only a pass tells: ask for one (once per instant the
    // thread is armed for, so a pass that changes nothing is not asked again).
    if (armed_ > now && armed_ != nudged) {
      nudged = armed_;
      interrupt_.Signal();
    }
    return false;
  });
  l.unlock();
  if (!idle) return false;
  return !runs_too || !events_ || events_->WaitDelivered(until);
}

ShutdownReport SchedulerImpl::Shutdown(Duration timeout) { return Stop(timeout, true); }
ShutdownReport SchedulerImpl::Drain(Duration timeout) { return Stop(timeout, false); }

ShutdownReport SchedulerImpl::Stop(Duration timeout, bool ask_runs_to_stop) {
  {
    Lock l = Acquire();
    if (!shutting_down_) {
      shutting_down_ = true;
      stopping_runs_.store(true, std::memory_order_release);  // nothing new starts
      for (uint32_t i = 0; i < runs_.size(); ++i) {
        Run& r = runs_[i];
        if (r.job == kNoIndex) continue;
        uint8_t queued = kQueued;
        r.phase.compare_exchange_strong(queued, kDropped, std::memory_order_acq_rel);
      }
    }
    if (ask_runs_to_stop && !runs_asked_to_stop_) {
      runs_asked_to_stop_ = true;
      for (uint32_t i = 0; i < runs_.size(); ++i) {
        if (runs_[i].job != kNoIndex) runs_[i].stop.store(true, std::memory_order_release);
      }
    }
  }
  interrupt_.Signal();
  for (int i = 0; i < options_.workers; ++i) local_[static_cast<size_t>(i)].wake.Signal();
  // Called from one of this scheduler's callbacks, which cannot end while it
  // waits here: not waited for (it is reported, as still running), nor are
  // the runs its worker finished before it, once flushed.
  uint64_t self = 0;
  if (in_callback.scheduler == this) {
    if (in_callback.worker >= 0) Flush(in_callback.worker);
    self = 1;
  }
  ShutdownReport report;
  const auto until =
      std::chrono::steady_clock::now() + std::min<Duration>(timeout, std::chrono::hours(24 * 365));
  Lock l = Acquire();
  auto done = [&] { return Executing() <= self; };
  if (timeout > std::chrono::hours(24 * 365)) {
    idle_cv_.wait(l, done);
  } else {
    idle_cv_.wait_for(l, timeout, done);
  }
  for (uint32_t i = 0; i < runs_.size(); ++i) {
    const Run& r = runs_[i];
    if (r.job != kNoIndex && r.phase.load() == kStarted) {
      report.unfinished.emplace_back(r.job, r.gen);
    }
  }
  l.unlock();
  // The finished runs' events were queued with their outcome (under mu_):
  // delivered before the report, so an observer that records them (the
  // durable layer) has seen them all; within the timeout, or a second if that
  // is later. Not from the observer itself.
  const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  if (events_ && !events_->OnThread()) (void)events_->WaitDelivered(std::max(until, grace));
  return report;
}

}  // namespace ax::internal
