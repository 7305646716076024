// File: ax/events.h
//
// Lifecycle events (SPEC 2.10), delivered to SchedulerOptions::observer on one
// event thread, in the order they happened.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ax/job_id.h"
#include "ax/time.h"

namespace ax {

enum class EventType : uint8_t {
  kScheduled,   // accepted, or a periodic job's next occurrence is set
  kStarted,     // a run began on a worker
  kSucceeded,   // a run returned OK
  kFailed,      // a run threw or returned an error
  kRetrying,    // a failed attempt will be retried (at `next_run`)
  kDead,        // out of attempts (or the parent failed): a dead letter
  kSkipped,     // a tick was skipped (overlap or missed ticks); `count` of them
  kSlow,        // a run passed its slow threshold
  kTimedOut,    // a run passed its timeout: stop requested, attempt failed
  kAutoPaused,  // a periodic job paused itself after N consecutive failures
  kPaused,
  kResumed,
  kCancelled,
  kCompleted,  // a one-shot job finished successfully
};
std::string_view EventTypeName(EventType t);

struct Event {
  EventType type;
  JobId id;
  std::string key;       // the job's key, may be empty
  Instant at;            // when it happened (engine clock)
  Instant scheduled_at;  // the run's scheduled instant, where one applies
  Instant next_run;      // kScheduled / kRetrying: the next run
  int attempt = 0;
  uint64_t count = 1;    // kSkipped: how many ticks
  Duration lateness{0};  // kStarted: start - scheduled_at
  std::string message;   // error text or reason
};

}  // namespace ax
