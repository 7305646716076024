// File: ax/job_info.h
//
// A job's states (SPEC 2.3) and the snapshot `Scheduler::Info` returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ax/job_id.h"
#include "ax/options.h"
#include "ax/time.h"

namespace ax {

enum class JobState : uint8_t {
  kWaiting,  // queued for its next run
  kRunning,  // a run is on a worker
  kPaused,
  kCompleted,  // one-shot done (terminal)
  kCancelled,  // terminal
  kDead,       // failed after its retries, or its parent failed (terminal)
};
std::string_view JobStateName(JobState s);
inline bool IsTerminal(JobState s) { return s >= JobState::kCompleted; }

enum class JobKind : uint8_t { kOnce, kEvery, kCron };
std::string_view JobKindName(JobKind k);

struct JobInfo {
  JobId id;
  std::string key;
  JobKind kind = JobKind::kOnce;
  JobState state = JobState::kWaiting;
  // Next scheduled run; empty when terminal, paused or waiting for a parent.
  std::optional<Instant> next_run;
  Duration period{0};     // kEvery
  std::string cron;       // kCron: expression
  std::string tz;         // kCron: zone
  int attempt = 0;        // attempt of the current or last run (1-based)
  uint64_t runs = 0;      // runs started
  uint64_t failures = 0;  // failed attempts
  uint64_t skips = 0;     // skipped ticks
  int consecutive_failures = 0;
  std::string last_error;
  std::string reason;  // why it is paused / cancelled / dead
  std::string parent;  // the parent's id text, when it waits for one
};

}  // namespace ax
