// Names of the public enums, as the API, logs and CLI print them.
#include "ax/events.h"
#include "ax/job_info.h"
#include "ax/options.h"
#include "ax/retry_policy.h"

namespace ax {

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kWaiting:
      return "waiting";
    case JobState::kRunning:
      return "running";
    case JobState::kPaused:
      return "paused";
    case JobState::kCompleted:
      return "completed";
    case JobState::kCancelled:
      return "cancelled";
    case JobState::kDead:
      return "dead";
  }
  return "unknown";
}

std::string_view JobKindName(JobKind k) {
  switch (k) {
    case JobKind::kOnce:
      return "once";
    case JobKind::kEvery:
      return "every";
    case JobKind::kCron:
      return "cron";
  }
  return "unknown";
}

std::string_view OverlapName(Overlap o) {
  switch (o) {
    case Overlap::kSkip:
      return "skip";
    case Overlap::kBufferOne:
      return "buffer_one";
    case Overlap::kConcurrent:
      return "concurrent";
    case Overlap::kReplace:
      return "replace";
  }
  return "unknown";
}

std::string_view MisfireName(Misfire m) {
  switch (m) {
    case Misfire::kSkip:
      return "skip";
    case Misfire::kOnce:
      return "once";
    case Misfire::kAll:
      return "all";
  }
  return "unknown";
}

std::string_view BackoffName(Backoff b) {
  switch (b) {
    case Backoff::kFixed:
      return "fixed";
    case Backoff::kLinear:
      return "linear";
    case Backoff::kExponential:
      return "exponential";
  }
  return "unknown";
}

std::string_view EventTypeName(EventType t) {
  switch (t) {
    case EventType::kScheduled:
      return "scheduled";
    case EventType::kStarted:
      return "started";
    case EventType::kSucceeded:
      return "succeeded";
    case EventType::kFailed:
      return "failed";
    case EventType::kRetrying:
      return "retrying";
    case EventType::kDead:
      return "dead";
    case EventType::kSkipped:
      return "skipped";
    case EventType::kSlow:
      return "slow";
    case EventType::kTimedOut:
      return "timed_out";
    case EventType::kAutoPaused:
      return "auto_paused";
    case EventType::kPaused:
      return "paused";
    case EventType::kResumed:
      return "resumed";
    case EventType::kCancelled:
      return "cancelled";
    case EventType::kCompleted:
      return "completed";
  }
  return "unknown";
}

}  // namespace ax
