// File: ax/store.h
//
// Durable jobs (SPEC §4). A function cannot be stored, so a durable job names
// a handler type registered in the process (`Scheduler::RegisterHandler`, or
// a daemon target such as "http" or "exec") and carries a payload. A
// `JobStore` keeps one `DurableJob` record per job id; `ax::DurableScheduler`
// (ax/durable.h) keeps the records and the engine in step.
//
// Two stores ship:
//   MemoryStore  - in the process, for tests and embedders that want the
//                  durable API without a file (target ax::store).
//   SqliteStore  - an embedded SQLite file in WAL mode with group commit
//                  (target ax::store_sqlite; libax itself never links SQLite).
//
// Every write is "accepted means stored" (4.3): when a write call returns OK,
// or its callback runs with OK, the change is committed. Writes from many
// threads are applied in the order they were called.
//
// Example:
//   auto store = ax::SqliteStore::Open({.path = "ax-data/ax.db"}).value();
//   ax::DurableJob j;
//   j.id = "order-1001";
//   j.handler = "http";
//   j.payload = R"({"url":"http://127.0.0.1:9000/close"})";
//   j.next_run = ax::FromUnixNanos(...);
//   auto outcome = store->Insert({j}).value()[0];  // outcome.created
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ax/job_info.h"
#include "ax/options.h"
#include "ax/retry_policy.h"
#include "ax/stats.h"
#include "ax/status.h"
#include "ax/time.h"

namespace ax {

// One durable job: what to run and when (the spec, fixed at submission but
// for live changes), and where it stands (the run state).
struct DurableJob {
  // ---- Spec.
  std::string id;       // also the idempotency key (4.4)
  std::string handler;  // handler type ("http", "exec", or an embedder's)
  std::string payload;  // handed to the handler on each run
  JobKind kind = JobKind::kOnce;
  // kOnce: either `at` (absolute) or `delay` (counted from the submission,
  // or from the parent's completion when `parent` is set).
  std::optional<Instant> at;
  Duration delay{0};
  Duration period{0};    // kEvery
  std::string cron;      // kCron
  std::string tz;        // kCron, IANA zone ("UTC" when empty)
  std::string schedule;  // the schedule as the client submitted it (display only;
                         // SetPeriod and SetCron change period, cron and tz)
  RetryPolicy retry;
  Duration timeout{0};  // 0 = none
  Overlap overlap = Overlap::kSkip;
  Misfire misfire = Misfire::kSkip;
  int max_catch_up = 100;
  std::string parent;  // id of a one-shot job this one waits for

  // ---- Run state.
  JobState state = JobState::kWaiting;
  // Next scheduled run; empty when terminal, paused (periodic), or waiting
  // for a parent.
  std::optional<Instant> next_run;
  int attempt = 0;  // attempts made in the current occurrence
  uint64_t runs = 0;
  uint64_t failures = 0;
  uint64_t skips = 0;
  // The lease of the run in flight (state kRunning): who runs it and until
  // when the lease holds. A kRunning record whose lease expired is run again
  // (4.5).
  std::string lease_owner;
  std::optional<Instant> lease_expiry;
  std::optional<Instant> run_scheduled_at;  // the in-flight run's scheduled instant
  bool recovered = false;                   // the last run was a recovery (4.5)
  std::string last_error;
  std::string reason;  // why paused / cancelled / dead
  Instant created_at;
  Instant updated_at;
  std::optional<Instant> finished_at;  // when it became terminal
};

// What Insert did with one job.
struct InsertOutcome {
  // True: stored as new. False: a live job with this id exists and was left
  // as it is (idempotency, 4.4); `job` is that job.
  bool created = false;
  DurableJob job;
};

struct ListQuery {
  std::optional<JobState> state;  // all when empty
  std::string after_id;           // keyset cursor: ids strictly greater
  size_t limit = 100;
};

// Counters of a store (for /metrics).
struct StoreStats {
  uint64_t commits = 0;  // transactions committed
  uint64_t writes = 0;   // write operations committed
  uint64_t jobs_inserted = 0;
  // Enqueue-to-commit time of each write operation, bucketed like
  // LatenessHistogram::kBoundsNs (the last bucket is everything above).
  std::array<uint64_t, LatenessHistogram::kBoundsNs.size() + 1> commit_latency_buckets{};
  uint64_t commit_latency_count = 0;
  int64_t commit_latency_sum_ns = 0;
};

// A store of durable job records. All methods are thread-safe.
class JobStore {
 public:
  using InsertCallback = std::function<void(Result<std::vector<InsertOutcome>>)>;
  using DoneCallback = std::function<void(Status)>;
  // Changes `job` in place; a non-OK status aborts the change and is returned.
  // It may run more than once, on the same stored record, if the store has to
  // try its transaction again, so it should do nothing but change `job`.
  using Mutation = std::function<Status(DurableJob& job)>;

  virtual ~JobStore() = default;

  // Stores each job unless a live (non-terminal) job has its id; a terminal
  // record with the id is replaced. The whole batch commits atomically
  // before `done` runs (on a store thread; keep it short). Ids must be
  // unique within a batch (InvalidArgument otherwise).
  virtual void InsertAsync(std::vector<DurableJob> jobs, InsertCallback done) = 0;
  // Writes whole records (insert or replace), in call order, all or none;
  // `done` (may be null) runs once they are committed.
  virtual void PutAsync(std::vector<DurableJob> records, DoneCallback done) = 0;
  // Atomically reads the record `id`, applies `fn` and writes it back.
  // NotFound when absent; fn's error otherwise.
  virtual Result<DurableJob> Mutate(std::string_view id, Mutation fn) = 0;
  // Deletes terminal records finished before `before`; returns how many.
  virtual Result<size_t> Purge(Instant before) = 0;
  // Waits until every write called before it is committed.
  virtual Status Flush() = 0;

  // ---- Reads (see every committed write).
  virtual Result<DurableJob> Get(std::string_view id) = 0;
  // Ordered by id.
  virtual Result<std::vector<DurableJob>> List(const ListQuery& q) = 0;
  // Waiting or Running jobs whose next run is in [from, before), ordered by
  // next run, plus, when `from` is empty, every Running job (to recover).
  virtual Result<std::vector<DurableJob>> LoadDue(std::optional<Instant> from, Instant before) = 0;
  // Waiting jobs that wait for `parent` (no next run yet).
  virtual Result<std::vector<DurableJob>> Children(std::string_view parent) = 0;
  // Waiting jobs that wait for a parent that is finished or no longer
  // stored: dependencies a crash left unresolved (read at start).
  virtual Result<std::vector<DurableJob>> Orphans() = 0;
  // Jobs per state, indexed by JobState.
  virtual Result<std::vector<uint64_t>> CountByState() = 0;
  virtual StoreStats GetStats() const = 0;

  // ---- Synchronous forms of the async writes.
  Result<std::vector<InsertOutcome>> Insert(std::vector<DurableJob> jobs);
  Status Put(std::vector<DurableJob> records);
};

// Records in a map, in the process: nothing survives it. Writes commit
// immediately (callbacks run on the calling thread).
class MemoryStore final : public JobStore {
 public:
  MemoryStore();
  ~MemoryStore() override;

  void InsertAsync(std::vector<DurableJob> jobs, InsertCallback done) override;
  void PutAsync(std::vector<DurableJob> records, DoneCallback done) override;
  Result<DurableJob> Mutate(std::string_view id, Mutation fn) override;
  Result<size_t> Purge(Instant before) override;
  Status Flush() override { return Status(); }
  Result<DurableJob> Get(std::string_view id) override;
  Result<std::vector<DurableJob>> List(const ListQuery& q) override;
  Result<std::vector<DurableJob>> LoadDue(std::optional<Instant> from, Instant before) override;
  Result<std::vector<DurableJob>> Children(std::string_view parent) override;
  Result<std::vector<DurableJob>> Orphans() override;
  Result<std::vector<uint64_t>> CountByState() override;
  StoreStats GetStats() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct SqliteStoreOptions {
  std::string path = "ax-data/ax.db";  // parent directories are created
  // "full": each commit is fsynced (durable across power loss);
  // "normal": the WAL is fsynced at checkpoints only (durable across a
  // process crash). Group commit amortises either over concurrent writers.
  std::string synchronous = "full";
  // Most write operations folded into one transaction.
  size_t max_batch = 4096;
};

// An embedded SQLite file in WAL mode. One committer thread takes whatever
// writes are queued, applies them in one transaction and then completes them
// all (group commit, 4.3). Reads use a separate connection. The file is
// locked (flock on PATH.lock) so that one process at a time owns it; every
// lease found at Open therefore belongs to a dead process.
// Defined in target ax::store_sqlite.
class SqliteStore final : public JobStore {
 public:
  // InvalidArgument / Unavailable (locked by another process, I/O error).
  static Result<std::unique_ptr<SqliteStore>> Open(SqliteStoreOptions options);
  ~SqliteStore() override;  // flushes and closes

  void InsertAsync(std::vector<DurableJob> jobs, InsertCallback done) override;
  void PutAsync(std::vector<DurableJob> records, DoneCallback done) override;
  Result<DurableJob> Mutate(std::string_view id, Mutation fn) override;
  Result<size_t> Purge(Instant before) override;
  Status Flush() override;
  Result<DurableJob> Get(std::string_view id) override;
  Result<std::vector<DurableJob>> List(const ListQuery& q) override;
  Result<std::vector<DurableJob>> LoadDue(std::optional<Instant> from, Instant before) override;
  Result<std::vector<DurableJob>> Children(std::string_view parent) override;
  Result<std::vector<DurableJob>> Orphans() override;
  Result<std::vector<uint64_t>> CountByState() override;
  StoreStats GetStats() const override;

  struct Impl;

 private:
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// For stores' InsertAsync: InvalidArgument naming a job of `batch` whose id
// an earlier one has (`jobs[2].id: "y" appears twice in the batch (also
// jobs[1])`); OK when the ids are distinct.
Status CheckBatchIds(const std::vector<DurableJob>& batch);

// "waiting", "running", "paused", "completed", "cancelled", "dead".
std::string_view JobStateText(JobState s);
// The inverse of JobStateText; nullopt if unknown.
std::optional<JobState> ParseJobState(std::string_view name);

}  // namespace ax
