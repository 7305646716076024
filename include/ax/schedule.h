// File: ax/schedule.h
//
// The schedule spec shared by the API and the CLI (SPEC 3.4): exactly one of
// `cron` (optionally with `tz`), `in` (a duration from now), `at` (an
// instant) or `every` (a period). Also the misfire policy of SPEC 3.5.
//
// Example:
//   ax::ScheduleFields fields;
//   fields.cron = "0 2 * * *";
//   fields.tz = "Asia/Shanghai";
//   ax::Result<ax::ScheduleSpec> spec = ax::MakeScheduleSpec(fields);
//   if (spec.ok() && spec->kind == ax::ScheduleKind::kCron) { ... spec->cron->Next(now) ... }
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ax/cron.h"
#include "ax/status.h"
#include "ax/time.h"

namespace ax {

// The raw fields as a caller (HTTP body, CLI flags) provides them.
struct ScheduleFields {
  std::optional<std::string> cron;   // cron expression (SPEC 3.3)
  std::optional<std::string> tz;     // IANA zone for `cron`; default "UTC"
  std::optional<std::string> in;     // duration (SPEC 3.1), >= 0
  std::optional<std::string> at;     // RFC 3339 instant (SPEC 3.2)
  std::optional<std::string> every;  // duration (SPEC 3.1), > 0
};

enum class ScheduleKind { kCron, kIn, kAt, kEvery };

// "cron", "in", "at" or "every".
std::string_view ScheduleKindName(ScheduleKind kind);

// A validated schedule. Exactly the member named by `kind` is meaningful.
struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::kIn;
  std::optional<CronSchedule> cron;  // kCron (carries its zone)
  Duration in{0};                    // kIn: delay from submission, >= 0
  Instant at{};                      // kAt
  Duration every{0};                 // kEvery: period, > 0
};

// MakeScheduleSpec()
//
// Validates and parses `fields`. Errors (kInvalidArgument):
//   "schedule: give exactly one of cron, in, at, every (got in and every)"
//   "schedule: give exactly one of cron, in, at, every (got none)"
//   "schedule: tz is only valid with cron (got tz with at)"
// and the parse error of the chosen field, prefixed with its name for
// durations and instants ("every: the period must be positive, got '0s'") and
// as-is for cron (whose messages already name the cron field or "tz").
Result<ScheduleSpec> MakeScheduleSpec(const ScheduleFields& fields);

// What to do with the ticks of a durable periodic or cron job that passed
// while the process was down (SPEC 3.5).
enum class MisfirePolicy {
  kSkip,  // default: only the next future tick
  kOnce,  // one run now, then the schedule
  kAll,   // each missed tick (capped by the store)
};

// "skip", "once" or "all" (case-insensitive) to the policy; anything else is
// kInvalidArgument: "misfire: unknown policy 'x' (expected skip, once or all)".
Result<MisfirePolicy> ParseMisfirePolicy(std::string_view text);

// "skip", "once" or "all".
std::string_view MisfirePolicyName(MisfirePolicy policy);

}  // namespace ax
