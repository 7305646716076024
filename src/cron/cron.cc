// CronSchedule: parsing of expressions and macros (SPEC 3.3).
#include "ax/cron.h"

#include <utility>

#include "ax/duration.h"

#include "cron/cron_fields.h"
#include "cron/cron_program.h"

namespace ax {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && internal::IsCronSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && internal::IsCronSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool EqualsLower(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != lower[i]) return false;
  }
  return true;
}

struct Macro {
  std::string_view name;
  std::string_view fields;
};
constexpr Macro kMacros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

// Fills `program` from a macro expression (starting with '@').
Status ParseMacro(std::string_view expr, internal::CronProgram* program) {
  const size_t space = expr.find_first_of(internal::kCronSpace);
  const std::string_view name = expr.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view() : Trim(expr.substr(space));
  if (EqualsLower(name, "@every")) {
    if (rest.empty())
      return Status::InvalidArgument("cron: @every needs a duration, e.g. @every 15m");
    Result<Duration> d = ParseDuration(rest);
    if (!d.ok()) return Status::InvalidArgument("cron: @every: " + d.error().message());
    if (d->count() <= 0) return Status::InvalidArgument("cron: @every duration must be positive");
    program->every = *d;
    program->fields.interval = true;
    return Status::Ok();
  }
  for (const Macro& m : kMacros) {
    if (!EqualsLower(name, m.name)) continue;
    if (!rest.empty()) {
      return Status::InvalidArgument("cron: " + std::string(m.name) + " takes no arguments");
    }
    Result<internal::CronFields> fields = internal::ParseCronFields(m.fields);
    program->fields = *std::move(fields);
    return Status::Ok();
  }
  return Status::InvalidArgument(
      "cron: unknown macro '" + std::string(name) +
      "' (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or "
      "@every <duration>)");
}

}  // namespace

CronSchedule::CronSchedule(std::shared_ptr<const internal::CronProgram> program)
    : program_(std::move(program)) {}

Result<CronSchedule> CronSchedule::Parse(std::string_view expr, std::string_view tz) {
  expr = Trim(expr);
  if (expr.empty()) return Status::InvalidArgument("cron: empty expression");
  auto program = std::make_shared<internal::CronProgram>();
  program->expr = std::string(expr);
  program->tz = std::string(tz);
  if (expr.front() == '@') {
    AX_RETURN_IF_ERROR(ParseMacro(expr, program.get()));
  } else {
    Result<internal::CronFields> fields = internal::ParseCronFields(expr);
    if (!fields.ok()) return fields.status();
    program->fields = *std::move(fields);
  }
  Result<internal::Zone> zone = internal::Zone::Load(tz);
  if (!zone.ok()) return zone.status();
  program->zone = *std::move(zone);
  return CronSchedule(std::move(program));
}

std::optional<Instant> CronSchedule::Next(Instant after) const {
  return internal::NextFire(*program_, after);
}

bool CronSchedule::is_interval() const { return program_->fields.interval; }
std::optional<Duration> CronSchedule::every() const { return program_->every; }
const std::string& CronSchedule::expr() const { return program_->expr; }
const std::string& CronSchedule::tz() const { return program_->tz; }

}  // namespace ax
