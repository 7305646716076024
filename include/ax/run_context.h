// File: ax/run_context.h
//
// What a running callback knows about its run (SPEC 2.7): the job, the attempt
// (1 for the first), the instant it was scheduled for, and a stop token that
// turns true when the engine asks the run to stop (cancel, timeout, `replace`
// overlap, shutdown). Stopping is cooperative: the engine never interrupts a
// thread.
#pragma once

#include <atomic>
#include <string_view>

#include "ax/job_id.h"
#include "ax/time.h"

namespace ax {

// Cheap, copyable view of one run's stop request.
class StopToken {
 public:
  StopToken() = default;
  explicit StopToken(const std::atomic<bool>* flag) : flag_(flag) {}
  bool stop_requested() const { return flag_ != nullptr && flag_->load(std::memory_order_acquire); }
  // Whether a stop can ever be requested (false for a default token).
  bool can_stop() const { return flag_ != nullptr; }

 private:
  const std::atomic<bool>* flag_ = nullptr;
};

class RunContext {
 public:
  RunContext(JobId id, std::string_view key, int attempt, Instant scheduled_at, StopToken stop)
      : id_(id), key_(key), attempt_(attempt), scheduled_at_(scheduled_at), stop_(stop) {}

  JobId id() const { return id_; }
  // The caller's key, or empty when the job has none.
  std::string_view key() const { return key_; }
  int attempt() const { return attempt_; }
  Instant scheduled_at() const { return scheduled_at_; }
  bool stop_requested() const { return stop_.stop_requested(); }
  StopToken stop_token() const { return stop_; }

 private:
  JobId id_;
  std::string_view key_;
  int attempt_;
  Instant scheduled_at_;
  StopToken stop_;
};

}  // namespace ax
