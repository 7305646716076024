// SchedulerImpl: construction, submission, live changes and queries.
// The scheduler thread and the run lifecycle are in dispatch.cc.
#include "engine/scheduler_impl.h"

#include <algorithm>
#include <cassert>

#include <pthread.h>

#include "timer/wheel_impl.h"

namespace ax {
namespace internal {
template class BasicTimerWheel<JobDeadlines>;
}  // namespace internal

Result<std::unique_ptr<Scheduler>> Scheduler::Create(SchedulerOptions options) {
  if (options.workers < 0) {
    return Status::InvalidArgument("workers: must not be negative, got " +
                                   std::to_string(options.workers));
  }
  if (options.workers > 4096) {
    return Status::InvalidArgument("workers: at most 4096, got " + std::to_string(options.workers));
  }
  if (options.retention.count() < 0) {
    return Status::InvalidArgument("retention: must not be negative");
  }
  if (options.timer_slack.count() < 0 || options.timer_slack > std::chrono::hours(1)) {
    return Status::InvalidArgument("timer_slack: must be between 0 and 1h, got " +
                                   std::to_string(options.timer_slack.count()) + "ns");
  }
  if (options.hand_ahead.count() < 0 || options.hand_ahead > std::chrono::seconds(1)) {
    return Status::InvalidArgument("hand_ahead: must be between 0 and 1s, got " +
                                   std::to_string(options.hand_ahead.count()) + "ns");
  }
  if (options.worker_slice.count() != 0 &&
      (options.worker_slice < std::chrono::microseconds(100) ||
       options.worker_slice > std::chrono::milliseconds(100))) {
    return Status::InvalidArgument("worker_slice: must be 0 or between 100us and 100ms, got " +
                                   std::to_string(options.worker_slice.count()) + "ns");
  }
  if (options.workers == 0) {
    options.workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  if (!options.clock) options.clock = SystemClock::Get();
  return std::unique_ptr<Scheduler>(new internal::SchedulerImpl(std::move(options)));
}

namespace internal {
namespace {

constexpr uint32_t kMaxSlots = UINT32_MAX - 1;
// How long before a wheel slot's first tick the scheduler thread may start
// moving its jobs into the exact near-term queue (TimerWheel, Loading). A
// million jobs due at one instant took 35-65 ms to load on the test VM, all
// of it after the deadline; loaded ahead, the first of them ran 1 ms late
// instead of 44 (W2, medians of 8 runs).
constexpr Duration kLoadAhead = std::chrono::milliseconds(100);

// Appends rather than `"'" + std::string(s) + "'"`, on which g++ 12 -O2 warns
// (a false -Wrestrict, GCC bug 105329).
std::string Quote(std::string_view s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}

}  // namespace

SchedulerImpl::SchedulerImpl(SchedulerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock),
      manual_clock_(clock_->IsManual()),
      counter_(dynamic_cast<const SystemClock*>(clock_.get()) != nullptr ? &SystemCounterEstimate()
                                                                         : nullptr),
      wheel_(ToUnixNanos(clock_->Now()), kLoadAhead.count(), &jobs_),
      run_wheel_(ToUnixNanos(clock_->Now())),
      rng_(options_.seed) {
  jobs_.AllowPeek();  // Cancel
  if (options_.observer || options_.on_dead_letter) {
    events_ = std::make_unique<EventQueue>(options_.observer, options_.on_dead_letter);
  }
  stats_.workers = static_cast<uint64_t>(options_.workers);
  local_ = std::make_unique<WorkerLocal[]>(static_cast<size_t>(options_.workers));
  pool_ = std::make_unique<WorkerPool>(
      options_.workers, [this](void* run, int worker) { Execute(*static_cast<Run*>(run), worker); },
      [this](int worker) {
        if (PullDue(worker)) return true;
        Flush(worker);
        return RunAhead(worker);
      },
      [this](int) { return unclaimed_.load(std::memory_order_seq_cst); }, options_.pin_workers,
      options_.worker_slice.count());
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ax-scheduler");
    Loop();
  });
}

SchedulerImpl::~SchedulerImpl() {
  (void)Shutdown(Duration::max());
  {
    Lock l = Acquire();
    loop_exit_ = true;
  }
  interrupt_.Signal();
  thread_.join();
  pool_->Stop();
  pool_->Join();
  // Tasks still held by jobs are destroyed with the table, no lock held.
  events_.reset();
}

// ---------------------------------------------------------------- submission

// JobOptions{}, made once.
static const JobOptions& Defaults() {
  static const JobOptions kDefaults;
  return kDefaults;
}

// Whether `o` holds JobOptions{}'s values (return_existing aside, which
// means nothing without a key): valid, no key, no parent, no cold record for
// a one-shot job. Most submissions pass them, and skip the options' checks.
// A field added to JobOptions belongs here too.
static bool IsDefault(const JobOptions& o) {
  const JobOptions& d = Defaults();
  return o.key.empty() && o.parent.empty() && o.retry.max_attempts == d.retry.max_attempts &&
         o.retry.base == d.retry.base && o.retry.backoff == d.retry.backoff &&
         o.retry.cap == d.retry.cap && o.retry.jitter == d.retry.jitter && o.timeout == d.timeout &&
         o.slow_after == d.slow_after && o.overlap == d.overlap && o.misfire == d.misfire &&
         o.max_catch_up == d.max_catch_up && o.auto_pause_after == d.auto_pause_after;
}

Result<JobId> SchedulerImpl::At(Instant when, Task task, JobOptions options) {
  if (IsDefault(options)) return SubmitOnce(when, nullptr, task);
  Plan p;
  p.at = when;
  return Submit(p, task, options);
}

Result<JobId> SchedulerImpl::After(Duration delay, Task task, JobOptions options) {
  if (!IsDefault(options)) {
    if (delay.count() < 0) return NegativeDelay(delay);
    Plan p;
    p.delay = delay;
    return Submit(p, task, options);
  }
  return After(delay, std::move(task));
}

Result<JobId> SchedulerImpl::At(Instant when, Task task) { return SubmitOnce(when, nullptr, task); }

Result<JobId> SchedulerImpl::After(Duration delay, Task task) {
  if (delay.count() < 0) return NegativeDelay(delay);
  return SubmitOnce(Instant(), &delay, task);
}

Status SchedulerImpl::NegativeDelay(Duration delay) {
  return Status::InvalidArgument("delay: must not be negative, got " +
                                 std::to_string(delay.count()) + "ns");
}

Result<JobId> SchedulerImpl::Every(Duration period, Task task, JobOptions options) {
  Plan p;
  p.kind = JobKind::kEvery;
  p.period = period;
  return Submit(p, task, options);
}

Result<JobId> SchedulerImpl::Every(Duration period, Instant first, Task task, JobOptions options) {
  Plan p;
  p.kind = JobKind::kEvery;
  p.period = period;
  p.at = first;
  p.first_given = true;
  return Submit(p, task, options);
}

Result<JobId> SchedulerImpl::Cron(std::string_view expr, std::string_view tz, Task task,
                                  JobOptions options) {
  Result<CronSchedule> c = CronSchedule::Parse(expr, tz);
  if (!c.ok()) return c.status();
  if (std::optional<Duration> every = c->every()) {
    return Every(*every, std::move(task), std::move(options));
  }
  Plan p;
  p.kind = JobKind::kCron;
  p.cron = std::move(*c);
  return Submit(p, task, options);
}

Result<JobId> SchedulerImpl::Cron(std::string_view expr, std::string_view tz, Instant first,
                                  Task task, JobOptions options) {
  Result<CronSchedule> c = CronSchedule::Parse(expr, tz);
  if (!c.ok()) return c.status();
  if (std::optional<Duration> every = c->every()) {
    return Every(*every, first, std::move(task), std::move(options));
  }
  Plan p;
  p.kind = JobKind::kCron;
  p.cron = std::move(*c);
  p.at = first;
  p.first_given = true;
  return Submit(p, task, options);
}

Status SchedulerImpl::ValidateOptions(const JobOptions& o) const {
  if (!o.key.empty() && o.key[0] == '#') {
    return Status::InvalidArgument("key: " + Quote(o.key) +
                                   " may not start with '#' (reserved for generated ids)");
  }
  AX_RETURN_IF_ERROR(o.retry.Validate());
  if (o.timeout.count() < 0) return Status::InvalidArgument("timeout: must not be negative");
  if (o.slow_after.count() < 0) {
    return Status::InvalidArgument("slow_after: must not be negative");
  }
  if (o.auto_pause_after < 0) {
    return Status::InvalidArgument("auto_pause_after: must not be negative");
  }
  if (o.max_catch_up < 1) return Status::InvalidArgument("max_catch_up: must be at least 1");
  return Status();
}

// Whether a job needs its cold record from the start.
static bool NeedsCold(const JobOptions& o, JobKind kind) {
  return kind != JobKind::kOnce || !o.key.empty() || o.retry.max_attempts != 1 ||
         o.timeout.count() != 0 || o.slow_after.count() != 0 || !o.parent.empty() ||
         o.overlap != Defaults().overlap || o.misfire != Defaults().misfire;
}

// A job limit is reached. REQUIRES mu_.
inline bool SchedulerImpl::IsFull() const {
  return (options_.max_jobs != 0 && LiveJobs() >= options_.max_jobs) ||
         (jobs_.size() >= kMaxSlots && jobs_.live() >= kMaxSlots);
}

// Full, unless cancels queued for DrainCancels make room (they count as live
// until drained). REQUIRES mu_.
bool SchedulerImpl::FullAfterDrain() {
  DrainCancels(clock_->NowCoarse(), SIZE_MAX);
  return IsFull();
}

// A waiting record for a new job of `kind` that runs `task`; kNoIndex when a
// job limit is reached (Full says which). REQUIRES mu_.
inline uint32_t SchedulerImpl::NewJob(JobKind kind, Task& task) {
  if (IsFull() && FullAfterDrain()) [[unlikely]] {
    return kNoIndex;
  }
  const uint32_t slot = jobs_.Allocate();
  cancels_.Ensure(slot);
  Job& j = jobs_[slot];
  j.NextGen();
  j.free = false;
  j.kind = kind;
  j.state = JobState::kWaiting;  // a free record counts in no state: no SetState
  ++by_state_[static_cast<size_t>(JobState::kWaiting)];
  assert(!j.has_cold && !j.run_active && !j.run_held && !j.has_children);
  j.waits_parent = false;
  j.reserved = false;
  j.ran = false;
  j.task = std::move(task);
  return slot;
}

Status SchedulerImpl::Full() const {
  if (options_.max_jobs != 0 && LiveJobs() >= options_.max_jobs) {
    return Status::Unavailable("scheduler is full: max_jobs = " +
                               std::to_string(options_.max_jobs));
  }
  return Status::Unavailable("scheduler is full: 2^32-1 jobs");
}

Result<JobId> SchedulerImpl::Submit(Plan& plan, Task& task, const JobOptions& options) {
  if (!task) return Status::InvalidArgument("task: empty callable");
  if (plan.kind == JobKind::kEvery && plan.period.count() <= 0) {
    return Status::InvalidArgument("period: must be positive, got " +
                                   std::to_string(plan.period.count()) + "ns");
  }
  const bool defaults = IsDefault(options);
  if (!defaults) AX_RETURN_IF_ERROR(ValidateOptions(options));
  Task rejected;  // destroyed after unlocking when the submission is refused or dead
  Lock l = Acquire();
  if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
  const Instant now = clock_->Now();
  AX_RETURN_IF_ERROR(PlanFrom(now, plan));
  uint32_t parent = kNoIndex;
  if (!options.parent.empty()) {
    Result<uint32_t> p = ParentOf(options);
    if (!p.ok()) return p.status();
    parent = *p;
  }
  if (!options.key.empty()) {
    Result<std::optional<JobId>> existing = ClaimKey(options);
    if (!existing.ok()) return existing.status();
    if (*existing) return **existing;
  }
  const uint32_t slot = NewJob(plan.kind, task);
  if (slot == kNoIndex) return Full();
  Job& j = jobs_[slot];
  if (defaults ? plan.kind != JobKind::kOnce : NeedsCold(options, plan.kind)) {
    JobCold& c = Cold(j);
    c.key = options.key;
    c.retry = options.retry;
    c.timeout = options.timeout;
    c.slow_after = options.slow_after;
    c.overlap = options.overlap;
    c.misfire = options.misfire;
    c.max_catch_up = options.max_catch_up;
    c.auto_pause_after = options.auto_pause_after;
    c.period = plan.period;
    c.cron = plan.cron;
  }
  if (!options.key.empty()) keys_.Insert(options.key, slot);
  if (parent != kNoIndex && jobs_[parent].state != JobState::kCompleted) {
    WaitForParent(slot, parent, plan);
  } else {
    FirstSchedule(slot, plan, now);
    if (j.state == JobState::kDead) rejected = std::move(TaskOf(j));  // no instant to fire at
  }
  const JobId id(slot, j.gen());
  if (events_) Emit(MakeEvent(EventType::kScheduled, slot, now));
  l.unlock();
  return id;
}

// The common submission, kept short on purpose (like Cancel): a one-shot
// job with default options, at `at` or after `*delay`. It is what Submit does
// for one, without the plan, keys, parents and cold record; and At reads no
// clock unless an observer wants the event's instant.
Result<JobId> SchedulerImpl::SubmitOnce(Instant at, const Duration* delay, Task& task) {
  if (!task) return Status::InvalidArgument("task: empty callable");
  Lock l = Acquire();
  if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
  Instant now{};
  if (delay != nullptr) {
    now = NowOrLater();  // a later start by microseconds, never an earlier one
  } else if (events_) {
    now = clock_->Now();
  }
  if (delay != nullptr) {
    const std::optional<Instant> after = AddDuration(now, *delay);
    if (!after) return Status::InvalidArgument("delay: now + delay overflows the time range");
    at = *after;
  }
  const uint32_t slot = NewJob(JobKind::kOnce, task);
  if (slot == kNoIndex) return Full();
  // A new job's slot is out of the wheel: a record is forgotten only after
  // its cancel was drained, which took it out.
  const int64_t ns = ToUnixNanos(at);
  Job& j = jobs_[slot];
  j.word = ns;
  new_[new_count_++] = slot;
  if (new_count_ == kNewBatch) FileNew();
  WakeBy(ns);
  const JobId id(slot, j.gen());
  if (events_) {
    Emit(MakeEvent(EventType::kScheduled, slot, now));
  } else {
    j.Open();  // a plain waiting job: cancelled without the lock
  }
  l.release()->unlock();  // held for sure: no check, no throw path
  return id;
}

void SchedulerImpl::FileNew() {
  wheel_.InsertAll(new_.data(), new_count_);
  new_count_ = 0;
}

// Fills in the plan's first instant, counted from `now` (or checks it).
Status SchedulerImpl::PlanFrom(Instant now, Plan& plan) {
  if (plan.delay) {
    std::optional<Instant> at = AddDuration(now, *plan.delay);
    if (!at) return Status::InvalidArgument("delay: now + delay overflows the time range");
    plan.at = *at;
  }
  if (plan.kind == JobKind::kEvery && !plan.first_given) {
    std::optional<Instant> at = AddDuration(now, plan.period);
    if (!at) return Status::InvalidArgument("period: now + period overflows the time range");
    plan.at = *at;
  }
  if (plan.kind == JobKind::kEvery && !AddDuration(plan.at, plan.period)) {
    return Status::InvalidArgument("period: first + period overflows the time range");
  }
  return Status();
}

// A new job whose parent has not completed yet waits for it (SPEC 2.9): its
// delay or first instant applies once the parent succeeds. REQUIRES mu_.
void SchedulerImpl::WaitForParent(uint32_t slot, uint32_t parent, const Plan& plan) {
  Job& j = jobs_[slot];
  JobCold& c = Cold(j);
  c.parent = JobId(parent, jobs_[parent].gen());
  if (plan.delay) {
    c.release_delay = *plan.delay;
  } else if (plan.kind == JobKind::kEvery && !plan.first_given) {
    c.release_delay = plan.period;
  } else if (plan.kind == JobKind::kOnce || plan.first_given) {
    c.release_at = plan.at;
  }
  j.waits_parent = true;
  // Not in the parent's cold record: the parent may be running, and its
  // callable must not move.
  jobs_[parent].has_children = true;
  children_[parent].emplace_back(slot, j.gen());
}

// The parent's slot, or why it cannot be one; the parent's gate is closed
// (a plain cancel does not end children). REQUIRES mu_, and a parent in
// `options`.
Result<uint32_t> SchedulerImpl::ParentOf(const JobOptions& options) {
  Result<uint32_t> p = Resolve(JobRef(options.parent));
  if (!p.ok()) return Status::NotFound("parent: job " + Quote(options.parent) + " not found");
  Job& pj = jobs_[*p];
  if (!pj.Close()) {
    return Status::InvalidState("parent: job " + Quote(options.parent) + " is cancelled");
  }
  if (pj.kind != JobKind::kOnce) {
    return Status::InvalidArgument("parent: job " + Quote(options.parent) +
                                   " is periodic; a parent must be a one-shot job");
  }
  if (pj.state == JobState::kCancelled || pj.state == JobState::kDead) {
    return Status::InvalidState("parent: job " + Quote(options.parent) + " is " +
                                std::string(JobStateName(pj.state)));
  }
  return *p;
}

// Frees options.key for a new job: the live job holding it (return_existing),
// AlreadyExists, or nullopt when the key is free. REQUIRES mu_.
Result<std::optional<JobId>> SchedulerImpl::ClaimKey(const JobOptions& options) {
  const uint32_t slot = FindKey(options.key);
  if (slot == KeyMap::kNone) return std::optional<JobId>();
  const Job& existing = jobs_[slot];
  if (!IsTerminal(existing.state)) {
    if (options.return_existing) return std::optional<JobId>(JobId(slot, existing.gen()));
    return Status::AlreadyExists("key: job " + Quote(options.key) + " already exists (" +
                                 IdText(slot) + ", " + std::string(JobStateName(existing.state)) +
                                 ")");
  }
  keys_.Erase(options.key, slot);  // the retained terminal job keeps its info, not the key
  return std::optional<JobId>();
}

// Puts a new (or released) job on the wheel. REQUIRES mu_.
void SchedulerImpl::FirstSchedule(uint32_t slot, const Plan& plan, Instant now) {
  Job& j = jobs_[slot];
  switch (plan.kind) {
    case JobKind::kOnce:
      Arm(slot, plan.at);
      return;
    case JobKind::kEvery:
    case JobKind::kCron: {
      Instant first = plan.at;
      if (plan.kind == JobKind::kCron && !plan.first_given) {
        std::optional<Instant> t = ColdOf(j)->cron->Next(now);
        if (!t) {
          SetState(j, JobState::kDead);
          ColdOf(j)->reason = "cron: no fire instant within the time range";
          Retire(slot, now);
          return;
        }
        first = *t;
      }
      ApplySubmitMisfire(slot, first, now);
      return;
    }
  }
}

// The ticks of job j in [from, now] (`from` is a tick), the newest `keep` of
// them, and the first tick after now. Found in a window back from now,
// doubled until it holds `keep` ticks or reaches `from`; the ticks before the
// window are estimated from `spacing`, the mean gap between ticks so far.
// REQUIRES mu_.
SchedulerImpl::RecentTicks SchedulerImpl::RecentTicksOf(const Job& j, Instant from, Instant now,
                                                        size_t keep, int64_t spacing) const {
  const int64_t from_ns = ToUnixNanos(from);
  const uint64_t span = static_cast<uint64_t>(ToUnixNanos(now)) - static_cast<uint64_t>(from_ns);
  const auto gap = static_cast<uint64_t>(spacing);
  uint64_t width = gap > span / (keep + 1) ? span : gap * (keep + 1);
  for (;;) {
    const uint64_t offset = span - width;  // of the window's start, from `from`
    const Instant start =
        FromUnixNanos(static_cast<int64_t>(static_cast<uint64_t>(from_ns) + offset));
    RecentTicks r;
    std::optional<Instant> u =
        offset == 0 ? std::optional<Instant>(from) : NextTick(j, start - Duration(1));
    for (; u && *u <= now; u = NextTick(j, *u)) {
      r.ticks.push_back(*u);
      if (r.ticks.size() > keep) r.ticks.erase(r.ticks.begin());
      ++r.count;
    }
    if (r.count >= keep || offset == 0) {
      // `from` is a tick: evenly spaced, ceil(offset / gap) of them are
      // before the window.
      r.before = offset / gap + (offset % gap != 0 ? 1 : 0);
      r.next = u.value_or(kInstantMax);
      return r;
    }
    width = width > span / 2 ? span : 2 * width;
  }
}

// A periodic job whose first tick has passed (a restored durable job): the
// ticks that passed are misfires, handled per SPEC 3.5. REQUIRES mu_.
void SchedulerImpl::ApplySubmitMisfire(uint32_t slot, Instant first, Instant now) {
  Job& j = jobs_[slot];
  JobCold& c = *ColdOf(j);
  // Ticks before now (a tick at now is due, not passed), newest last;
  // bounded by max_catch_up + 1.
  std::vector<Instant> past;
  Instant t = first;
  uint64_t missed = 0;
  while (t < now) {
    ++missed;
    past.push_back(t);
    if (past.size() > static_cast<size_t>(c.max_catch_up)) past.erase(past.begin());
    std::optional<Instant> n = NextTick(j, t);
    if (!n) break;
    if (j.kind == JobKind::kEvery && *n < now && missed == 1) {
      // Jump over whole periods arithmetically; only the last few matter.
      // Unsigned: `first` may be as far back as kInstantMin.
      const uint64_t p = static_cast<uint64_t>(c.period.count());
      const uint64_t k =
          (static_cast<uint64_t>(ToUnixNanos(now)) - static_cast<uint64_t>(ToUnixNanos(*n))) / p;
      const uint64_t skip = k - std::min<uint64_t>(k, static_cast<uint64_t>(c.max_catch_up) + 1);
      missed += skip;
      t = FromUnixNanos(static_cast<int64_t>(static_cast<uint64_t>(ToUnixNanos(*n)) + p * skip));
      continue;
    }
    t = *n;
    if (missed >= kMaxTickScan && t < now) {
      // Far behind: a per-second cron restored after a month took a second
      // of ticks one by one, holding the lock. The last ticks come from a
      // window before now instead (RecentTicks).
      const uint64_t seen =
          static_cast<uint64_t>(ToUnixNanos(t)) - static_cast<uint64_t>(ToUnixNanos(first));
      const RecentTicks recent =
          RecentTicksOf(j, t, now - Duration(1), static_cast<size_t>(c.max_catch_up),
                        static_cast<int64_t>(std::max<uint64_t>(1, seen / missed)));
      missed += recent.before + recent.count;
      past = recent.ticks;
      t = recent.next;
      break;
    }
  }
  c.next_tick = t;
  if (missed == 0) {
    Arm(slot, t);
    return;
  }
  uint64_t skipped = missed;
  switch (c.misfire) {
    case Misfire::kSkip:
      Arm(slot, t);
      break;
    case Misfire::kOnce:
      skipped = missed - 1;
      Arm(slot, past.back());
      c.next_tick = past.back();
      break;
    case Misfire::kAll:
      skipped = missed - past.size();
      c.catch_up = static_cast<int>(past.size());
      c.next_tick = past.front();
      Arm(slot, past.front());
      break;
  }
  if (skipped > 0) Skip(slot, t, skipped, "missed ticks (misfire policy)", now);
}

Status SchedulerImpl::RegisterHandler(std::string type, Handler handler) {
  if (type.empty()) return Status::InvalidArgument("handler type: must not be empty");
  if (!handler) return Status::InvalidArgument("handler: empty function");
  Lock l = Acquire();
  if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
  if (!handlers_.emplace(type, std::move(handler)).second) {
    return Status::AlreadyExists("handler type " + Quote(type) + " is already registered");
  }
  return Status();
}

Result<Task> SchedulerImpl::BindHandler(std::string_view type, std::string payload) const {
  Lock l = Acquire();
  auto it = handlers_.find(std::string(type));
  if (it == handlers_.end()) {
    return Status::NotFound("handler type " + Quote(type) + " is not registered");
  }
  auto bound = std::make_unique<std::pair<Handler, std::string>>(it->second, std::move(payload));
  return Task([b = std::move(bound)](const RunContext& ctx) { return b->first(ctx, b->second); });
}

// ---------------------------------------------------------------- live changes

// A Task's inside, for the cancel below: whether releasing the callable
// calls a destructor, and releasing it when it does not.
struct TaskAccess {
  static bool Destroys(const Task& t) { return t.ops_ != nullptr && t.ops_->destroy != nullptr; }
  static void Forget(Task& t) { t.ops_ = nullptr; }  // REQUIRES: !Destroys(t)
};

// The common cancel, kept short on purpose: a caller cancelling jobs at
// random misses the cache on each job record, and only a short path lets the
// processor run on into the caller's next calls (and their misses) while
// this one waits. How far it runs is counted in instructions: in a loop of
// compare-and-swaps on random records of a million through a call, each 32
// instructions more per call cost about 30 ns more per call on the test VM
// (docs/performance.md). So this path takes no lock, and every call it makes
// is its last act (a callable with a destructor, the wake-up, the tests'
// clock, the locked path), so that it saves no registers: one
// compare-and-swap on the record's gate decides it (Gate, job_table.h), the
// callable is released here, and the rest -- out of the wheel, counted,
// retired -- is queued for the scheduler thread, which does it in batches on
// its own core (DrainCancels).
Status SchedulerImpl::Cancel(JobRef ref) {
  if (!ref.is_id()) return CancelLocked(ref);
  const JobId id = ref.id();
  if (id.generation() > Job::kGenMask || stopping_runs_.load(std::memory_order_relaxed)) {
    return CancelLocked(ref);
  }
  Job* j = jobs_.Peek(id.slot());
  if (j == nullptr) return CancelLocked(ref);
  uint32_t open = Job::GateWord(id.generation(), Gate::kOpen);
  if (!j->gen_gate.compare_exchange_strong(open, Job::GateWord(id.generation(), Gate::kCancelling),
                                           std::memory_order_acquire, std::memory_order_relaxed)) {
    return CancelLocked(ref);  // not an open job: the locked path answers
  }
  // The record is this thread's until it is marked. A callable with a
  // destructor, and the tests' clock, take the call below.
  if (TaskAccess::Destroys(j->task) || manual_clock_) [[unlikely]] {
    return CancelWon(j, id.slot());
  }
  TaskAccess::Forget(j->task);
  if (cancels_.Mark(id.slot())) [[unlikely]]
    return WakeToDrain();
  return Status();
}

// A cancel that won the gate, the rare way: the captures die now (SPEC 2.3),
// no lock held, in place, before the record is marked.
Status SchedulerImpl::CancelWon(Job* j, uint32_t slot) {
  j->task.Reset();
  const bool wake = cancels_.Mark(slot);
  if (manual_clock_) {
    // Tests: the job is retired as of the clock's instant now, as by the
    // locked path, before the clock can be moved on.
    Lock l = Acquire();
    DrainCancels(clock_->Now(), SIZE_MAX);
    return Status();
  }
  return wake ? WakeToDrain() : Status();
}

// The first cancel of a burst wakes the scheduler thread, which drains them
// all once the burst is over (MaybeDrainCancels).
Status SchedulerImpl::WakeToDrain() {
  interrupt_.Signal();
  return Status();
}

// Any cancel but that of an open job (Cancel).
Status SchedulerImpl::CancelLocked(JobRef ref) {
  // The callables released die after unlocking, as these go out of scope.
  Task released;
  std::vector<Task> released_children;
  Lock l = Acquire();
  if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
  Result<uint32_t> s = Resolve(ref);
  if (!s.ok()) return s.status();
  const uint32_t slot = *s;
  Job& j = jobs_[slot];
  if (!j.Close() || IsTerminal(j.state)) {
    return Status::InvalidState("cancel: job " + IdText(slot) + " is already " +
                                std::string(JobStateName(StateOf(j))));
  }
  // Without an observer the instant only starts the retention (minutes),
  // for which a tick's error does not matter: the cheap clock read will do.
  const Instant now = events_ ? clock_->Now() : clock_->NowCoarse();
  Terminate(slot, JobState::kCancelled, "cancelled", now, released);
  EndChildren(slot, JobState::kCancelled, now, released_children);
  return Status();
}

size_t SchedulerImpl::DrainCancels(Instant now, size_t max) {
  draining_.clear();
  const size_t taken = cancels_.Take(max, [this](uint32_t slot) { draining_.push_back(slot); });
  // The records and wheel states are cache-cold: keep loads in flight.
  constexpr size_t kAhead = 16;
  auto prefetch = [this](uint32_t slot) {
    jobs_.Prefetch(slot);
    wheel_.Prefetch(slot);
  };
  for (size_t i = 0; i < std::min(taken, kAhead); ++i) prefetch(draining_[i]);
  for (size_t i = 0; i < taken; ++i) {
    if (i + kAhead < taken) prefetch(draining_[i + kAhead]);
    const uint32_t slot = draining_[i];
    Job& j = jobs_[slot];
    // Cancelling until now; its callable was released by the canceller.
    assert(j.gate() == Gate::kCancelling);
    const uint32_t gen = j.gen();
    j.gen_gate.store(Job::GateWord(gen, Gate::kClosed), std::memory_order_relaxed);
    Disarm(slot);
    SetState(j, JobState::kCancelled);
    ++stats_.cancelled;
    Remember({slot, gen, now});
  }
  return taken;
}

Status SchedulerImpl::Pause(JobRef ref) {
  {
    Lock l = Acquire();
    if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
    Result<uint32_t> s = Resolve(ref);
    if (!s.ok()) return s.status();
    const uint32_t slot = *s;
    Job& j = jobs_[slot];
    const Instant now = clock_->Now();
    if (!j.Close()) return Status::InvalidState("pause: job " + IdText(slot) + " is cancelled");
    if (j.state == JobState::kRunning) {
      if (j.kind == JobKind::kOnce) {
        return Status::InvalidState("pause: job " + IdText(slot) +
                                    " is a running one-shot job; cancel it instead");
      }
      JobCold& c = Cold(j);
      if (c.pause_after_run) {
        return Status::InvalidState("pause: job " + IdText(slot) + " already pauses after its run");
      }
      // No run starts once a pause has returned: a run still in the queue
      // is dropped, and a run in its callback ends before the job pauses.
      std::erase_if(c.runs_active, [&](uint32_t run) { return DropQueued(j, run); });
      c.buffered = false;
      if (c.active > 0) {
        c.pause_after_run = true;
        Disarm(slot);
        return Status();
      }
    } else if (j.state != JobState::kWaiting) {
      return Status::InvalidState("pause: job " + IdText(slot) + " is " +
                                  std::string(JobStateName(j.state)));
    }
    JobCold& c = Cold(j);
    if (j.kind == JobKind::kOnce && Pending(slot)) c.one_shot_at = FromUnixNanos(j.word);
    Disarm(slot);
    c.retry_pending = false;
    SetState(j, JobState::kPaused);
    c.reason = "paused";
    Emit(MakeEvent(EventType::kPaused, slot, now));
  }
  return Status();
}

Status SchedulerImpl::Resume(JobRef ref) {
  {
    Lock l = Acquire();
    if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
    Result<uint32_t> s = Resolve(ref);
    if (!s.ok()) return s.status();
    const uint32_t slot = *s;
    Job& j = jobs_[slot];
    if (!j.Close() || j.state != JobState::kPaused) {
      return Status::InvalidState("resume: job " + IdText(slot) + " is " +
                                  std::string(JobStateName(StateOf(j))) + ", not paused");
    }
    const Instant now = clock_->Now();
    JobCold& c = Cold(j);
    std::optional<Instant> next;
    if (j.waits_parent) {    // back to waiting for its parent: nothing to arm
      if (c.resume_delay) {  // set while paused: counts from the release
        c.release_delay = *c.resume_delay;
        c.release_at.reset();
      }
    } else if (c.resume_delay) {
      next = AddDuration(now, *c.resume_delay).value_or(kInstantMax);
    } else if (j.kind == JobKind::kOnce) {
      next = c.one_shot_at;  // passed while paused: runs at once
    } else {
      next = NextTick(j, now);  // no catch-up: one period after the resume
      if (j.kind == JobKind::kEvery) next = AddDuration(now, c.period);
      next = next.value_or(kInstantMax);
    }
    c.resume_delay.reset();
    c.reason.clear();
    c.consecutive_failures = 0;
    if (j.kind != JobKind::kOnce) c.attempt = 1;  // a one-shot's retries go on
    SetState(j, JobState::kWaiting);
    if (next) {
      if (j.kind != JobKind::kOnce) c.next_tick = *next;
      Arm(slot, *next);
    }
    Emit(MakeEvent(EventType::kResumed, slot, now));
  }
  return Status();
}

Status SchedulerImpl::SetDelay(JobRef ref, Duration delay) {
  if (delay.count() < 0) return NegativeDelay(delay);
  {
    Lock l = Acquire();
    if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
    Result<uint32_t> s = Resolve(ref);
    if (!s.ok()) return s.status();
    const uint32_t slot = *s;
    Job& j = jobs_[slot];
    const Instant now = NowOrLater();  // later by microseconds, never earlier
    std::optional<Instant> at = AddDuration(now, delay);
    if (!at) return Status::InvalidArgument("delay: now + delay overflows the time range");
    if (!j.Close()) return Status::InvalidState("set_delay: job " + IdText(slot) + " is cancelled");
    switch (j.state) {
      case JobState::kPaused:
        Cold(j).resume_delay = delay;
        return Status();
      case JobState::kWaiting:
        if (j.waits_parent) {
          Cold(j).release_delay = delay;
          Cold(j).release_at.reset();
          return Status();
        }
        if (j.kind != JobKind::kOnce) {
          Cold(j).next_tick = *at;
          Cold(j).retry_pending = false;
          Cold(j).attempt = 1;
        }
        Arm(slot, *at);
        break;
      case JobState::kRunning:
        if (j.kind == JobKind::kOnce && !j.has_cold) {
          runs_[PlainRun(j)].rearm_at = *at;  // the next run, after this one
        } else if (j.kind == JobKind::kOnce) {
          Cold(j).rearm_at = *at;
        } else if (Cold(j).pause_after_run) {
          Cold(j).resume_delay = delay;  // paused after this run: from the resume
          return Status();
        } else {
          Cold(j).next_tick = *at;
          Arm(slot, *at);
        }
        break;
      default:
        return Status::InvalidState("set_delay: job " + IdText(slot) + " is " +
                                    std::string(JobStateName(j.state)));
    }
    if (events_) {
      Event e = MakeEvent(EventType::kScheduled, slot, now);
      e.next_run = *at;
      Emit(std::move(e));
    }
  }
  return Status();
}

Status SchedulerImpl::SetPeriod(JobRef ref, Duration period) {
  if (period.count() <= 0) {
    return Status::InvalidArgument("period: must be positive, got " +
                                   std::to_string(period.count()) + "ns");
  }
  Lock l = Acquire();
  if (shutting_down_) return Status::ShuttingDown("scheduler is shutting down");
  Result<uint32_t> s = Resolve(ref);
  if (!s.ok()) return s.status();
  Job& j = jobs_[*s];
  if (!j.Close() || IsTerminal(j.state)) {
    return Status::InvalidState("set_period: job " + IdText(*s) + " is " +
                                std::string(JobStateName(StateOf(j))));
  }
  if (j.kind != JobKind::kEvery) {
    return Status::InvalidState("set_period: job " + IdText(*s) + " is a " +
                                std::string(JobKindName(j.kind)) +
                                " job; only periodic (every) jobs have a period");
  }
  JobCold& c = *ColdOf(j);
  // The tick after the next one must be an instant: the job would stop there.
  const Instant now = NowOrLater();  // the counter estimate: a bound, cheap
  if (!AddDuration(c.next_tick != kInstantMax ? std::max(c.next_tick, now) : now, period)) {
    return Status::InvalidArgument("period: the next run + period overflows the time range");
  }
  c.period = period;  // the next run stays where it is
  return Status();
}

// ---------------------------------------------------------------- queries

Result<JobInfo> SchedulerImpl::Info(JobRef ref) const {
  Lock l = Acquire();
  Result<uint32_t> s = Resolve(ref);
  if (!s.ok()) return s.status();
  return MakeInfo(*s);
}

Result<JobId> SchedulerImpl::Find(std::string_view key) const {
  Lock l = Acquire();
  Result<uint32_t> s = Resolve(JobRef(key));
  if (!s.ok()) return s.status();
  return JobId(*s, jobs_[*s].gen());
}

std::vector<JobInfo> SchedulerImpl::List(std::optional<JobState> state, size_t limit) const {
  std::vector<JobInfo> out;
  Lock l = Acquire();
  // The scan stops at the last match: none for a state no job is in, where it
  // went through every record under the lock (a million: milliseconds). Jobs
  // cancelled without the lock count as waiting until drained.
  size_t matches = jobs_.live();
  if (state) {
    matches = by_state_[static_cast<size_t>(*state)] +
              (*state == JobState::kCancelled ? cancels_.Backlog() : 0);
  }
  const size_t want = std::min(limit, matches);
  for (uint32_t i = 0; i < jobs_.size() && out.size() < want; ++i) {
    const Job& j = jobs_[i];
    if (j.free || (state && StateOf(j) != *state)) continue;
    out.push_back(MakeInfo(i));
  }
  return out;
}

std::vector<Event> SchedulerImpl::DeadLetters() const {
  Lock l = Acquire();
  return dead_letters_;
}

Stats SchedulerImpl::GetStats() const {
  Lock l = Acquire();
  Stats s = stats_;
  // Cancelled without the lock, and not yet drained: counted as cancelled.
  const size_t queued = cancels_.Backlog();
  s.cancelled += queued;
  s.pending = by_state_[static_cast<size_t>(JobState::kWaiting)] - queued;
  s.paused = by_state_[static_cast<size_t>(JobState::kPaused)];
  s.running = by_state_[static_cast<size_t>(JobState::kRunning)];
#ifndef NDEBUG
  // The counts follow every change of state; a scan of the records (too slow
  // to hold the lock for at millions of jobs) checks them in debug builds.
  std::array<uint64_t, kJobStates> scan{};
  for (uint32_t i = 0; i < jobs_.size(); ++i) {
    if (!jobs_[i].free) ++scan[static_cast<size_t>(jobs_[i].state)];
  }
  assert(scan == by_state_);
#endif
  s.queue_depth = pool_->QueueDepth();
  s.busy_workers = static_cast<uint64_t>(pool_->busy());
  return s;
}

// ---------------------------------------------------------------- helpers

Result<uint32_t> SchedulerImpl::Resolve(const JobRef& ref) const {
  JobId id = ref.id();
  if (!ref.is_id()) {
    if (std::optional<JobId> parsed = JobId::Parse(ref.key())) {
      id = *parsed;
    } else {
      const uint32_t slot = FindKey(ref.key());
      if (slot == KeyMap::kNone) return Status::NotFound("job " + Quote(ref.key()) + " not found");
      return slot;
    }
  }
  if (id.slot() < jobs_.size()) {
    // Both are cache-cold when a caller touches jobs at random; load them in
    // parallel rather than one after the other.
    jobs_.Prefetch(id.slot());
    wheel_.Prefetch(id.slot());
  }
  if (!id.valid() || id.slot() >= jobs_.size() || jobs_[id.slot()].free ||
      jobs_[id.slot()].gen() != id.generation()) {
    return Status::NotFound("job " + id.ToString() + " not found");
  }
  return id.slot();
}

uint32_t SchedulerImpl::FindKey(std::string_view key) const {
  return keys_.Find(key, [&](uint32_t slot) {
    const Job& j = jobs_[slot];
    const JobCold* c = ColdOf(j);
    return c != nullptr && c->key == key;
  });
}

JobCold& SchedulerImpl::Cold(Job& j) {
  if (j.has_cold) return *j.cold;
  // A run under way calls the callable where it is. A held run (resolved,
  // its callback returned or about to be released) no longer does. And a
  // cancel without the lock may take the callable of an open job.
  assert(!j.run_active && j.gate() == Gate::kClosed);
  const uint32_t index = colds_.Allocate();
  JobCold* c = &colds_[index];
  c->index = index;
  c->task = std::move(j.task);
  c->held = j.run_held ? 1 : 0;
  j.run_held = false;
  j.task.~Task();
  j.cold = c;
  j.has_cold = true;
  return *c;
}

void SchedulerImpl::DropCold(Job& j) {
  if (!j.has_cold) return;
  JobCold* c = j.cold;
  Task task = std::move(c->task);
  const uint32_t index = c->index;
  // Fresh for its next job, and what it held (a key, a cron schedule, ...)
  // goes now.
  std::destroy_at(c);
  std::construct_at(c);
  colds_.Release(index);
  new (&j.task) Task(std::move(task));
  j.has_cold = false;
}

void SchedulerImpl::AddActive(Job& j, int delta) {
  if (j.has_cold) {
    ColdOf(j)->active += static_cast<uint32_t>(delta);
  } else {
    assert(delta == (j.run_active ? -1 : 1));
    j.run_active = delta > 0;
  }
}

void SchedulerImpl::AddHeld(Job& j, int delta) {
  if (j.has_cold) {
    ColdOf(j)->held += static_cast<uint32_t>(delta);
  } else {
    assert(delta == (j.run_held ? -1 : 1));
    j.run_held = delta > 0;
  }
}

std::string SchedulerImpl::KeyOf(const Job& j) const {
  const JobCold* c = ColdOf(j);
  return c != nullptr ? c->key : "";
}

std::string SchedulerImpl::IdText(uint32_t slot) const {
  const Job& j = jobs_[slot];
  if (const JobCold* c = ColdOf(j); c != nullptr && !c->key.empty()) return Quote(c->key);
  return JobId(slot, j.gen()).ToString();
}

JobInfo SchedulerImpl::MakeInfo(uint32_t slot) const {
  const Job& j = jobs_[slot];
  JobInfo info;
  info.id = JobId(slot, j.gen());
  info.kind = j.kind;
  info.state = StateOf(j);
  if (!IsTerminal(info.state) && Pending(slot)) {
    info.next_run = FromUnixNanos(j.word);
  }
  if (const JobCold* c = ColdOf(j)) {
    info.key = c->key;
    info.period = c->period;
    if (c->cron) {
      info.cron = c->cron->expr();
      info.tz = c->cron->tz();
    }
    info.attempt = c->attempt;
    info.runs = c->runs;
    info.failures = c->failures;
    info.skips = c->skips;
    info.consecutive_failures = c->consecutive_failures;
    info.last_error = c->last_error;
    info.reason = c->reason;
    if (j.waits_parent) info.parent = c->parent.ToString();
  } else {
    info.attempt = 1;
    info.runs = (j.state == JobState::kRunning || j.state == JobState::kCompleted || j.ran) ? 1 : 0;
  }
  if (info.reason.empty() && info.state == JobState::kCancelled) info.reason = "cancelled";
  return info;
}

}  // namespace internal
}  // namespace ax
