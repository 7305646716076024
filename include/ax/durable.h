// File: ax/durable.h
//
// `ax::DurableScheduler` makes jobs survive the process (SPEC §4): every
// submission is committed to a `JobStore` first and only then handed to an
// `ax::Scheduler`; every run is recorded Running with a lease before its
// handler runs, and its outcome (success, next occurrence, retry, death) is
// recorded after. After a crash, `Start()` runs again the runs whose lease
// expired (attempt + 1, marked recovered) and applies the misfire policy of
// periodic jobs whose ticks passed while the process was down (3.5).
//
// Only jobs due within `window` (default 1 h) are held in the engine; a
// loader brings later ones in as they enter it, so memory is bounded by the
// jobs due soon, not by all stored jobs (4.2). Periodic and cron jobs stay
// in the engine once loaded. With `engine.max_jobs` set, a due job the full
// engine refuses stays in the store (its submission still succeeds) and the
// loader tries it again at each pass, earliest first: it starts late, once
// a place is free, and is counted in `DurableStats::deferred` meanwhile.
//
// Jobs run registered handler types (4.1): `RegisterHandler("email", fn)`,
// then submit DurableJob{.handler = "email", .payload = ...}. The handler's
// RunContext carries the job id as key and the durable attempt number
// (counting attempts made before a restart).
//
// Example:
//   auto store = ax::SqliteStore::Open({.path = "ax.db"}).value();
//   ax::DurableOptions o;
//   o.store = std::move(store);
//   auto d = ax::DurableScheduler::Create(std::move(o)).value();
//   (void)d->RegisterHandler("close-order", [](const ax::RunContext&, std::string_view p) {
//     return CloseOrder(p);
//   });
//   (void)d->Start();
//   ax::DurableJob j;
//   j.id = "order-1001";
//   j.handler = "close-order";
//   j.payload = "1001";
//   j.delay = std::chrono::minutes(30);
//   auto r = d->Submit(std::move(j));  // committed when it returns
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ax/scheduler.h"
#include "ax/store.h"

namespace ax {

struct DurableOptions {
  std::shared_ptr<JobStore> store;  // required
  // The engine's options. Its observer and on_dead_letter, when set, are
  // called after the durable layer has seen each event.
  SchedulerOptions engine;
  Duration window = std::chrono::hours(1);
  // How often the loader brings in jobs entering the window.
  Duration load_interval = std::chrono::seconds(1);
  // A run's lease lasts its timeout (or this, when it has none) plus
  // `lease_grace`.
  Duration lease = std::chrono::minutes(5);
  Duration lease_grace = std::chrono::seconds(30);
  // Terminal jobs are purged this long after they finished (4.7).
  Duration retention = std::chrono::hours(24 * 7);
  Duration purge_interval = std::chrono::minutes(1);
  // The lease owner written on runs; empty = "<hostname>:<pid>".
  std::string owner;
};

// What Submit did with one job.
struct SubmitResult {
  bool created = false;  // false: a live job with the id existed (4.4)
  DurableJob job;        // the stored job (the existing one when !created)
};

// Gauges and totals of the durable layer.
struct DurableStats {
  Stats engine;
  StoreStats store;
  std::vector<uint64_t> jobs_by_state;  // stored jobs per JobState
  uint64_t loaded = 0;                  // jobs held in the engine
  uint64_t deferred = 0;                // due, but refused by a full engine (max_jobs)
  uint64_t recovered = 0;               // runs recovered at Start
  Instant horizon;                      // the window's end
};

// Thread-safe.
class DurableScheduler {
 public:
  // InvalidArgument without a store or with a bad window.
  static Result<std::unique_ptr<DurableScheduler>> Create(DurableOptions options);
  ~DurableScheduler();  // Shutdown(0) unless called already; waits for its end

  // Handler types; register them all before Start().
  Status RegisterHandler(std::string type, Handler handler);

  // Recovers leased runs, applies misfire policies and loads the window;
  // then starts the loader and the purger. Call once. A stored job whose
  // handler type is not registered is paused, its reason "not loaded:
  // handler type 'x' is not registered"; Resume runs it once it is.
  Status Start();

  // Validates and commits `jobs` (one transaction), then schedules them.
  // Each job needs handler and a schedule (kind + at|delay|period|cron); an
  // empty id gets a generated one. Errors: InvalidArgument naming the field
  // (with the index in a batch), NotFound (unknown parent), ShuttingDown.
  // `done` runs on a store thread once committed.
  using SubmitCallback = std::function<void(Result<std::vector<SubmitResult>>)>;
  void SubmitAsync(std::vector<DurableJob> jobs, SubmitCallback done);
  Result<std::vector<SubmitResult>> Submit(std::vector<DurableJob> jobs);
  Result<SubmitResult> Submit(DurableJob job);

  // Live changes (2.3, 2.8), stored before they return. NotFound,
  // InvalidState (per the table of 2.3), InvalidArgument.
  Status Cancel(std::string_view id);
  Status Pause(std::string_view id);
  Status Resume(std::string_view id);
  Status SetDelay(std::string_view id, Duration delay);
  Status SetPeriod(std::string_view id, Duration period);
  Status SetCron(std::string_view id, std::string_view expr, std::string_view tz);

  // The freshest record (from the engine when loaded, else the store).
  Result<DurableJob> Get(std::string_view id);
  Result<std::vector<DurableJob>> List(const ListQuery& q);
  DurableStats GetStats();

  Scheduler& engine();
  JobStore& store();

  // Drains, then stops: stops the loader; from then on no run starts (a job
  // that comes due is left, as stored, to the next start); the runs under
  // way get `timeout` of real time to end on their own, and are recorded
  // (Scheduler::Drain); then those still going are asked to stop (2.11) and
  // the store is flushed. Such a run keeps its lease unless it succeeds, and
  // is recovered at the next start (attempt + 1, recovered); its other events
  // reach neither the store nor the observer or dead-letter hook. Submissions
  // and changes get ShuttingDown from the first moment; reads go on. A second
  // call, from any thread, returns an empty report at once (the destructor
  // waits for the first to end); from a handler, it does not wait for that
  // handler.
  ShutdownReport Shutdown(Duration timeout);

  class Impl;

 private:
  explicit DurableScheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// OK when `id` may name a durable job: 1-200 characters of [A-Za-z0-9._:-].
Status ValidateJobId(std::string_view id);

}  // namespace ax
