#include "cli/cron_next.h"

#include <chrono>
#include <optional>
#include <string>

#include "ax/cron.h"
#include "ax/instant.h"

namespace ax::cli {
namespace {

constexpr int kMaxCount = 100'000;

int Fail(std::ostream& err, const std::string& message) {
  err << "ax cron next: " << message << "\n";
  return 1;
}

}  // namespace

int CronNextCommand(std::string_view expr, std::string_view tz, std::string_view from, int count,
                    std::ostream& out, std::ostream& err) {
  if (count < 1 || count > kMaxCount) {
    return Fail(
        err, "count: " + std::to_string(count) + " is out of range 1-" + std::to_string(kMaxCount));
  }
  Result<CronSchedule> schedule = CronSchedule::Parse(expr, tz);
  if (!schedule.ok()) return Fail(err, schedule.error().message());
  if (std::optional<Duration> every = schedule->every();
      every && *every % std::chrono::seconds(1) != Duration::zero()) {
    return Fail(err, "cron: '" + schedule->expr() +
                         "' fires between whole seconds, which this command's lines cannot "
                         "show; use a period of whole seconds");
  }
  Instant t;
  if (from.empty()) {
    t = std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  } else {
    Result<Instant> parsed = ParseInstant(from);
    if (!parsed.ok()) return Fail(err, "from: " + parsed.error().message());
    t = *parsed;
  }
  std::string lines;
  for (int i = 0; i < count; ++i) {
    std::optional<Instant> next = schedule->Next(t);
    if (!next) {
      return Fail(err, "only " + std::to_string(i) +
                           " fire times exist before the end of the representable range "
                           "(2262-04-11T23:47:16Z)");
    }
    lines += FormatInstantSeconds(*next);
    lines += '\n';
    t = *next;
  }
  out << lines;
  return out ? 0 : 1;
}

}  // namespace ax::cli
