// DurableScheduler: a JobStore kept in step with an engine.
//
// Ground rules:
// - `mu_` guards `loaded_` (the jobs held in the engine, with their freshest
//   record) and `horizon_` (the window's end). Engine calls are made under
//   it, so the engine's view and `loaded_` change together. Store writes are
//   enqueued under it (PutAsync, in call order, so the last snapshot wins)
//   but never awaited under it: the store's committer runs Insert callbacks
//   that take `mu_`.
// - Engine keys: a durable job is the engine job keyed by its id. Extra runs
//   (a recovered run or misfire catch-up of a periodic job) are one-shot
//   engine jobs keyed "<id>@<n>"; ids cannot contain '@'.
// - Window: `horizon_` is raised before the loader queries the store, so a
//   job committed with next_run below the new horizon is found either by
//   the loader's query or by its own Insert callback (loaded_ dedupes).
// - Record state comes from the engine's Info after each event, except that
//   a job whose wrapped task is on a worker (`in_flight`) stays Running.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

#include <pthread.h>
#include <unistd.h>

#include "ax/cron.h"
#include "ax/durable.h"

namespace ax {
namespace {

std::pair<std::string_view, bool> SplitKey(std::string_view key) {
  size_t at = key.find('@');
  if (at == std::string_view::npos) return {key, false};
  return {key.substr(0, at), true};
}

// An engine's refusal that no later load would change: the handler type
// is not registered, or the stored schedule is one the engine rejects.
bool RefusedForGood(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kInvalidArgument;
}

std::string DefaultOwner() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// Time-ordered ids (like UUIDv7): milliseconds since the epoch, a counter,
// then random bits. New jobs land at the right edge of every id index, so a
// group commit dirties a few pages instead of one page per job.
std::string GenerateId() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char buf[40];
  snprintf(buf, sizeof(buf), "j-%012llx%06llx%08llx",
           static_cast<unsigned long long>(ms) & 0xffffffffffffULL,
           static_cast<unsigned long long>(counter.fetch_add(1) & 0xffffff),
           static_cast<unsigned long long>(rng() & 0xffffffffULL));
  return buf;
}

// The fields of a record that change after submission (live changes and
// the run state), as last written: a sync that would write the same again
// is skipped. The rest of the spec is fixed once stored; updated_at is left
// out (only the time of the sync would differ). The texts are kept as one
// hash, to keep this small for the many jobs of a window.
struct Written {
  JobState state = JobState::kWaiting;
  int attempt = 0;
  bool recovered = false;
  uint64_t runs = 0, failures = 0, skips = 0;
  Duration period{0};
  std::optional<Instant> next_run, lease_expiry, run_scheduled_at, finished_at;
  size_t texts = 0;  // lease_owner, last_error, reason, schedule, cron, tz

  static Written Of(const DurableJob& j) {
    Written w;
    w.state = j.state;
    w.attempt = j.attempt;
    w.recovered = j.recovered;
    w.runs = j.runs;
    w.failures = j.failures;
    w.skips = j.skips;
    w.period = j.period;
    w.next_run = j.next_run;
    w.lease_expiry = j.lease_expiry;
    w.run_scheduled_at = j.run_scheduled_at;
    w.finished_at = j.finished_at;
    std::hash<std::string_view> h;
    const std::string_view texts[] = {j.lease_owner, j.last_error, j.reason,
                                      j.schedule,    j.cron,       j.tz};
    for (std::string_view t : texts) {
      w.texts = (w.texts ^ h(t)) * 0x100000001b3ULL + t.size();
    }
    return w;
  }
  bool operator==(const Written&) const = default;
};

}  // namespace

Status ValidateJobId(std::string_view id) {
  if (id.empty() || id.size() > 200) return Status::InvalidArgument("id: 1 to 200 characters");
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return Status::InvalidArgument("id: only letters, digits and . _ : - are allowed");
  }
  return Status();
}

class DurableScheduler::Impl {
 public:
  explicit Impl(DurableOptions o) : options_(std::move(o)) {}
  // The engine goes first, and while engine_ still names it: its event
  // thread may be inside OnEvent until the engine's destructor joins it, and
  // OnEvent uses engine_, loaded_ and the store (members destroyed after
  // this body would be gone; unique_ptr::reset() nulls engine_ first).
  ~Impl() {
    delete engine_.get();
    (void)engine_.release();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Status Init();
  Status Start();
  void SubmitAsync(std::vector<DurableJob> jobs, SubmitCallback done);
  Status Change(std::string_view id, const std::function<Status(DurableJob&)>& in_store,
                const std::function<Status(const std::string&)>& in_engine);
  Status SetCron(std::string_view id, std::string_view expr, std::string_view tz);
  Result<DurableJob> Get(std::string_view id);
  Result<std::vector<DurableJob>> List(const ListQuery& q);
  DurableStats GetStats();
  ShutdownReport Shutdown(Duration timeout);
  void AwaitShutdown();                 // until the first Shutdown call returns
  std::atomic<bool> shut_down_{false};  // the first Shutdown call does the work

  Scheduler& engine() { return *engine_; }
  JobStore& store() { return *options_.store; }
  Status RegisterHandler(std::string type, Handler h) {
    return engine_->RegisterHandler(std::move(type), std::move(h));
  }

 private:
  struct Loaded {
    DurableJob rec;
    JobId engine_id;
    int attempt_base = 0;
    int in_flight = 0;
    // A sync ran while the job was in flight, so the record may hold a
    // state the engine has left: EndRun syncs again. Otherwise the run's
    // outcome event (which always follows EndRun) is the next sync.
    bool synced_in_flight = false;
    uint64_t failures_seen = 0;  // kFailed events of engine_id taken in
    Written written;             // what the store holds (or will, in call order)
  };

  Instant Now() const { return engine_->Now(); }
  Status Prepare(DurableJob& j, Instant now, size_t index, bool batch);
  Status LoadLocked(DurableJob rec, Instant now, bool startup);
  // REQUIRES: mu_ held. Whether `rec`, as the store holds it, belongs in the
  // engine: live, and due within the window or a child of a job it holds.
  bool LoadableLocked(const DurableJob& rec) const {
    if (rec.state != JobState::kWaiting && rec.state != JobState::kRunning) return false;
    const bool due = rec.next_run && *rec.next_run < horizon_;
    return due || (!rec.parent.empty() && !rec.next_run && loaded_.count(rec.parent) > 0);
  }
  void RefusedLocked(const DurableJob& rec, const Status& why, bool startup);
  // An extra run of a loaded job: a periodic job's catch-up run, or its run
  // recovered at Start.
  struct ExtraRun {
    std::string id;
    Instant at;  // or at once, if past
    int base = 0;
    bool recovered = false;
  };
  // REQUIRES: mu_ held. Puts `run` of `rec` into the engine; a full engine
  // leaves it in full_runs_ for the loader's next pass.
  void SubmitRunLocked(const DurableJob& rec, ExtraRun run, Instant now);
  void PauseRefused();
  Result<JobId> SubmitToEngine(const DurableJob& rec, const std::string& key, int base,
                               bool recovered, std::optional<Instant> when, bool main);
  void LoadChildrenLocked(const std::string& parent, Instant now);
  bool ResolveOrphan(DurableJob child, Instant now);
  void EndStoredChildren(const std::string& parent, Instant now);
  Task Wrap(Task inner, std::string id, int base, bool recovered);
  void BeginRun(const std::string& id, const RunContext& ctx, int attempt, bool recovered);
  void EndRun(const std::string& id);
  // Once the drain's time is up (stopping_), the runs still going keep
  // their leases: only a success is recorded, and passed on to the hooks (a
  // periodic job's next tick is in the record its success event writes; a
  // tick scheduled after a failure is not).
  bool Withheld(const Event& ev) const {
    return stopping_ && ev.type != EventType::kSucceeded && ev.type != EventType::kCompleted;
  }
  void OnEvent(const Event& ev);
  // Copies the engine's view of `l` into its record and enqueues the write,
  // unless the record's changeable fields equal the last write's and nobody
  // waits for the commit (`done` null). Erases `l` when terminal.
  void SyncLocked(const std::string& id, Loaded& l, std::function<void(Status)> done);
  void LoaderLoop();
  // Extends the leases of runs in flight past half their length (one write).
  void RenewLeases(Instant now);
  Duration LeaseLength(const DurableJob& r) const {
    return (r.timeout > Duration(0) ? r.timeout : options_.lease) + options_.lease_grace;
  }
  static void Wait(std::future<Status>& f) { (void)f.get(); }

  DurableOptions options_;
  std::unique_ptr<Scheduler> engine_;
  std::atomic<uint64_t> aux_seq_{0};
  std::atomic<uint64_t> recovered_{0};

  std::mutex mu_;
  std::unordered_map<std::string, Loaded> loaded_;  // guarded by mu_
  Instant horizon_;                                 // guarded by mu_
  // Jobs the engine refused for good (RefusedLocked): id, reason.
  std::vector<std::pair<std::string, std::string>> refused_;  // guarded by mu_
  // Jobs the engine was too full to take (max_jobs): the loader tries them
  // again at each pass, earliest first, before the window's new ones.
  struct Deferred {
    Instant next_run;
    bool startup;  // read at Start (LoadLocked's `startup`)
  };
  std::unordered_map<std::string, Deferred> full_;  // guarded by mu_
  std::vector<ExtraRun> full_runs_;                 // guarded by mu_
  size_t retrying_ = 0;  // taken out of full_ by the loader, not yet loaded; guarded by mu_
  // REQUIRES: mu_ held. Takes out of full_ the earliest of them, as many as
  // the engine has places for: the rest would be refused again.
  std::vector<std::pair<std::string, Deferred>> TakeDeferredLocked();
  // Ids changed in the store (Change) while the loader's query ran, whose
  // copies it read may be stale.
  bool loading_ = false;                         // guarded by mu_
  std::set<std::string> changed_while_loading_;  // guarded by mu_
  bool started_ = false;                         // guarded by mu_

  // Set by Shutdown after the drain, before it asks the runs to stop.
  std::atomic<bool> stopping_{false};
  // The first Shutdown's end, which the destructor waits for.
  std::mutex shut_mu_;
  std::condition_variable shut_cv_;
  bool shut_done_ = false;  // guarded by shut_mu_

  std::mutex loader_mu_;
  std::condition_variable loader_cv_;
  bool stop_ = false;  // guarded by loader_mu_
  std::thread loader_;
  Instant next_lease_scan_;  // loader thread only

  std::mutex counts_mu_;
  std::vector<uint64_t> counts_;
  std::chrono::steady_clock::time_point counts_at_{};
};

Status DurableScheduler::Impl::Init() {
  if (!options_.store) return Status::InvalidArgument("store: required");
  if (options_.window <= Duration(0)) return Status::InvalidArgument("window: must be > 0");
  if (options_.load_interval <= Duration(0)) {
    return Status::InvalidArgument("load_interval: must be > 0");
  }
  if (options_.owner.empty()) options_.owner = DefaultOwner();
  SchedulerOptions eo = options_.engine;
  auto user_observer = eo.observer;
  eo.observer = [this, user_observer](const Event& ev) {
    if (Withheld(ev)) return;
    OnEvent(ev);
    if (user_observer) user_observer(ev);
  };
  if (auto user_dead = eo.on_dead_letter) {
    eo.on_dead_letter = [this, user_dead](const Event& ev) {
      if (!Withheld(ev)) user_dead(ev);
    };
  }
  // The store keeps terminal jobs; the engine need not keep them long.
  eo.retention = std::min<Duration>(eo.retention, std::chrono::minutes(1));
  auto e = Scheduler::Create(std::move(eo));
  if (!e.ok()) return e.status();
  engine_ = std::move(e).value();
  return Status();
}

// ---- Submitting

Status DurableScheduler::Impl::Prepare(DurableJob& j, Instant now, size_t index, bool batch) {
  std::string where = batch ? "jobs[" + std::to_string(index) + "]." : "";
  auto bad = [&](const std::string& field, const std::string& why) {
    return Status::InvalidArgument(where + field + ": " + why);
  };
  if (j.id.empty()) j.id = GenerateId();
  if (Status s = ValidateJobId(j.id); !s.ok()) return Status::InvalidArgument(where + s.message());
  if (j.handler.empty()) return bad("handler", "required");
  if (!engine_->BindHandler(j.handler, "").ok()) {
    return bad("handler", "no handler type \"" + j.handler + "\" is registered");
  }
  if (Status s = j.retry.Validate(); !s.ok()) return Status::InvalidArgument(where + s.message());
  if (j.timeout < Duration(0)) return bad("timeout", "must be >= 0");
  j.state = JobState::kWaiting;
  j.created_at = j.updated_at = now;
  j.attempt = 0;
  j.runs = j.failures = j.skips = 0;
  j.finished_at.reset();
  j.lease_owner.clear();
  j.lease_expiry.reset();
  j.run_scheduled_at.reset();
  j.recovered = false;
  switch (j.kind) {
    case JobKind::kOnce:
      if (j.at) {
        j.next_run = j.at;
      } else {
        if (j.delay < Duration(0)) return bad("schedule.in", "must be >= 0");
        auto t = AddDuration(now, j.delay);
        if (!t) return bad("schedule.in", "too large");
        j.next_run = t;
      }
      break;
    case JobKind::kEvery: {
      if (j.period <= Duration(0)) return bad("schedule.every", "must be > 0");
      auto t = AddDuration(now, j.period);
      if (!t) return bad("schedule.every", "too large");
      j.next_run = t;
      break;
    }
    case JobKind::kCron: {
      if (j.cron.empty()) return bad("schedule.cron", "required");
      if (j.tz.empty()) j.tz = "UTC";
      auto c = CronSchedule::Parse(j.cron, j.tz);
      if (!c.ok()) return bad("schedule.cron", c.status().message());
      j.next_run = c->Next(now);
      if (!j.next_run) return bad("schedule.cron", "never fires after now");
      break;
    }
  }
  if (!j.parent.empty()) {
    if (j.parent == j.id) return bad("parent", "a job cannot wait for itself");
    auto p = Get(j.parent);
    if (!p.ok()) return Status::NotFound(where + "parent: no job \"" + j.parent + "\"");
    if (p->kind != JobKind::kOnce) return bad("parent", "must be a one-shot job");
    if (p->state == JobState::kCancelled || p->state == JobState::kDead) {
      j.state = p->state;  // as the engine ends a waiting child (SPEC 2.3, 2.9)
      j.reason = "parent " + j.parent + " is " + std::string(JobStateText(p->state));
      j.finished_at = now;
      j.next_run.reset();
    } else if (p->state != JobState::kCompleted) {
      j.next_run.reset();  // scheduled when the parent completes
    }
  }
  return Status();
}

void DurableScheduler::Impl::SubmitAsync(std::vector<DurableJob> jobs, SubmitCallback done) {
  if (shut_down_) {
    done(Status::ShuttingDown("the scheduler is shutting down"));
    return;
  }
  Instant now = Now();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (Status s = Prepare(jobs[i], now, i, jobs.size() > 1); !s.ok()) {
      done(s);
      return;
    }
  }
  options_.store->InsertAsync(
      std::move(jobs), [this, done = std::move(done)](Result<std::vector<InsertOutcome>> r) {
        if (!r.ok()) {
          done(r.status());
          return;
        }
        std::vector<SubmitResult> out;
        out.reserve(r->size());
        {
          std::lock_guard lock(mu_);
          Instant load_now = Now();
          for (auto& o : *r) {
            if (!o.created) {
              auto it = loaded_.find(o.job.id);
              out.push_back({false, it != loaded_.end() ? it->second.rec : std::move(o.job)});
              continue;
            }
            const DurableJob& j = o.job;
            bool parent_loaded = !j.parent.empty() && loaded_.count(j.parent) > 0;
            bool due = j.next_run && *j.next_run < horizon_;
            if (started_ && j.state == JobState::kWaiting && (due || parent_loaded)) {
              (void)LoadLocked(j, load_now, false);
            }
            out.push_back({true, std::move(o.job)});
          }
        }
        done(std::move(out));
      });
}

// ---- Loading into the engine

Result<JobId> DurableScheduler::Impl::SubmitToEngine(const DurableJob& rec, const std::string& key,
                                                     int base, bool recovered,
                                                     std::optional<Instant> when, bool main) {
  auto task = engine_->BindHandler(rec.handler, rec.payload);
  if (!task.ok()) return task.status();
  JobOptions o;
  o.key = key;
  o.retry = rec.retry;
  o.retry.max_attempts = std::max(1, rec.retry.max_attempts - base);
  o.timeout = rec.timeout;
  o.overlap = rec.overlap;
  o.misfire = rec.misfire;
  o.max_catch_up = rec.max_catch_up;
  Task t = Wrap(std::move(task).value(), rec.id, base, recovered);
  if (!main) return engine_->At(when.value_or(Now()), std::move(t), std::move(o));
  bool wait_parent = !rec.parent.empty() && !rec.next_run && loaded_.count(rec.parent) > 0;
  if (wait_parent) o.parent = rec.parent;
  switch (rec.kind) {
    case JobKind::kOnce:
      if (wait_parent && !rec.at) return engine_->After(rec.delay, std::move(t), std::move(o));
      return engine_->At(when.value_or(rec.next_run.value_or(Now())), std::move(t), std::move(o));
    case JobKind::kEvery:
      if (wait_parent) return engine_->Every(rec.period, std::move(t), std::move(o));
      return engine_->Every(rec.period, when.value_or(Now()), std::move(t), std::move(o));
    case JobKind::kCron:
      return engine_->Cron(rec.cron, rec.tz, std::move(t), std::move(o));
  }
  return Status::Internal("unknown job kind");
}

// REQUIRES: mu_ held. Puts `rec` into the engine: recovery of a leased run
// (4.5), misfire policy for ticks passed (3.5), then its schedule.
Status DurableScheduler::Impl::LoadLocked(DurableJob rec, Instant now, bool startup) {
  if (loaded_.count(rec.id) > 0) return Status();
  const std::string id = rec.id;
  Loaded l;
  l.written = Written::Of(rec);  // as read from the store
  int base = rec.attempt;
  bool recover = rec.state == JobState::kRunning && (startup || rec.lease_owner != options_.owner);
  std::optional<Instant> when;
  std::vector<Instant> extra_runs;  // scheduled_at of extra one-shot runs
  if (recover) {
    rec.recovered = true;
    if (rec.kind == JobKind::kOnce) {
      when = now;  // the main job is the re-run
    } else {
      extra_runs.push_back(rec.run_scheduled_at.value_or(now));
      // The record's next run may still be the tick in flight (BeginRun
      // keeps it): the schedule and its misfires go on after that tick, or
      // it ran twice more after a restart (skipped, with `skip`).
      if (rec.run_scheduled_at && rec.next_run && *rec.next_run <= *rec.run_scheduled_at) {
        if (rec.kind == JobKind::kEvery) {
          rec.next_run = *rec.run_scheduled_at + rec.period;
        } else if (auto c = CronSchedule::Parse(rec.cron, rec.tz); c.ok()) {
          rec.next_run = c->Next(*rec.run_scheduled_at);
        }
      }
    }
  } else if (rec.kind != JobKind::kOnce) {
    base = 0;  // a periodic job restarts its occurrence's attempts
  }
  rec.state = JobState::kWaiting;
  rec.lease_owner.clear();
  rec.lease_expiry.reset();
  if (rec.kind == JobKind::kEvery && rec.next_run && *rec.next_run < now) {
    // Ticks passed unseen: the next future tick keeps the phase.
    int64_t missed = (now - *rec.next_run) / rec.period + 1;
    Instant next = *rec.next_run + rec.period * missed;
    if (rec.misfire == Misfire::kSkip) {
      rec.skips += static_cast<uint64_t>(missed);
    } else {
      int64_t n = rec.misfire == Misfire::kOnce ? 1 : std::min<int64_t>(missed, rec.max_catch_up);
      for (int64_t i = n; i >= 1; --i) extra_runs.push_back(next - rec.period * i);
      rec.skips += static_cast<uint64_t>(missed - n);
    }
    rec.next_run = next;
  } else if (rec.kind == JobKind::kCron && rec.next_run && *rec.next_run < now) {
    auto c = CronSchedule::Parse(rec.cron, rec.tz);
    std::vector<Instant> missed;
    for (std::optional<Instant> t = rec.next_run; c.ok() && t && *t < now && missed.size() < 100000;
         t = c->Next(*t)) {
      missed.push_back(*t);
    }
    size_t n = rec.misfire == Misfire::kSkip   ? 0
               : rec.misfire == Misfire::kOnce ? std::min<size_t>(1, missed.size())
                                               : std::min<size_t>(missed.size(), rec.max_catch_up);
    extra_runs.insert(extra_runs.end(), missed.end() - static_cast<std::ptrdiff_t>(n),
                      missed.end());
    rec.skips += missed.size() - n;
  }
  if (rec.kind == JobKind::kEvery) when = rec.next_run;
  l.attempt_base = rec.kind == JobKind::kOnce ? base : 0;
  auto eid =
      SubmitToEngine(rec, id, l.attempt_base, recover && rec.kind == JobKind::kOnce, when, true);
  if (!eid.ok()) {
    RefusedLocked(rec, eid.status(), startup);
    return eid.status();
  }
  if (recover) recovered_.fetch_add(1);
  if (!full_.empty()) full_.erase(id);  // refused before, loaded since by a change
  l.engine_id = *eid;
  l.rec = std::move(rec);
  auto [it, inserted] = loaded_.emplace(id, std::move(l));
  for (Instant at : extra_runs) {
    SubmitRunLocked(it->second.rec, ExtraRun{id, at, recover ? base : 0, recover}, now);
  }
  bool once = it->second.rec.kind == JobKind::kOnce;
  SyncLocked(id, it->second, nullptr);  // may erase `it`
  if (once) LoadChildrenLocked(id, now);
  return Status();
}

void DurableScheduler::Impl::SubmitRunLocked(const DurableJob& rec, ExtraRun run, Instant now) {
  std::string key = run.id + "@" + std::to_string(aux_seq_.fetch_add(1));
  auto eid = SubmitToEngine(rec, key, run.base, run.recovered, std::max(run.at, now), false);
  if (!eid.ok() && eid.status().code() == StatusCode::kUnavailable) {
    full_runs_.push_back(std::move(run));
  }
}

// A job the engine refused to load for good (its handler type is not
// registered, as after a restart without it, or its stored schedule is one
// the engine rejects): the window has passed it, so no query of the loader
// would find it again. It is paused with the reason (PauseRefused), in
// sight of List and Info, and runs on a Resume once that is fixed. Others
// (shutting down; a parent that ended meanwhile, whose orphans Start
// resolves) leave the record as it is; a full engine's refusal (max_jobs)
// too, and the loader tries it again (full_).
void DurableScheduler::Impl::RefusedLocked(const DurableJob& rec, const Status& why, bool startup) {
  if (why.code() == StatusCode::kUnavailable) {
    full_.insert_or_assign(rec.id, Deferred{rec.next_run.value_or(kInstantMax), startup});
  }
  if (!RefusedForGood(why)) return;
  refused_.emplace_back(rec.id, "not loaded: " + why.message());
}

// Without mu_, by the thread that loaded (Start, the loader, a change; a
// submission's refusals wait for the loader's next pass): each a
// read-modify-write of the stored record, so that a change committed since
// the load read it (a cancel) is not undone.
void DurableScheduler::Impl::PauseRefused() {
  std::vector<std::pair<std::string, std::string>> refused;
  {
    std::lock_guard lock(mu_);
    refused.swap(refused_);
  }
  const Instant now = Now();
  for (const auto& r : refused) {
    const std::string& why = r.second;
    (void)options_.store->Mutate(r.first, [&](DurableJob& j) {
      if (j.state != JobState::kWaiting && j.state != JobState::kRunning) {
        return Status::InvalidState("changed since it was read");
      }
      j.state = JobState::kPaused;
      j.reason = why;
      j.lease_owner.clear();
      j.lease_expiry.reset();
      j.run_scheduled_at.reset();
      j.updated_at = now;
      return Status();
    });
  }
}

void DurableScheduler::Impl::LoadChildrenLocked(const std::string& parent, Instant now) {
  auto children = options_.store->Children(parent);
  if (!children.ok()) return;
  for (auto& c : *children) (void)LoadLocked(std::move(c), now, false);
}

// A child whose parent finished, or went, while no process ran it (a crash
// between the parent's outcome and the child's release), or whose parent a
// change ended in the store (EndStoredChildren), or that a resume found
// after its parent ended (Change): released as the engine would have (after
// the parent's success), and loaded if due within the window, or ended like
// its parent (docs/engine.md); true when ended. Awaits its write: called
// without mu_.
bool DurableScheduler::Impl::ResolveOrphan(DurableJob c, Instant now) {
  auto p = options_.store->Get(c.parent);
  if (p.ok() && p->state == JobState::kCompleted) {
    const Instant base = p->finished_at.value_or(now);
    if (c.kind == JobKind::kOnce) c.next_run = c.at ? *c.at : base + c.delay;
    if (c.kind == JobKind::kEvery) c.next_run = base + c.period;
    if (c.kind == JobKind::kCron) {
      auto s = CronSchedule::Parse(c.cron, c.tz);
      if (s.ok()) c.next_run = s->Next(now);
    }
  }
  if (!c.next_run) {
    const JobState ps = p.ok() ? p->state : JobState::kCancelled;
    c.state = ps == JobState::kDead ? JobState::kDead : JobState::kCancelled;
    c.reason = !p.ok() ? "parent " + c.parent + " is no longer stored"
               : ps == JobState::kCompleted
                   ? "schedule.cron: never fires after now"
                   : "parent " + c.parent + " is " + std::string(JobStateText(ps));
    c.finished_at = now;
  }
  c.updated_at = now;
  (void)options_.store->Put({c});
  if (!c.next_run) return true;
  std::lock_guard lock(mu_);  // its callers hold none
  if (*c.next_run < horizon_) (void)LoadLocked(std::move(c), now, true);
  return false;
}

// ---- Runs

Task DurableScheduler::Impl::Wrap(Task inner, std::string id, int base, bool recovered) {
  return [this, inner = std::move(inner), id = std::move(id), base,
          recovered](const RunContext& ctx) mutable -> Status {
    int attempt = base + ctx.attempt();
    BeginRun(id, ctx, attempt, recovered);
    struct End {
      Impl* self;
      const std::string& id;
      ~End() { self->EndRun(id); }
    } end{this, id};
    RunContext durable_ctx(ctx.id(), id, attempt, ctx.scheduled_at(), ctx.stop_token());
    return inner(durable_ctx);
  };
}

// Records the run as Running with a lease and waits for the commit, so the
// run is recovered if the process dies while it runs (4.5).
void DurableScheduler::Impl::BeginRun(const std::string& id, const RunContext& ctx, int attempt,
                                      bool recovered) {
  std::promise<Status> p;
  auto f = p.get_future();
  {
    std::lock_guard lock(mu_);
    auto it = loaded_.find(id);
    if (it == loaded_.end()) return;
    Loaded& l = it->second;
    ++l.in_flight;
    DurableJob& r = l.rec;
    Instant now = Now();
    r.state = JobState::kRunning;
    r.lease_owner = options_.owner;
    r.lease_expiry = now + LeaseLength(r);
    r.run_scheduled_at = ctx.scheduled_at();
    r.attempt = attempt;
    r.recovered = recovered;
    ++r.runs;
    r.updated_at = now;
    l.written = Written::Of(r);
    options_.store->PutAsync({r}, [&p](Status s) { p.set_value(std::move(s)); });
  }
  Wait(f);
}

void DurableScheduler::Impl::EndRun(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = loaded_.find(id);
  if (it == loaded_.end()) return;
  Loaded& l = it->second;
  // Past the drain, the run's success event alone may write (Withheld).
  if (--l.in_flight == 0 && l.synced_in_flight && !stopping_) SyncLocked(id, l, nullptr);
}

void DurableScheduler::Impl::SyncLocked(const std::string& id, Loaded& l,
                                        std::function<void(Status)> done) {
  DurableJob& r = l.rec;
  Instant now = Now();
  l.synced_in_flight = l.in_flight > 0;
  auto info = engine_->Info(id);
  bool terminal = false;
  if (info.ok() && info->id == l.engine_id) {
    terminal = IsTerminal(info->state);
    // The engine runs the job but no wrapped task is on a worker: BeginRun
    // has yet to record the run with its lease (or EndRun has just ended it
    // and the outcome event follows). The record keeps its run state until
    // then; a Running record without a lease would be recovered for nothing.
    bool unrecorded = !terminal && l.in_flight == 0 && info->state == JobState::kRunning;
    if (!unrecorded) {
      r.state = (l.in_flight > 0 && !terminal) ? JobState::kRunning : info->state;
      if (r.state != JobState::kRunning) {
        // A paused one-shot keeps its deadline: the engine shows none, and a
        // record without one was never loaded again after a restart (lost).
        if (r.state != JobState::kPaused || r.kind != JobKind::kOnce || info->next_run) {
          r.next_run = info->next_run;
        }
        r.lease_owner.clear();
        r.lease_expiry.reset();
        r.run_scheduled_at.reset();
      } else if (info->next_run) {
        r.next_run = info->next_run;
      }
    }
    // r.attempt is set by BeginRun (attempts made); the engine's Info names
    // the next attempt instead.
    r.reason = info->reason;
    if (r.kind == JobKind::kEvery) r.period = info->period;
    if (r.kind == JobKind::kCron && !info->cron.empty()) {
      r.cron = info->cron;
      r.tz = info->tz;
    }
    if (terminal) {
      r.next_run.reset();
      r.finished_at = now;
      // The events of the run that ended the job may still be on their way
      // (a timeout's kFailed follows its kTimedOut; EndRun may come before
      // both), and find the job gone: what they carry is read here.
      if (info->failures > l.failures_seen) {
        r.failures += info->failures - l.failures_seen;
        r.last_error = info->last_error;
      }
    }
  }
  Written w = Written::Of(r);
  if (!done && w == l.written) {  // the store holds this very state already
    if (terminal) loaded_.erase(id);
    return;
  }
  r.updated_at = now;
  std::vector<DurableJob> records;
  if (terminal) {
    records.push_back(std::move(r));
    loaded_.erase(id);  // `l` and `r` are gone
  } else {
    l.written = w;
    records.push_back(r);
  }
  options_.store->PutAsync(std::move(records), std::move(done));
}

void DurableScheduler::Impl::OnEvent(const Event& ev) {
  // A run's start is recorded with its lease (BeginRun), a slow run is
  // no change of state.
  if (ev.key.empty() || ev.type == EventType::kStarted || ev.type == EventType::kSlow) return;
  auto [id_view, aux] = SplitKey(ev.key);
  std::string id(id_view);
  std::lock_guard lock(mu_);
  auto it = loaded_.find(id);
  if (it == loaded_.end()) return;
  Loaded& l = it->second;
  if (!aux && ev.id != l.engine_id) return;  // an engine job since replaced
  DurableJob& r = l.rec;
  switch (ev.type) {
    case EventType::kFailed:
      ++r.failures;
      if (!aux) ++l.failures_seen;
      r.last_error = ev.message;
      break;
    case EventType::kTimedOut:
      r.last_error = ev.message.empty() ? "timed out" : ev.message;
      break;
    case EventType::kSkipped:
      r.skips += ev.count;
      break;
    case EventType::kDead:
      if (!ev.message.empty()) r.last_error = ev.message;
      break;
    default:
      break;
  }
  SyncLocked(id, l, nullptr);
}

// ---- Live changes

Status DurableScheduler::Impl::Change(std::string_view id_view,
                                      const std::function<Status(DurableJob&)>& in_store,
                                      const std::function<Status(const std::string&)>& in_engine) {
  if (shut_down_) return Status::ShuttingDown("the scheduler is shutting down");
  std::string id(id_view);
  std::promise<Status> p;
  auto f = p.get_future();
  bool in_memory = false;
  {
    std::lock_guard lock(mu_);
    auto it = loaded_.find(id);
    if (it != loaded_.end()) {
      in_memory = true;
      AX_RETURN_IF_ERROR(in_engine(id));
      it = loaded_.find(id);
      if (it != loaded_.end()) {
        SyncLocked(id, it->second, [&p](Status s) { p.set_value(std::move(s)); });
      } else {
        p.set_value(Status());
      }
    }
  }
  if (in_memory) return f.get();
  // Not held in the engine: change the stored record.
  Instant now = Now();
  auto r = options_.store->Mutate(id, [&](DurableJob& j) {
    AX_RETURN_IF_ERROR(in_store(j));
    j.updated_at = now;
    if (IsTerminal(j.state)) j.finished_at = now;
    return Status();
  });
  if (!r.ok()) return r.status();
  if (IsTerminal(r->state)) EndStoredChildren(id, now);  // SPEC 2.9, beyond the window
  Status loaded;
  bool orphan = false;
  {
    std::lock_guard lock(mu_);
    if (loading_) changed_while_loading_.insert(id);
    if (auto it = loaded_.find(id); it != loaded_.end()) {
      (void)in_engine(id);  // the loader took it in meanwhile
      if (auto it2 = loaded_.find(id); it2 != loaded_.end()) SyncLocked(id, it2->second, nullptr);
      return Status();
    }
    // A child resumed while its parent is held waits for it there.
    if (started_ && r->state == JobState::kWaiting && LoadableLocked(*r)) {
      loaded = LoadLocked(*r, Now(), false);
    } else if (started_ && r->state == JobState::kWaiting && !r->parent.empty() && !r->next_run) {
      // A child waiting in the store for a parent the engine does not hold
      // (resumed after a pause made there): a parent not yet loaded takes it
      // in (LoadChildrenLocked); one that ended meanwhile released or ended
      // only the children the engine held, so this one is resolved here.
      orphan = true;
    }
  }
  if (orphan) {
    (void)options_.store->Flush();  // the parent's end was enqueued before it left loaded_
    auto parent = options_.store->Get(r->parent);
    auto waiting = options_.store->Get(id);
    if ((!parent.ok() || IsTerminal(parent->state)) && waiting.ok() &&
        waiting->state == JobState::kWaiting && !waiting->next_run) {
      if (ResolveOrphan(*waiting, now)) EndStoredChildren(id, now);
    }
  }
  // Refused for good, it is paused again, and the caller told why.
  if (!RefusedForGood(loaded)) return Status();
  PauseRefused();
  return loaded;
}

// The children waiting in the store for a parent that a change ended there
// (a cancel of a job beyond the window): ended like it, down the chain.
// Without mu_: the writes are awaited.
void DurableScheduler::Impl::EndStoredChildren(const std::string& parent, Instant now) {
  auto children = options_.store->Children(parent);
  if (!children.ok()) return;
  for (DurableJob& c : *children) {
    const std::string id = c.id;
    ResolveOrphan(std::move(c), now);
    EndStoredChildren(id, now);
  }
}

Status DurableScheduler::Impl::SetCron(std::string_view id_view, std::string_view expr,
                                       std::string_view tz) {
  if (shut_down_) return Status::ShuttingDown("the scheduler is shutting down");
  std::string id(id_view);
  std::string e(expr);
  std::string z = tz.empty() ? "UTC" : std::string(tz);
  if (e.empty()) return Status::InvalidArgument("cron: required");
  auto cron = CronSchedule::Parse(e, z);
  if (!cron.ok()) return Status::InvalidArgument("cron: " + cron.status().message());
  std::promise<Status> p;
  auto f = p.get_future();
  bool loaded = false;
  {
    std::lock_guard lock(mu_);
    auto it = loaded_.find(id);
    if (it != loaded_.end()) {
      DurableJob rec = it->second.rec;
      if (rec.kind != JobKind::kCron)
        return Status::InvalidState("job " + id + " is not a cron job");
      if (IsTerminal(rec.state)) return Status::InvalidState("job " + id + " has finished");
      rec.cron = e;
      rec.tz = z;
      rec.next_run = cron->Next(Now());
      (void)engine_->Cancel(it->second.engine_id);
      loaded_.erase(it);
      rec.state = JobState::kWaiting;
      AX_RETURN_IF_ERROR(LoadLocked(rec, Now(), false));
      auto it2 = loaded_.find(id);
      if (it2 == loaded_.end()) return Status();
      SyncLocked(id, it2->second, [&p](Status s) { p.set_value(std::move(s)); });
      loaded = true;
    }
  }
  // Awaited without mu_: the store's committer runs Insert callbacks that take
  // it, in order, before this write's (a concurrent Submit deadlocked here).
  if (loaded) return f.get();
  return Change(
      id,
      [&](DurableJob& j) {
        if (j.kind != JobKind::kCron)
          return Status::InvalidState("job " + id + " is not a cron job");
        if (IsTerminal(j.state)) return Status::InvalidState("job " + id + " has finished");
        j.cron = e;
        j.tz = z;
        j.next_run = cron->Next(Now());
        return Status();
      },
      [](const std::string&) { return Status(); });
}

// ---- Reads

Result<DurableJob> DurableScheduler::Impl::Get(std::string_view id) {
  {
    std::lock_guard lock(mu_);
    auto it = loaded_.find(std::string(id));
    if (it != loaded_.end()) return it->second.rec;
  }
  return options_.store->Get(id);
}

Result<std::vector<DurableJob>> DurableScheduler::Impl::List(const ListQuery& q) {
  auto r = options_.store->List(q);
  if (!r.ok()) return r;
  std::lock_guard lock(mu_);
  for (auto& j : *r) {
    auto it = loaded_.find(j.id);
    if (it != loaded_.end()) j = it->second.rec;
  }
  return r;
}

DurableStats DurableScheduler::Impl::GetStats() {
  DurableStats s;
  s.engine = engine_->GetStats();
  s.store = options_.store->GetStats();
  s.recovered = recovered_.load();
  {
    std::lock_guard lock(mu_);
    s.loaded = loaded_.size();
    s.deferred = full_.size() + full_runs_.size() + retrying_;
    s.horizon = horizon_;
  }
  std::lock_guard lock(counts_mu_);
  auto now = std::chrono::steady_clock::now();
  if (counts_.empty() || now - counts_at_ > std::chrono::seconds(1)) {
    auto c = options_.store->CountByState();
    if (c.ok()) counts_ = *c;
    counts_at_ = now;
  }
  s.jobs_by_state = counts_;
  return s;
}

// ---- Start, loader, shutdown

Status DurableScheduler::Impl::Start() {
  Instant start = Now();
  // Children a crash left waiting for a finished parent, first and without
  // mu_: their writes are awaited, and the store's committer may be running
  // a concurrent Submit's callback, which takes mu_. Released, they load
  // with the rest.
  auto orphans = options_.store->Orphans();
  if (!orphans.ok()) return orphans.status();
  for (auto& c : *orphans) ResolveOrphan(std::move(c), start);
  {
    std::lock_guard lock(mu_);
    if (started_) return Status::InvalidState("already started");
    horizon_ = start + options_.window;
    auto due = options_.store->LoadDue(std::nullopt, horizon_);
    if (!due.ok()) return due.status();
    for (auto& j : *due) {
      Status s = LoadLocked(std::move(j), start, true);
      if (!s.ok() && s.code() == StatusCode::kShuttingDown) return s;
    }
    started_ = true;
  }
  PauseRefused();
  loader_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ax-loader");
    LoaderLoop();
  });
  return Status();
}

void DurableScheduler::Impl::LoaderLoop() {
  auto next_purge = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::unique_lock lock(loader_mu_);
      loader_cv_.wait_for(lock, options_.load_interval, [&] { return stop_; });
      if (stop_) return;
    }
    Instant now = Now();
    Instant from;
    Instant to = now + options_.window;
    std::vector<std::pair<std::string, Deferred>> again;
    {
      std::lock_guard lock(mu_);
      from = horizon_;
      again = TakeDeferredLocked();
      if (to <= from && again.empty() && full_runs_.empty()) continue;
      retrying_ = again.size();       // still counted as deferred (GetStats)
      horizon_ = std::max(from, to);  // raised before the query: see the ground rules
      loading_ = true;
    }
    // The jobs refused for being full first: they were due before the
    // window's new ones.
    std::vector<std::pair<DurableJob, bool>> todo;
    std::vector<std::pair<std::string, Deferred>> unread;  // tried at the next pass
    for (auto& [id, d] : again) {
      auto r = options_.store->Get(id);
      if (r.ok()) {
        todo.emplace_back(std::move(*r), d.startup);
      } else if (r.status().code() != StatusCode::kNotFound) {
        unread.emplace_back(std::move(id), d);
      }
    }
    const size_t retries = todo.size();
    auto due = to > from ? options_.store->LoadDue(from, to)
                         : Result<std::vector<DurableJob>>(std::vector<DurableJob>{});
    for (size_t i = 0; due.ok() && i < due->size(); ++i) {
      todo.emplace_back(std::move((*due)[i]), false);
    }
    {
      std::lock_guard lock(mu_);
      loading_ = false;
      retrying_ = 0;
      for (auto& [id, d] : unread) full_.emplace(std::move(id), d);
      std::vector<ExtraRun> runs;
      runs.swap(full_runs_);
      for (ExtraRun& r : runs) {
        if (auto it = loaded_.find(r.id); it != loaded_.end()) {
          SubmitRunLocked(it->second.rec, std::move(r), now);
        }
      }
      for (size_t i = 0; i < todo.size(); ++i) {
        auto& [j, startup] = todo[i];
        // Changed since the query read it (a cancel, a pause): read again,
        // or a cancelled job would be loaded and run.
        if (changed_while_loading_.count(j.id) > 0) {
          auto fresh = options_.store->Get(j.id);
          if (!fresh.ok()) continue;
          j = std::move(*fresh);
          if (j.state != JobState::kWaiting && j.state != JobState::kRunning) continue;
          // Run here meanwhile (loaded by the change): its end is on its way.
          if (j.state == JobState::kRunning && j.lease_owner == options_.owner) continue;
        }
        // A job tried again may have ended or been paused since it was
        // refused, or be a child whose parent the engine no longer holds.
        if (i < retries && !LoadableLocked(j)) continue;
        (void)LoadLocked(std::move(j), now, startup);
      }
      changed_while_loading_.clear();
    }
    PauseRefused();
    RenewLeases(now);
    if (std::chrono::steady_clock::now() >= next_purge) {
      (void)options_.store->Purge(now - options_.retention);
      next_purge = std::chrono::steady_clock::now() + options_.purge_interval;
    }
  }
}

std::vector<std::pair<std::string, DurableScheduler::Impl::Deferred>>
DurableScheduler::Impl::TakeDeferredLocked() {
  std::vector<std::pair<std::string, Deferred>> taken;
  if (full_.empty()) return taken;
  size_t room = full_.size();
  if (options_.engine.max_jobs != 0) {
    const Stats st = engine_->GetStats();
    const uint64_t live = st.pending + st.running + st.paused;
    room = std::min<size_t>(room, live < options_.engine.max_jobs
                                      ? static_cast<size_t>(options_.engine.max_jobs - live)
                                      : 0);
  }
  if (room == 0) return taken;
  std::vector<std::pair<Instant, std::string>> order;
  order.reserve(full_.size());
  for (const auto& [id, d] : full_) order.emplace_back(d.next_run, id);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(room), order.end());
  for (size_t i = 0; i < room; ++i) {
    auto it = full_.find(order[i].second);
    taken.emplace_back(order[i].second, it->second);
    full_.erase(it);
  }
  return taken;
}

// A lease lasts at least lease_grace and is renewed once less than half of
// it is left; scanning every quarter of lease_grace thus renews every lease
// well before it runs out. The scan walks the loaded jobs, so it is not run
// more often than that.
void DurableScheduler::Impl::RenewLeases(Instant now) {
  if (now < next_lease_scan_) return;
  next_lease_scan_ = now + std::max<Duration>(options_.load_interval, options_.lease_grace / 4);
  std::vector<DurableJob> renewed;
  std::lock_guard lock(mu_);
  for (auto& [id, l] : loaded_) {
    DurableJob& r = l.rec;
    if (l.in_flight == 0 || r.state != JobState::kRunning || !r.lease_expiry ||
        r.lease_owner != options_.owner) {
      continue;
    }
    Duration len = LeaseLength(r);
    if (*r.lease_expiry - now > len / 2) continue;
    r.lease_expiry = now + len;
    r.updated_at = now;
    l.written = Written::Of(r);
    renewed.push_back(r);
  }
  // Enqueued under mu_, like every write of a loaded job (call order).
  if (!renewed.empty()) options_.store->PutAsync(std::move(renewed), nullptr);
}

ShutdownReport DurableScheduler::Impl::Shutdown(Duration timeout) {
  // A second caller (a handler, a signal's thread, the destructor) returns at
  // once: waiting for the first could wait for that very handler.
  if (shut_down_.exchange(true)) return {};
  // The drain: nothing starts from here, and the runs under way get
  // `timeout` to end on their own, their outcomes recorded, while the loader
  // renews their leases (what it loads, the engine refuses). Then those still
  // going are asked to stop, and keep their leases unless they succeed
  // (Withheld).
  (void)engine_->Drain(timeout);
  {
    std::lock_guard lock(loader_mu_);
    stop_ = true;
  }
  loader_cv_.notify_all();
  if (loader_.joinable()) loader_.join();
  stopping_ = true;
  ShutdownReport rep = engine_->Shutdown(Duration(0));
  (void)options_.store->Flush();
  {
    std::lock_guard lock(shut_mu_);
    shut_done_ = true;
  }
  shut_cv_.notify_all();
  return rep;
}

void DurableScheduler::Impl::AwaitShutdown() {
  std::unique_lock lock(shut_mu_);
  shut_cv_.wait(lock, [this] { return shut_done_; });
}

// ---- DurableScheduler

Result<std::unique_ptr<DurableScheduler>> DurableScheduler::Create(DurableOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  AX_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<DurableScheduler>(new DurableScheduler(std::move(impl)));
}

DurableScheduler::DurableScheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
// A Shutdown under way on another thread (a handler's) is waited for: the
// engine's end would otherwise stop its drain's runs.
DurableScheduler::~DurableScheduler() {
  (void)impl_->Shutdown(Duration(0));
  impl_->AwaitShutdown();
}

Status DurableScheduler::RegisterHandler(std::string type, Handler handler) {
  return impl_->RegisterHandler(std::move(type), std::move(handler));
}
Status DurableScheduler::Start() { return impl_->Start(); }

void DurableScheduler::SubmitAsync(std::vector<DurableJob> jobs, SubmitCallback done) {
  impl_->SubmitAsync(std::move(jobs), std::move(done));
}

Result<std::vector<SubmitResult>> DurableScheduler::Submit(std::vector<DurableJob> jobs) {
  std::promise<Result<std::vector<SubmitResult>>> p;
  auto f = p.get_future();
  impl_->SubmitAsync(std::move(jobs),
                     [&p](Result<std::vector<SubmitResult>> r) { p.set_value(std::move(r)); });
  return f.get();
}

Result<SubmitResult> DurableScheduler::Submit(DurableJob job) {
  std::vector<DurableJob> v;
  v.push_back(std::move(job));
  auto r = Submit(std::move(v));
  if (!r.ok()) return r.status();
  return std::move(r->front());
}

namespace {
Status NotFinished(const DurableJob& j, std::string_view what) {
  if (IsTerminal(j.state)) {
    return Status::InvalidState("cannot " + std::string(what) + " job " + j.id + ": it is " +
                                std::string(JobStateText(j.state)));
  }
  return Status();
}
}  // namespace

Status DurableScheduler::Cancel(std::string_view id) {
  return impl_->Change(
      id,
      [](DurableJob& j) {
        AX_RETURN_IF_ERROR(NotFinished(j, "cancel"));
        j.state = JobState::kCancelled;
        j.reason = "cancelled";
        j.next_run.reset();
        return Status();
      },
      [this](const std::string& k) { return impl_->engine().Cancel(k); });
}

Status DurableScheduler::Pause(std::string_view id) {
  return impl_->Change(
      id,
      [](DurableJob& j) {
        AX_RETURN_IF_ERROR(NotFinished(j, "pause"));
        if (j.state != JobState::kWaiting) {
          return Status::InvalidState("cannot pause job " + j.id + ": it is " +
                                      std::string(JobStateText(j.state)));
        }
        j.state = JobState::kPaused;
        j.reason = "paused";
        return Status();
      },
      [this](const std::string& k) { return impl_->engine().Pause(k); });
}

Status DurableScheduler::Resume(std::string_view id) {
  Instant now = impl_->engine().Now();
  return impl_->Change(
      id,
      [this, now](DurableJob& j) {
        if (j.state != JobState::kPaused) {
          return Status::InvalidState("cannot resume job " + j.id + ": it is " +
                                      std::string(JobStateText(j.state)));
        }
        // Paused for want of its handler type (RefusedLocked): still so.
        AX_RETURN_IF_ERROR(impl_->engine().BindHandler(j.handler, "").status());
        j.state = JobState::kWaiting;
        j.reason.clear();
        // No catch-up (2.8): a periodic job runs one period after the resume;
        // a one-shot whose deadline passed runs at once.
        if (j.kind == JobKind::kEvery) j.next_run = now + j.period;
        if (j.kind == JobKind::kCron) {
          auto c = CronSchedule::Parse(j.cron, j.tz);
          if (c.ok()) j.next_run = c->Next(now);
        }
        if (j.kind == JobKind::kOnce && j.next_run && *j.next_run < now) j.next_run = now;
        // Paused before its deadline was kept (an older record): at once.
        if (j.kind == JobKind::kOnce && !j.next_run && j.parent.empty()) j.next_run = now;
        return Status();
      },
      [this](const std::string& k) { return impl_->engine().Resume(k); });
}

Status DurableScheduler::SetDelay(std::string_view id, Duration delay) {
  if (delay < Duration(0)) return Status::InvalidArgument("delay: must be >= 0");
  Instant now = impl_->engine().Now();
  return impl_->Change(
      id,
      [now, delay](DurableJob& j) {
        AX_RETURN_IF_ERROR(NotFinished(j, "set the delay of"));
        j.next_run = now + delay;
        return Status();
      },
      [this, delay](const std::string& k) { return impl_->engine().SetDelay(k, delay); });
}

Status DurableScheduler::SetPeriod(std::string_view id, Duration period) {
  if (period <= Duration(0)) return Status::InvalidArgument("period: must be > 0");
  return impl_->Change(
      id,
      [period](DurableJob& j) {
        AX_RETURN_IF_ERROR(NotFinished(j, "set the period of"));
        if (j.kind != JobKind::kEvery) {
          return Status::InvalidState("job " + j.id + " is not periodic");
        }
        j.period = period;
        return Status();
      },
      [this, period](const std::string& k) { return impl_->engine().SetPeriod(k, period); });
}

Status DurableScheduler::SetCron(std::string_view id, std::string_view expr, std::string_view tz) {
  return impl_->SetCron(id, expr, tz);
}

Result<DurableJob> DurableScheduler::Get(std::string_view id) { return impl_->Get(id); }
Result<std::vector<DurableJob>> DurableScheduler::List(const ListQuery& q) {
  return impl_->List(q);
}
DurableStats DurableScheduler::GetStats() { return impl_->GetStats(); }
Scheduler& DurableScheduler::engine() { return impl_->engine(); }
JobStore& DurableScheduler::store() { return impl_->store(); }
ShutdownReport DurableScheduler::Shutdown(Duration timeout) { return impl_->Shutdown(timeout); }

}  // namespace ax
