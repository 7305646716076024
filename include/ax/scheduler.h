// File: ax/scheduler.h  — start here.
//
// `ax::Scheduler` runs functions at future instants: once (`At`, `After`),
// every period (`Every`) or on a cron calendar (`Cron`), on a pool of worker
// threads, with retries, timeouts, overlap control, dependencies and live
// changes (`SetDelay`, `SetPeriod`, `Pause`, `Resume`, `Cancel`). It
// implements SPEC §2; rule numbers are cited below.
//
// Threads: one scheduler thread decides what is due and hands runs to the
// workers; it never runs user code and never blocks on it (2.4). Every
// method is thread-safe, returns synchronously, and may be called from inside
// a callback.
//
// Example:
//   auto s = ax::Scheduler::Create().value();
//   ax::JobOptions o;
//   o.key = "order-1001";
//   (void)s->After(std::chrono::minutes(30), [] { CloseOrder(1001); }, o);
//   ...
//   (void)s->Cancel("order-1001");  // paid in time
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ax/events.h"
#include "ax/job_id.h"
#include "ax/job_info.h"
#include "ax/options.h"
#include "ax/run_context.h"
#include "ax/stats.h"
#include "ax/status.h"
#include "ax/task.h"
#include "ax/time.h"

namespace ax {

// A registered handler type: what a durable job (which cannot store a
// function, SPEC 4.1) runs, given its payload.
using Handler = std::function<Status(const RunContext&, std::string_view payload)>;

// What Shutdown() could not finish.
struct ShutdownReport {
  // Runs still going when the timeout expired (their stop was requested).
  std::vector<JobId> unfinished;
  bool clean() const { return unfinished.empty(); }
};

class Scheduler {
 public:
  // Starts the scheduler thread and the workers. InvalidArgument for bad
  // options.
  static Result<std::unique_ptr<Scheduler>> Create(SchedulerOptions options = {});

  // Shuts down (requesting every running callback to stop) and waits for all
  // threads, however long running callbacks take: no thread outlives the
  // scheduler object (2.11). Call Shutdown(timeout) first to bound the wait.
  // Not from one of its own callbacks, whose worker it would have to join.
  virtual ~Scheduler() = default;

  // ---- Submitting (2.2). Each returns the job's id or an error:
  // InvalidArgument (bad delay/period/instant/options, 2.12), AlreadyExists
  // (live key, unless options.return_existing), NotFound (unknown parent),
  // ShuttingDown, Unavailable (max_jobs reached).

  // Runs once at `when` (at once if it has passed).
  virtual Result<JobId> At(Instant when, Task task, JobOptions options) = 0;
  // Runs once after `delay` (>= 0).
  virtual Result<JobId> After(Duration delay, Task task, JobOptions options) = 0;
  // The same with JobOptions{}: the common call, without the options to
  // build, copy and check (a fifth of an After's instructions).
  virtual Result<JobId> At(Instant when, Task task) = 0;
  virtual Result<JobId> After(Duration delay, Task task) = 0;
  // Runs every `period` (> 0), first at now + period; no drift: each deadline
  // is the previous scheduled deadline + period (2.5).
  virtual Result<JobId> Every(Duration period, Task task, JobOptions options = {}) = 0;
  // Same, first run at `first`. When `first` has passed (is before now),
  // options.misfire says what happens to the ticks that passed (SPEC 3.5);
  // `first` at now runs at once.
  virtual Result<JobId> Every(Duration period, Instant first, Task task,
                              JobOptions options = {}) = 0;
  // Runs on a cron calendar evaluated in IANA zone `tz` (SPEC 3.3).
  virtual Result<JobId> Cron(std::string_view expr, std::string_view tz, Task task,
                             JobOptions options = {}) = 0;
  // Same, with `first` as the first scheduled tick (restoring a durable job);
  // ticks already past are handled by options.misfire (SPEC 3.5).
  virtual Result<JobId> Cron(std::string_view expr, std::string_view tz, Instant first, Task task,
                             JobOptions options = {}) = 0;

  // ---- Handler types for durable jobs (4.1).
  // AlreadyExists when `type` is taken; InvalidArgument when empty.
  virtual Status RegisterHandler(std::string type, Handler handler) = 0;
  // A task that runs handler `type` with `payload`; NotFound if unregistered.
  virtual Result<Task> BindHandler(std::string_view type, std::string payload) const = 0;

  // ---- Live changes (2.3, 2.8). NotFound, InvalidState per the table of 2.3.
  virtual Status Cancel(JobRef job) = 0;
  // No run starts once Pause returned OK: a periodic job's run still queued
  // is dropped; one already started ends before the job pauses.
  virtual Status Pause(JobRef job) = 0;
  virtual Status Resume(JobRef job) = 0;
  // Next run at now + delay (from the resume, when paused).
  virtual Status SetDelay(JobRef job, Duration delay) = 0;
  // Periodic jobs only: the next run stays, later ones are `period` apart.
  virtual Status SetPeriod(JobRef job, Duration period) = 0;

  // ---- Observing (2.10).
  virtual Result<JobInfo> Info(JobRef job) const = 0;
  // The id of the live or retained job with this key.
  virtual Result<JobId> Find(std::string_view key) const = 0;
  // Jobs in `state` (all when empty), oldest first, at most `limit`.
  virtual std::vector<JobInfo> List(std::optional<JobState> state, size_t limit) const = 0;
  // The most recent dead letters (kDead events), oldest first.
  virtual std::vector<Event> DeadLetters() const = 0;
  virtual Stats GetStats() const = 0;
  virtual Instant Now() const = 0;

  // Blocks until nothing is due at the current clock instant, no run is queued
  // or running and every event was delivered, or until `timeout` of real time
  // passed. Returns whether it became idle. Meant for tests on a ManualClock.
  virtual bool WaitIdle(Duration timeout = std::chrono::seconds(10)) = 0;
  // Blocks until the scheduler thread has handled everything due at the
  // current clock instant (runs it started may still be going), or until
  // `timeout` of real time passed. For tests whose callbacks block.
  virtual bool WaitDispatched(Duration timeout = std::chrono::seconds(10)) = 0;

  // ---- Shutdown (2.11): new calls get ShuttingDown, nothing new starts,
  // running callbacks get their stop requested and are awaited up to
  // `timeout` (real time). The report lists the runs that did not finish;
  // the events of those that did reach the observer (within the timeout, or
  // a second if longer) before it returns, unless it is called from the observer. Called from a
  // callback, it does not wait for that callback, which cannot end before it
  // returns (the report lists it, still running).
  virtual ShutdownReport Shutdown(Duration timeout) = 0;
  // A graceful Shutdown: the same, except that running callbacks are not
  // asked to stop; they get `timeout` to end on their own. Shutdown after it
  // asks the ones still running to stop.
  virtual ShutdownReport Drain(Duration timeout) = 0;
};

}  // namespace ax
