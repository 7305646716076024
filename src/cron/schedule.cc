// The schedule spec (SPEC 3.4) and misfire policies (SPEC 3.5).
#include "ax/schedule.h"

#include <string>
#include <vector>

#include "ax/duration.h"
#include "ax/instant.h"

namespace ax {
namespace {

// "a", "a and b", "a, b and c".
std::string JoinNames(const std::vector<std::string_view>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

Status Prefixed(std::string_view field, const Status& s) {
  return Status::InvalidArgument(std::string(field) + ": " + s.message());
}

}  // namespace

std::string_view ScheduleKindName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kCron:
      return "cron";
    case ScheduleKind::kIn:
      return "in";
    case ScheduleKind::kAt:
      return "at";
    case ScheduleKind::kEvery:
      return "every";
  }
  return "unknown";
}

Result<ScheduleSpec> MakeScheduleSpec(const ScheduleFields& fields) {
  std::vector<std::string_view> given;
  if (fields.cron) given.emplace_back("cron");
  if (fields.in) given.emplace_back("in");
  if (fields.at) given.emplace_back("at");
  if (fields.every) given.emplace_back("every");
  if (given.size() != 1) {
    return Status::InvalidArgument("schedule: give exactly one of cron, in, at, every (got " +
                                   JoinNames(given) + ")");
  }
  if (fields.tz && !fields.cron) {
    return Status::InvalidArgument("schedule: tz is only valid with cron (got tz with " +
                                   std::string(given[0]) + ")");
  }
  ScheduleSpec spec;
  if (fields.cron) {
    Result<CronSchedule> cron = CronSchedule::Parse(*fields.cron, fields.tz.value_or("UTC"));
    if (!cron.ok()) return cron.status();
    spec.kind = ScheduleKind::kCron;
    spec.cron = *std::move(cron);
  } else if (fields.in) {
    Result<Duration> d = ParseDuration(*fields.in);
    if (!d.ok()) return Prefixed("in", d.error());
    spec.kind = ScheduleKind::kIn;
    spec.in = *d;
  } else if (fields.at) {
    Result<Instant> t = ParseInstant(*fields.at);
    if (!t.ok()) return Prefixed("at", t.error());
    spec.kind = ScheduleKind::kAt;
    spec.at = *t;
  } else {
    Result<Duration> d = ParseDuration(*fields.every);
    if (!d.ok()) return Prefixed("every", d.error());
    if (d->count() <= 0) {
      return Status::InvalidArgument("every: the period must be positive, got '" + *fields.every +
                                     "'");
    }
    spec.kind = ScheduleKind::kEvery;
    spec.every = *d;
  }
  return spec;
}

Result<MisfirePolicy> ParseMisfirePolicy(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (lower == "skip") return MisfirePolicy::kSkip;
  if (lower == "once") return MisfirePolicy::kOnce;
  if (lower == "all") return MisfirePolicy::kAll;
  return Status::InvalidArgument("misfire: unknown policy '" + std::string(text) +
                                 "' (expected skip, once or all)");
}

std::string_view MisfirePolicyName(MisfirePolicy policy) {
  switch (policy) {
    case MisfirePolicy::kSkip:
      return "skip";
    case MisfirePolicy::kOnce:
      return "once";
    case MisfirePolicy::kAll:
      return "all";
  }
  return "unknown";
}

}  // namespace ax
