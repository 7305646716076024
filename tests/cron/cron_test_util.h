// Helpers shared by the SPEC 3 tests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ax/cron.h"
#include "ax/instant.h"
#include "ax/status.h"

namespace ax::testing {

// The instant written in RFC 3339; fails the test if it does not parse.
inline Instant At(std::string_view rfc3339) {
  Result<Instant> t = ParseInstant(rfc3339);
  EXPECT_TRUE(t.ok()) << rfc3339 << ": " << t.status().ToString();
  return t.value_or(Instant{});
}

// The next `n` fires of `expr` in `tz` strictly after `from`, as UTC RFC 3339.
inline std::vector<std::string> NextFires(std::string_view expr, std::string_view tz,
                                          std::string_view from, int n) {
  std::vector<std::string> out;
  Result<CronSchedule> s = CronSchedule::Parse(expr, tz);
  EXPECT_TRUE(s.ok()) << expr << " @ " << tz << ": " << s.status().ToString();
  if (!s.ok()) return out;
  Instant t = At(from);
  for (int i = 0; i < n; ++i) {
    std::optional<Instant> next = s->Next(t);
    if (!next) {
      out.push_back("none");
      break;
    }
    out.push_back(FormatInstant(*next));
    t = *next;
  }
  return out;
}

// The InvalidArgument message of `r`, or "<ok>" when `r` holds a value.
template <class T>
std::string ErrorOf(const Result<T>& r) {
  if (r.ok()) return "<ok>";
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << r.error().ToString();
  return r.error().message();
}

}  // namespace ax::testing
