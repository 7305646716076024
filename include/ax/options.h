// File: ax/options.h
//
// Options of one job (`JobOptions`) and of a scheduler (`SchedulerOptions`).
// Plain structs: every field has a usable default.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ax/clock.h"
#include "ax/events.h"
#include "ax/retry_policy.h"
#include "ax/time.h"

namespace ax {

// What a periodic job does when a tick comes while its previous run is still
// running (SPEC 2.5).
enum class Overlap : uint8_t {
  kSkip,        // default: the tick is skipped and counted
  kBufferOne,   // one run starts as soon as the current ends; more ticks skip
  kConcurrent,  // runs in parallel, up to the worker limit
  kReplace,     // the running one is asked to stop and a new run starts
};
std::string_view OverlapName(Overlap o);

// What a periodic or cron job does with ticks that passed unseen, because the
// process was down or the clock jumped (SPEC 3.5, 2.5).
enum class Misfire : uint8_t {
  kSkip,  // default: skip them (counted); run at the next future tick
  kOnce,  // run once now, then follow the schedule
  kAll,   // run each missed tick, up to `max_catch_up`, then follow the schedule
};
std::string_view MisfireName(Misfire m);

struct JobOptions {
  // The caller's key for the job, unique among live jobs ("order-1001").
  // Empty: none; the job is named by its JobId ("#12.1"). Keys may not start
  // with '#'.
  std::string key;
  // On a duplicate key: false = AlreadyExists, true = return the live job.
  bool return_existing = false;
  RetryPolicy retry;
  // A run still going after `timeout` has its stop requested and counts as
  // failed (timed out) at once. 0 = no timeout.
  Duration timeout{0};
  // A run still going after `slow_after` raises a kSlow event. 0 = never.
  Duration slow_after{0};
  Overlap overlap = Overlap::kSkip;
  Misfire misfire = Misfire::kSkip;
  int max_catch_up = 100;  // cap for Misfire::kAll
  // A periodic job pauses itself after this many consecutive failed runs
  // (SPEC 2.6). 0 = never.
  int auto_pause_after = 10;
  // The job runs only after this one-shot job (an id's text form or a key)
  // completes successfully; its own delay counts from then (SPEC 2.9).
  std::string parent;
};

struct SchedulerOptions {
  // Time source. Null = SystemClock::Get().
  std::shared_ptr<Clock> clock;
  // Worker threads that run callbacks. 0 = number of cores.
  int workers = 0;
  // Terminal jobs (Completed, Cancelled, Dead) stay queryable this long and,
  // beyond `max_retained`, the oldest are forgotten first (max_retained / 64
  // of them at a time, at most 64, at least one).
  Duration retention = std::chrono::minutes(10);
  size_t max_retained = 100'000;
  // Most live jobs at once; submissions beyond it get Unavailable. 0 = no limit.
  size_t max_jobs = 0;
  // Dead letters kept for DeadLetters(); the oldest are dropped first.
  size_t max_dead_letters = 10'000;
  // Receives lifecycle events on one dedicated thread, in order. Must not block
  // for long; may call back into the scheduler.
  std::function<void(const Event&)> observer;
  // Called (on the event thread) for each dead letter.
  std::function<void(const Event&)> on_dead_letter;
  // Seed of the jitter generator (deterministic tests).
  uint64_t seed = 42;
  // How much later than its deadline the scheduler may start a job, so that
  // deadlines close together share one wake-up (like Linux timer slack or
  // systemd's AccuracySec). Never earlier. 0 (default): every deadline gets
  // its own wake-up, as exact as the OS allows. Applies to run timeouts and
  // slow thresholds too. Between 0 and 1 h. A deadline with another within
  // the slack of it shares the scheduler thread's wake-up; a lone one is
  // handed ahead (hand_ahead), so that a worker alone wakes for it.
  Duration timer_slack{0};
  // How long before its deadline a job may be handed to an idle worker, which
  // sleeps until the deadline and starts the job itself: one thread wakes
  // per run, not two (the scheduler thread, then a worker). The scheduler
  // thread wakes when the next deadline is half this away, and hands ahead
  // the jobs due within it. A change, pause or cancel in between takes the
  // job back; it is Waiting until it starts. A job filed inside the window
  // is handed ahead at the thread's next pass. 8 ms rather than 2: in W4
  // the scheduler thread wakes every 4 ms instead of every 1 (about 98,000
  // context switches a run against 106,000, for 92,400 fires; less CPU in 9
  // of 10 alternating pairs, by 0.9 points of a core at the median). With a
  // timer_slack, only the jobs with no other deadline within the slack of
  // theirs go to a worker. 0 turns it off. Between 0 and 1 s.
  Duration hand_ahead = std::chrono::milliseconds(8);
  // Binds worker i to the i-th of the CPUs the creating thread may run on
  // (round robin). A worker's timed wake-up then never waits behind another
  // worker on its CPU: on a 2-vCPU VM, W3's p99 lateness went from 63-79 to
  // 42-48 us, for 5-15 % more CPU (docs/performance.md). Off by default: a
  // bound worker cannot move away from a CPU that something else keeps busy.
  bool pin_workers = false;
  // The time slice each worker thread asks of Linux's CPU scheduler (EEVDF,
  // 6.12 on; older kernels ignore it), between 100 us and 100 ms. A worker
  // woken for a deadline on a busy CPU then runs sooner, and a worker that
  // woke early and spins to its deadline yields the CPU meanwhile, to a
  // worker woken there for its own (a thread with the default slice would
  // lose the CPU to busy threads for up to 1.4 ms by yielding). On a 2-vCPU
  // VM, W3's p99 lateness went from 41.1 to 36.1 us and, beside a CPU-bound
  // process, from 84 to 61 us; its median beside two such processes from 3.9
  // to 8.2 us (docs/performance.md). Callbacks that compute for long get the
  // CPU in shorter turns when they share it. 0 keeps the kernel's default
  // slice, and the spins do not yield.
  Duration worker_slice = std::chrono::microseconds(100);
};

}  // namespace ax
