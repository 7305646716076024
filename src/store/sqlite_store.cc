// SqliteStore: one SQLite file in WAL mode, written by one committer thread
// that folds whatever writes are queued into one transaction (group commit).
//
// Schema (one row per job; instants and durations are int64 nanoseconds):
//   jobs(id PRIMARY KEY, handler, payload, kind, at_ns, delay_ns, period_ns,
//        cron, tz, schedule, retry_*, timeout_ns, overlap, misfire,
//        max_catch_up, parent, state, next_run_ns, attempt, runs, failures,
//        skips, lease_owner, lease_expiry_ns, run_scheduled_ns, recovered,
//        last_error, reason, created_ns, updated_ns, finished_ns)
//   jobs_state_next (state, next_run_ns)               - the window loader
//   jobs_state      (state, id)                        - listing, counts
//   jobs_finished (finished_ns) WHERE finished_ns NOT NULL - retention purge
//   jobs_parent   (parent) WHERE parent <> ''          - dependencies
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include "ax/store.h"

namespace ax {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs(
  id TEXT PRIMARY KEY NOT NULL,
  handler TEXT NOT NULL,
  payload BLOB NOT NULL,
  kind INTEGER NOT NULL,
  at_ns INTEGER,
  delay_ns INTEGER NOT NULL,
  period_ns INTEGER NOT NULL,
  cron TEXT NOT NULL,
  tz TEXT NOT NULL,
  schedule TEXT NOT NULL,
  retry_max INTEGER NOT NULL,
  retry_backoff INTEGER NOT NULL,
  retry_base_ns INTEGER NOT NULL,
  retry_cap_ns INTEGER NOT NULL,
  retry_jitter INTEGER NOT NULL,
  timeout_ns INTEGER NOT NULL,
  overlap INTEGER NOT NULL,
  misfire INTEGER NOT NULL,
  max_catch_up INTEGER NOT NULL,
  parent TEXT NOT NULL,
  state INTEGER NOT NULL,
  next_run_ns INTEGER,
  attempt INTEGER NOT NULL,
  runs INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  skips INTEGER NOT NULL,
  lease_owner TEXT NOT NULL,
  lease_expiry_ns INTEGER,
  run_scheduled_ns INTEGER,
  recovered INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_ns INTEGER NOT NULL,
  updated_ns INTEGER NOT NULL,
  finished_ns INTEGER);
CREATE INDEX IF NOT EXISTS jobs_state_next ON jobs(state, next_run_ns);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs(finished_ns) WHERE finished_ns IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_parent ON jobs(parent) WHERE parent <> '';
)sql";

constexpr const char* kColumns =
    "id, handler, payload, kind, at_ns, delay_ns, period_ns, cron, tz, schedule, retry_max, "
    "retry_backoff, retry_base_ns, retry_cap_ns, retry_jitter, timeout_ns, overlap, misfire, "
    "max_catch_up, parent, state, next_run_ns, attempt, runs, failures, skips, lease_owner, "
    "lease_expiry_ns, run_scheduled_ns, recovered, last_error, reason, created_ns, updated_ns, "
    "finished_ns";
constexpr int kColumnCount = 35;

Status SqlError(sqlite3* db, std::string_view what) {
  return Status::Unavailable("sqlite " + std::string(what) + ": " + sqlite3_errmsg(db));
}

// A prepared statement, reset after each use.
class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(s_); }
  Status Prepare(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s_, nullptr) !=
        SQLITE_OK) {
      return SqlError(db, "prepare");
    }
    return Status();
  }
  sqlite3_stmt* get() const { return s_; }
  void Reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }

 private:
  sqlite3_stmt* s_ = nullptr;
};

void BindText(sqlite3_stmt* s, int i, std::string_view v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}
void BindOptInstant(sqlite3_stmt* s, int i, const std::optional<Instant>& t) {
  if (t) {
    sqlite3_bind_int64(s, i, ToUnixNanos(*t));
  } else {
    sqlite3_bind_null(s, i);
  }
}

void BindJob(sqlite3_stmt* s, const DurableJob& j) {
  int i = 1;
  BindText(s, i++, j.id);
  BindText(s, i++, j.handler);
  sqlite3_bind_blob(s, i++, j.payload.data(), static_cast<int>(j.payload.size()), SQLITE_STATIC);
  sqlite3_bind_int(s, i++, static_cast<int>(j.kind));
  BindOptInstant(s, i++, j.at);
  sqlite3_bind_int64(s, i++, j.delay.count());
  sqlite3_bind_int64(s, i++, j.period.count());
  BindText(s, i++, j.cron);
  BindText(s, i++, j.tz);
  BindText(s, i++, j.schedule);
  sqlite3_bind_int(s, i++, j.retry.max_attempts);
  sqlite3_bind_int(s, i++, static_cast<int>(j.retry.backoff));
  sqlite3_bind_int64(s, i++, j.retry.base.count());
  sqlite3_bind_int64(s, i++, j.retry.cap.count());
  sqlite3_bind_int(s, i++, j.retry.jitter ? 1 : 0);
  sqlite3_bind_int64(s, i++, j.timeout.count());
  sqlite3_bind_int(s, i++, static_cast<int>(j.overlap));
  sqlite3_bind_int(s, i++, static_cast<int>(j.misfire));
  sqlite3_bind_int(s, i++, j.max_catch_up);
  BindText(s, i++, j.parent);
  sqlite3_bind_int(s, i++, static_cast<int>(j.state));
  BindOptInstant(s, i++, j.next_run);
  sqlite3_bind_int(s, i++, j.attempt);
  sqlite3_bind_int64(s, i++, static_cast<int64_t>(j.runs));
  sqlite3_bind_int64(s, i++, static_cast<int64_t>(j.failures));
  sqlite3_bind_int64(s, i++, static_cast<int64_t>(j.skips));
  BindText(s, i++, j.lease_owner);
  BindOptInstant(s, i++, j.lease_expiry);
  BindOptInstant(s, i++, j.run_scheduled_at);
  sqlite3_bind_int(s, i++, j.recovered ? 1 : 0);
  BindText(s, i++, j.last_error);
  BindText(s, i++, j.reason);
  sqlite3_bind_int64(s, i++, ToUnixNanos(j.created_at));
  sqlite3_bind_int64(s, i++, ToUnixNanos(j.updated_at));
  BindOptInstant(s, i++, j.finished_at);
}

// Put's fast path: an UPDATE of the columns that change after submission
// (live changes and the run state), guarded by the columns that do not, so
// that the row is rewritten in place and only the indexes on changed columns
// are touched. When no row matches (absent, or another spec under the id)
// Put falls back to INSERT OR REPLACE.
constexpr const char* kUpdateSql =
    "UPDATE jobs SET period_ns=?1, cron=?2, tz=?3, schedule=?4, state=?5, next_run_ns=?6, "
    "attempt=?7, runs=?8, failures=?9, skips=?10, lease_owner=?11, lease_expiry_ns=?12, "
    "run_scheduled_ns=?13, recovered=?14, last_error=?15, reason=?16, updated_ns=?17, "
    "finished_ns=?18 WHERE id=?19 AND handler=?20 AND payload=?21 AND kind=?22 AND at_ns IS ?23 "
    "AND delay_ns=?24 AND retry_max=?25 AND retry_backoff=?26 AND retry_base_ns=?27 AND "
    "retry_cap_ns=?28 AND retry_jitter=?29 AND timeout_ns=?30 AND overlap=?31 AND misfire=?32 "
    "AND max_catch_up=?33 AND parent=?34 AND created_ns=?35";

void BindUpdate(sqlite3_stmt* s, const DurableJob& j) {
  sqlite3_bind_int64(s, 1, j.period.count());
  BindText(s, 2, j.cron);
  BindText(s, 3, j.tz);
  BindText(s, 4, j.schedule);
  sqlite3_bind_int(s, 5, static_cast<int>(j.state));
  BindOptInstant(s, 6, j.next_run);
  sqlite3_bind_int(s, 7, j.attempt);
  sqlite3_bind_int64(s, 8, static_cast<int64_t>(j.runs));
  sqlite3_bind_int64(s, 9, static_cast<int64_t>(j.failures));
  sqlite3_bind_int64(s, 10, static_cast<int64_t>(j.skips));
  BindText(s, 11, j.lease_owner);
  BindOptInstant(s, 12, j.lease_expiry);
  BindOptInstant(s, 13, j.run_scheduled_at);
  sqlite3_bind_int(s, 14, j.recovered ? 1 : 0);
  BindText(s, 15, j.last_error);
  BindText(s, 16, j.reason);
  sqlite3_bind_int64(s, 17, ToUnixNanos(j.updated_at));
  BindOptInstant(s, 18, j.finished_at);
  BindText(s, 19, j.id);
  BindText(s, 20, j.handler);
  sqlite3_bind_blob(s, 21, j.payload.data(), static_cast<int>(j.payload.size()), SQLITE_STATIC);
  sqlite3_bind_int(s, 22, static_cast<int>(j.kind));
  BindOptInstant(s, 23, j.at);
  sqlite3_bind_int64(s, 24, j.delay.count());
  sqlite3_bind_int(s, 25, j.retry.max_attempts);
  sqlite3_bind_int(s, 26, static_cast<int>(j.retry.backoff));
  sqlite3_bind_int64(s, 27, j.retry.base.count());
  sqlite3_bind_int64(s, 28, j.retry.cap.count());
  sqlite3_bind_int(s, 29, j.retry.jitter ? 1 : 0);
  sqlite3_bind_int64(s, 30, j.timeout.count());
  sqlite3_bind_int(s, 31, static_cast<int>(j.overlap));
  sqlite3_bind_int(s, 32, static_cast<int>(j.misfire));
  sqlite3_bind_int(s, 33, j.max_catch_up);
  BindText(s, 34, j.parent);
  sqlite3_bind_int64(s, 35, ToUnixNanos(j.created_at));
}

std::string ColText(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  int n = sqlite3_column_bytes(s, i);
  return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
}
std::optional<Instant> ColOptInstant(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return FromUnixNanos(sqlite3_column_int64(s, i));
}

DurableJob ReadJob(sqlite3_stmt* s) {
  DurableJob j;
  int i = 0;
  j.id = ColText(s, i++);
  j.handler = ColText(s, i++);
  j.payload = ColText(s, i++);
  j.kind = static_cast<JobKind>(sqlite3_column_int(s, i++));
  j.at = ColOptInstant(s, i++);
  j.delay = Duration(sqlite3_column_int64(s, i++));
  j.period = Duration(sqlite3_column_int64(s, i++));
  j.cron = ColText(s, i++);
  j.tz = ColText(s, i++);
  j.schedule = ColText(s, i++);
  j.retry.max_attempts = sqlite3_column_int(s, i++);
  j.retry.backoff = static_cast<Backoff>(sqlite3_column_int(s, i++));
  j.retry.base = Duration(sqlite3_column_int64(s, i++));
  j.retry.cap = Duration(sqlite3_column_int64(s, i++));
  j.retry.jitter = sqlite3_column_int(s, i++) != 0;
  j.timeout = Duration(sqlite3_column_int64(s, i++));
  j.overlap = static_cast<Overlap>(sqlite3_column_int(s, i++));
  j.misfire = static_cast<Misfire>(sqlite3_column_int(s, i++));
  j.max_catch_up = sqlite3_column_int(s, i++);
  j.parent = ColText(s, i++);
  j.state = static_cast<JobState>(sqlite3_column_int(s, i++));
  j.next_run = ColOptInstant(s, i++);
  j.attempt = sqlite3_column_int(s, i++);
  j.runs = static_cast<uint64_t>(sqlite3_column_int64(s, i++));
  j.failures = static_cast<uint64_t>(sqlite3_column_int64(s, i++));
  j.skips = static_cast<uint64_t>(sqlite3_column_int64(s, i++));
  j.lease_owner = ColText(s, i++);
  j.lease_expiry = ColOptInstant(s, i++);
  j.run_scheduled_at = ColOptInstant(s, i++);
  j.recovered = sqlite3_column_int(s, i++) != 0;
  j.last_error = ColText(s, i++);
  j.reason = ColText(s, i++);
  j.created_at = FromUnixNanos(sqlite3_column_int64(s, i++));
  j.updated_at = FromUnixNanos(sqlite3_column_int64(s, i++));
  j.finished_at = ColOptInstant(s, i++);
  return j;
}

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::Unavailable(std::string("sqlite: ") + (err ? err : "error") + " in " + sql);
    sqlite3_free(err);
    return s;
  }
  return Status();
}

// One queued write.
struct Op {
  enum class Kind { kInsert, kPut, kMutate, kPurge, kFlush } kind;
  std::vector<DurableJob> jobs;
  std::string id;
  JobStore::Mutation fn;
  Instant before;
  JobStore::InsertCallback insert_done;
  JobStore::DoneCallback done;
  std::function<void(Result<DurableJob>)> mutate_done;
  std::function<void(Result<size_t>)> purge_done;
  std::chrono::steady_clock::time_point enqueued;
  // Results, set by the committer.
  Status status;
  std::vector<InsertOutcome> outcomes;
  DurableJob mutated;
  size_t purged = 0;
};

}  // namespace

struct SqliteStore::Impl {
  SqliteStoreOptions options;
  int lock_fd = -1;
  sqlite3* wdb = nullptr;  // committer thread only
  sqlite3* rdb = nullptr;  // readers, under read_mu
  Stmt w_upsert, w_update, w_insert, w_get, w_purge, w_begin, w_commit, w_savepoint, w_release,
      w_rollback_to;
  std::mutex read_mu;
  Stmt r_get, r_list, r_list_state, r_due_range, r_due_to, r_running, r_children, r_orphans,
      r_count;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::unique_ptr<Op>> queue;  // guarded by mu
  bool stopping = false;                  // guarded by mu
  std::thread committer;

  // Committed batches whose callbacks are still to run, in commit order. A
  // second thread runs them (waking the writers that wait), so that the
  // committer goes on with the next transaction meanwhile.
  std::mutex done_mu;
  std::condition_variable done_cv;
  std::deque<std::vector<std::unique_ptr<Op>>> done_queue;  // guarded by done_mu
  bool done_stopping = false;                               // guarded by done_mu
  std::thread completer;

  mutable std::mutex stats_mu;
  StoreStats stats;

  ~Impl() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (committer.joinable()) committer.join();
    {
      std::lock_guard lock(done_mu);
      done_stopping = true;
    }
    done_cv.notify_all();
    if (completer.joinable()) completer.join();
    // close_v2 defers the close until the member statements are finalised.
    if (wdb != nullptr) sqlite3_close_v2(wdb);
    if (rdb != nullptr) sqlite3_close_v2(rdb);
    if (lock_fd >= 0) close(lock_fd);
  }

  Status OpenAll();
  Status PrepareAll();  // the statements of both connections
  // Runs a (bound) statement that returns no rows on the write connection,
  // then resets it; sqlite3_changes(wdb) tells what it changed.
  Status Step(Stmt& st, std::string_view what) {
    int rc = sqlite3_step(st.get());
    Status s = rc == SQLITE_DONE ? Status() : SqlError(wdb, what);
    st.Reset();
    return s;
  }
  Status PutOne(const DurableJob& j);
  void Enqueue(std::unique_ptr<Op> op);
  void Run();
  void Complete();
  Status Apply(Op& op);
  Status ApplyAlone(Op& op);
  Status ApplyInsert(Op& op);
  void Requeue(std::vector<std::unique_ptr<Op>>& batch, size_t from);
  void Finish(Op& op);
  Result<DurableJob> WGet(std::string_view id, bool* found);
  Result<std::vector<DurableJob>> ReadAll(Stmt& st);
};

Status SqliteStore::Impl::OpenAll() {
  std::filesystem::path p(options.path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::string lock_path = options.path + ".lock";
  lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return Status::Unavailable("cannot open " + lock_path);
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    return Status::Unavailable("store " + options.path + " is in use by another process");
  }
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(options.path.c_str(), &wdb, flags, nullptr) != SQLITE_OK) {
    return SqlError(wdb, "open " + options.path);
  }
  sqlite3_busy_timeout(wdb, 5000);
  std::string sync = options.synchronous == "normal" ? "NORMAL" : "FULL";
  AX_RETURN_IF_ERROR(Exec(wdb, "PRAGMA journal_mode=WAL"));
  AX_RETURN_IF_ERROR(Exec(wdb, ("PRAGMA synchronous=" + sync).c_str()));
  AX_RETURN_IF_ERROR(Exec(wdb, "PRAGMA cache_size=-65536"));
  AX_RETURN_IF_ERROR(Exec(wdb, "PRAGMA temp_store=MEMORY"));
  AX_RETURN_IF_ERROR(Exec(wdb, kSchema));
  if (sqlite3_open_v2(options.path.c_str(), &rdb, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return SqlError(rdb, "open (read) " + options.path);
  }
  sqlite3_busy_timeout(rdb, 5000);
  AX_RETURN_IF_ERROR(Exec(rdb, "PRAGMA cache_size=-65536"));
  AX_RETURN_IF_ERROR(PrepareAll());
  committer = std::thread([this] {
    pthread_setname_np(pthread_self(), "ax-committer");
    Run();
  });
  completer = std::thread([this] {
    pthread_setname_np(pthread_self(), "ax-completer");
    Complete();
  });
  return Status();
}

Status SqliteStore::Impl::PrepareAll() {
  std::string cols = kColumns;
  std::string qs = "?";
  for (int i = 1; i < kColumnCount; ++i) qs += ",?";
  AX_RETURN_IF_ERROR(
      w_upsert.Prepare(wdb, "INSERT OR REPLACE INTO jobs(" + cols + ") VALUES(" + qs + ")"));
  // Inserts a new job or replaces a terminal one; leaves a live one alone
  // (changes() == 0), in one statement.
  std::string sets;
  for (size_t b = 0, e; b < cols.size(); b = e + 2) {
    e = cols.find(", ", b);
    if (e == std::string::npos) e = cols.size();
    std::string c = cols.substr(b, e - b);
    if (c != "id") sets.append(sets.empty() ? "" : ", ").append(c).append("=excluded.").append(c);
  }
  AX_RETURN_IF_ERROR(w_insert.Prepare(wdb, "INSERT INTO jobs(" + cols + ") VALUES(" + qs +
                                               ") ON CONFLICT(id) DO UPDATE SET " + sets +
                                               " WHERE jobs.state >= 3"));
  AX_RETURN_IF_ERROR(w_update.Prepare(wdb, kUpdateSql));
  AX_RETURN_IF_ERROR(w_begin.Prepare(wdb, "BEGIN IMMEDIATE"));
  AX_RETURN_IF_ERROR(w_commit.Prepare(wdb, "COMMIT"));
  AX_RETURN_IF_ERROR(w_savepoint.Prepare(wdb, "SAVEPOINT op"));
  AX_RETURN_IF_ERROR(w_release.Prepare(wdb, "RELEASE op"));
  AX_RETURN_IF_ERROR(w_rollback_to.Prepare(wdb, "ROLLBACK TO op"));
  AX_RETURN_IF_ERROR(w_get.Prepare(wdb, "SELECT " + cols + " FROM jobs WHERE id=?"));
  AX_RETURN_IF_ERROR(w_purge.Prepare(
      wdb, "DELETE FROM jobs WHERE finished_ns IS NOT NULL AND finished_ns < ? AND state >= 3"));
  AX_RETURN_IF_ERROR(r_get.Prepare(rdb, "SELECT " + cols + " FROM jobs WHERE id=?"));
  AX_RETURN_IF_ERROR(
      r_list.Prepare(rdb, "SELECT " + cols + " FROM jobs WHERE id>? ORDER BY id LIMIT ?"));
  AX_RETURN_IF_ERROR(r_list_state.Prepare(
      rdb, "SELECT " + cols + " FROM jobs WHERE state=? AND id>? ORDER BY id LIMIT ?"));
  AX_RETURN_IF_ERROR(r_due_range.Prepare(
      rdb, "SELECT " + cols +
               " FROM jobs INDEXED BY jobs_state_next WHERE state IN (0,1) AND next_run_ns>=? AND "
               "next_run_ns<? "
               "ORDER BY next_run_ns"));
  AX_RETURN_IF_ERROR(r_due_to.Prepare(
      rdb, "SELECT " + cols +
               " FROM jobs INDEXED BY jobs_state_next WHERE state IN (0,1) AND next_run_ns<? "
               "ORDER BY next_run_ns"));
  AX_RETURN_IF_ERROR(r_running.Prepare(
      rdb,
      "SELECT " + cols + " FROM jobs WHERE state=1 AND (next_run_ns IS NULL OR next_run_ns>=?)"));
  AX_RETURN_IF_ERROR(
      r_children.Prepare(rdb, "SELECT " + cols +
                                  " FROM jobs INDEXED BY jobs_parent WHERE parent=? AND "
                                  "parent<>'' AND state=0 AND next_run_ns IS NULL"));
  AX_RETURN_IF_ERROR(r_orphans.Prepare(
      rdb, "SELECT " + cols +
               " FROM jobs AS c INDEXED BY jobs_parent WHERE c.parent<>'' AND c.state=0 AND "
               "c.next_run_ns IS NULL AND NOT EXISTS (SELECT 1 FROM jobs AS p WHERE p.id=c.parent "
               "AND p.state<3)"));
  AX_RETURN_IF_ERROR(r_count.Prepare(rdb, "SELECT state, count(*) FROM jobs GROUP BY state"));
  return Status();
}

void SqliteStore::Impl::Enqueue(std::unique_ptr<Op> op) {
  op->enqueued = std::chrono::steady_clock::now();
  std::unique_lock lock(mu);
  if (stopping) {
    lock.unlock();
    op->status = Status::ShuttingDown("the store is closing");
    Finish(*op);
    return;
  }
  queue.push_back(std::move(op));
  lock.unlock();
  cv.notify_one();
}

// The committer: drains the queue into one transaction per round.
void SqliteStore::Impl::Run() {
  std::vector<std::unique_ptr<Op>> batch;
  for (;;) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty()) return;  // stopping and drained
      size_t n = std::min(queue.size(), options.max_batch);
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue.front()));
        queue.pop_front();
      }
    }
    Status tx = Step(w_begin, "begin");
    if (tx.ok()) {
      for (size_t i = 0; i < batch.size(); ++i) {
        batch[i]->status = ApplyAlone(*batch[i]);
        if (!batch[i]->status.ok() && sqlite3_get_autocommit(wdb) != 0) {
          // SQLite rolled the whole transaction back (a full disk, say): this
          // op fails, the others go again in the next one, unharmed.
          std::rotate(batch.begin(), batch.begin() + static_cast<ptrdiff_t>(i),
                      batch.begin() + static_cast<ptrdiff_t>(i) + 1);
          Requeue(batch, 1);
          break;
        }
      }
      if (sqlite3_get_autocommit(wdb) == 0) {
        tx = Step(w_commit, "commit");
        if (!tx.ok()) (void)Exec(wdb, "ROLLBACK");
      }
    }
    auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(stats_mu);
      ++stats.commits;
      stats.writes += batch.size();
      for (auto& op : batch) {
        int64_t ns = std::chrono::duration_cast<Duration>(now - op->enqueued).count();
        size_t b = 0;
        while (b < LatenessHistogram::kBoundsNs.size() && ns >= LatenessHistogram::kBoundsNs[b]) {
          ++b;
        }
        ++stats.commit_latency_buckets[b];
        ++stats.commit_latency_count;
        stats.commit_latency_sum_ns += ns;
        if (tx.ok() && op->status.ok() && op->kind == Op::Kind::kInsert) {
          for (const auto& o : op->outcomes) stats.jobs_inserted += o.created ? 1 : 0;
        }
      }
    }
    for (auto& op : batch) {
      if (!tx.ok()) op->status = tx;
    }
    {
      std::lock_guard lock(done_mu);
      done_queue.push_back(std::move(batch));
    }
    done_cv.notify_one();
    batch.clear();  // moved from
  }
}

// The completer: runs the callbacks of committed batches in commit order.
void SqliteStore::Impl::Complete() {
  for (;;) {
    std::vector<std::unique_ptr<Op>> batch;
    {
      std::unique_lock lock(done_mu);
      done_cv.wait(lock, [&] { return done_stopping || !done_queue.empty(); });
      if (done_queue.empty()) return;  // stopping and drained
      batch = std::move(done_queue.front());
      done_queue.pop_front();
    }
    for (auto& op : batch) Finish(*op);
  }
}

Result<DurableJob> SqliteStore::Impl::WGet(std::string_view id, bool* found) {
  sqlite3_stmt* s = w_get.get();
  BindText(s, 1, id);
  int rc = sqlite3_step(s);
  *found = rc == SQLITE_ROW;
  DurableJob j;
  if (rc == SQLITE_ROW) j = ReadJob(s);
  w_get.Reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqlError(wdb, "get");
  return j;
}

Status SqliteStore::Impl::ApplyInsert(Op& op) {
  AX_RETURN_IF_ERROR(CheckBatchIds(op.jobs));
  op.outcomes.reserve(op.jobs.size());
  for (auto& j : op.jobs) {
    BindJob(w_insert.get(), j);
    AX_RETURN_IF_ERROR(Step(w_insert, "insert"));
    if (sqlite3_changes(wdb) == 0) {  // a live job has the id (4.4)
      bool found = false;
      auto old = WGet(j.id, &found);
      if (!old.ok()) return old.status();
      op.outcomes.push_back({false, std::move(*old)});
      continue;
    }
    op.outcomes.push_back({true, {}});  // the job moves in once committed (Finish)
  }
  return Status();
}

// Applies `op` so that it writes all or nothing: an op of several records
// that fails partway takes back what it wrote, and the others of the
// transaction commit.
Status SqliteStore::Impl::ApplyAlone(Op& op) {
  op.outcomes.clear();
  if (op.jobs.size() < 2) return Apply(op);  // one statement is atomic already
  AX_RETURN_IF_ERROR(Step(w_savepoint, "savepoint"));
  Status s = Apply(op);
  if (!s.ok()) (void)Step(w_rollback_to, "rollback to savepoint");
  (void)Step(w_release, "release savepoint");
  return s;
}

// Puts batch[from..] back at the head of the queue, in their order.
void SqliteStore::Impl::Requeue(std::vector<std::unique_ptr<Op>>& batch, size_t from) {
  {
    std::lock_guard lock(mu);
    for (size_t i = batch.size(); i > from; --i) queue.push_front(std::move(batch[i - 1]));
  }
  batch.resize(from);
}

Status SqliteStore::Impl::PutOne(const DurableJob& j) {
  BindUpdate(w_update.get(), j);
  AX_RETURN_IF_ERROR(Step(w_update, "put"));
  if (sqlite3_changes(wdb) > 0) return Status();
  BindJob(w_upsert.get(), j);
  return Step(w_upsert, "put");
}

Status SqliteStore::Impl::Apply(Op& op) {
  switch (op.kind) {
    case Op::Kind::kInsert:
      return ApplyInsert(op);
    case Op::Kind::kPut:
      for (const auto& j : op.jobs) AX_RETURN_IF_ERROR(PutOne(j));
      return Status();
    case Op::Kind::kMutate: {
      bool found = false;
      auto old = WGet(op.id, &found);
      if (!old.ok()) return old.status();
      if (!found) return Status::NotFound("no job \"" + op.id + "\"");
      AX_RETURN_IF_ERROR(op.fn(*old));
      AX_RETURN_IF_ERROR(PutOne(*old));
      op.mutated = std::move(*old);
      return Status();
    }
    case Op::Kind::kPurge: {
      sqlite3_bind_int64(w_purge.get(), 1, ToUnixNanos(op.before));
      AX_RETURN_IF_ERROR(Step(w_purge, "purge"));
      op.purged = static_cast<size_t>(sqlite3_changes(wdb));
      return Status();
    }
    case Op::Kind::kFlush:
      return Status();
  }
  return Status();
}

void SqliteStore::Impl::Finish(Op& op) {
  switch (op.kind) {
    case Op::Kind::kInsert:
      if (op.status.ok()) {
        for (size_t i = 0; i < op.outcomes.size(); ++i) {
          if (op.outcomes[i].created) op.outcomes[i].job = std::move(op.jobs[i]);
        }
        op.insert_done(std::move(op.outcomes));
      } else {
        op.insert_done(op.status);
      }
      break;
    case Op::Kind::kPut:
    case Op::Kind::kFlush:
      if (op.done) op.done(op.status);
      break;
    case Op::Kind::kMutate:
      if (op.status.ok()) {
        op.mutate_done(std::move(op.mutated));
      } else {
        op.mutate_done(op.status);
      }
      break;
    case Op::Kind::kPurge:
      if (op.status.ok()) {
        op.purge_done(op.purged);
      } else {
        op.purge_done(op.status);
      }
      break;
  }
}

Result<std::vector<DurableJob>> SqliteStore::Impl::ReadAll(Stmt& st) {
  std::vector<DurableJob> out;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) out.push_back(ReadJob(st.get()));
  st.Reset();
  if (rc != SQLITE_DONE) return SqlError(rdb, "read");
  return out;
}

// ---- SqliteStore

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(SqliteStoreOptions options) {
  if (options.path.empty()) return Status::InvalidArgument("store path is empty");
  if (options.synchronous != "full" && options.synchronous != "normal") {
    return Status::InvalidArgument("synchronous must be \"full\" or \"normal\"");
  }
  if (options.max_batch == 0) options.max_batch = 1;
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  AX_RETURN_IF_ERROR(impl->OpenAll());
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SqliteStore::~SqliteStore() = default;

void SqliteStore::InsertAsync(std::vector<DurableJob> jobs, InsertCallback done) {
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::kInsert;
  op->jobs = std::move(jobs);
  op->insert_done = std::move(done);
  impl_->Enqueue(std::move(op));
}

void SqliteStore::PutAsync(std::vector<DurableJob> records, DoneCallback done) {
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::kPut;
  op->jobs = std::move(records);
  op->done = std::move(done);
  impl_->Enqueue(std::move(op));
}

Result<DurableJob> SqliteStore::Mutate(std::string_view id, Mutation fn) {
  std::promise<Result<DurableJob>> p;
  auto f = p.get_future();
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::kMutate;
  op->id = std::string(id);
  op->fn = std::move(fn);
  op->mutate_done = [&p](Result<DurableJob> r) { p.set_value(std::move(r)); };
  impl_->Enqueue(std::move(op));
  return f.get();
}

Result<size_t> SqliteStore::Purge(Instant before) {
  std::promise<Result<size_t>> p;
  auto f = p.get_future();
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::kPurge;
  op->before = before;
  op->purge_done = [&p](Result<size_t> r) { p.set_value(std::move(r)); };
  impl_->Enqueue(std::move(op));
  return f.get();
}

Status SqliteStore::Flush() {
  std::promise<Status> p;
  auto f = p.get_future();
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::kFlush;
  op->done = [&p](Status s) { p.set_value(std::move(s)); };
  impl_->Enqueue(std::move(op));
  return f.get();
}

Result<DurableJob> SqliteStore::Get(std::string_view id) {
  std::lock_guard lock(impl_->read_mu);
  sqlite3_stmt* s = impl_->r_get.get();
  BindText(s, 1, id);
  int rc = sqlite3_step(s);
  DurableJob j;
  if (rc == SQLITE_ROW) j = ReadJob(s);
  impl_->r_get.Reset();
  if (rc == SQLITE_DONE) return Status::NotFound("no job \"" + std::string(id) + "\"");
  if (rc != SQLITE_ROW) return SqlError(impl_->rdb, "get");
  return j;
}

Result<std::vector<DurableJob>> SqliteStore::List(const ListQuery& q) {
  std::lock_guard lock(impl_->read_mu);
  Stmt& st = q.state ? impl_->r_list_state : impl_->r_list;
  int i = 1;
  if (q.state) sqlite3_bind_int(st.get(), i++, static_cast<int>(*q.state));
  BindText(st.get(), i++, q.after_id);
  sqlite3_bind_int64(st.get(), i++, static_cast<int64_t>(q.limit));
  return impl_->ReadAll(st);
}

Result<std::vector<DurableJob>> SqliteStore::LoadDue(std::optional<Instant> from, Instant before) {
  std::lock_guard lock(impl_->read_mu);
  if (from) {
    Stmt& st = impl_->r_due_range;
    sqlite3_bind_int64(st.get(), 1, ToUnixNanos(*from));
    sqlite3_bind_int64(st.get(), 2, ToUnixNanos(before));
    return impl_->ReadAll(st);
  }
  Stmt& st = impl_->r_due_to;
  sqlite3_bind_int64(st.get(), 1, ToUnixNanos(before));
  auto due = impl_->ReadAll(st);
  if (!due.ok()) return due;
  // Running jobs not already returned (their next run is later or absent).
  Stmt& rs = impl_->r_running;
  sqlite3_bind_int64(rs.get(), 1, ToUnixNanos(before));
  auto running = impl_->ReadAll(rs);
  if (!running.ok()) return running;
  for (auto& j : *running) due->push_back(std::move(j));
  return due;
}

Result<std::vector<DurableJob>> SqliteStore::Children(std::string_view parent) {
  std::lock_guard lock(impl_->read_mu);
  BindText(impl_->r_children.get(), 1, parent);
  return impl_->ReadAll(impl_->r_children);
}

Result<std::vector<DurableJob>> SqliteStore::Orphans() {
  std::lock_guard lock(impl_->read_mu);
  return impl_->ReadAll(impl_->r_orphans);
}

Result<std::vector<uint64_t>> SqliteStore::CountByState() {
  std::lock_guard lock(impl_->read_mu);
  std::vector<uint64_t> n(static_cast<size_t>(JobState::kDead) + 1);
  sqlite3_stmt* s = impl_->r_count.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    int st = sqlite3_column_int(s, 0);
    if (st >= 0 && st < static_cast<int>(n.size())) {
      n[st] = static_cast<uint64_t>(sqlite3_column_int64(s, 1));
    }
  }
  impl_->r_count.Reset();
  if (rc != SQLITE_DONE) return SqlError(impl_->rdb, "count");
  return n;
}

StoreStats SqliteStore::GetStats() const {
  std::lock_guard lock(impl_->stats_mu);
  return impl_->stats;
}

}  // namespace ax
