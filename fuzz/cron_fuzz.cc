// Fuzzes CronSchedule::Parse and Next. Input: byte 0 picks a zone, bytes 1-8
// are the `after` instant (int64 ns), the rest is the expression.
//
// Properties: Parse never crashes and refuses with InvalidArgument; a parsed
// schedule re-parses from expr()/tz(); Next(after) is strictly after `after`,
// is a whole second for field expressions, and nothing fires in between
// (Next(r - 1ns) == r); successive fires strictly increase.
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ax/cron.h"

#include "fuzz_check.h"

namespace {

constexpr std::array<std::string_view, 10> kZones = {
    "UTC",          "America/New_York", "Australia/Lord_Howe", "Europe/Berlin", "America/Sao_Paulo",
    "Asia/Kolkata", "Pacific/Chatham",  "Pacific/Apia",        "Asia/Shanghai", "Europe/Dublin"};

void CheckNext(const ax::CronSchedule& s, ax::Instant after) {
  ax::Instant t = after;
  for (int i = 0; i < 3; ++i) {
    std::optional<ax::Instant> next = s.Next(t);
    if (!next) return;
    FUZZ_CHECK(*next > t);
    if (!s.every()) FUZZ_CHECK(ax::ToUnixNanos(*next) % 1'000'000'000 == 0);
    FUZZ_CHECK(s.Next(*next - ax::Duration(1)) == next);
    t = *next;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9 || size > 200) return 0;
  const std::string_view zone = kZones[data[0] % kZones.size()];
  int64_t after_ns = 0;
  std::memcpy(&after_ns, data + 1, 8);
  const std::string_view expr(reinterpret_cast<const char*>(data + 9), size - 9);
  ax::Result<ax::CronSchedule> s = ax::CronSchedule::Parse(expr, zone);
  if (!s.ok()) {
    FUZZ_CHECK(s.error().code() == ax::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!s.error().message().empty());
    return 0;
  }
  ax::Result<ax::CronSchedule> again = ax::CronSchedule::Parse(s->expr(), s->tz());
  FUZZ_CHECK(again.ok() && again->is_interval() == s->is_interval());
  const ax::Instant after = ax::FromUnixNanos(after_ns);
  FUZZ_CHECK(again->Next(after) == s->Next(after));
  CheckNext(*s, after);
  return 0;
}
