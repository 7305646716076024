// Fuzzes ParseInstant and checks FormatInstant / FormatInstantSeconds round trips.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ax/instant.h"

#include "fuzz_check.h"

namespace {

void CheckRoundTrip(ax::Instant t) {
  ax::Result<ax::Instant> back = ax::ParseInstant(ax::FormatInstant(t));
  FUZZ_CHECK(back.ok() && *back == t);
  // Truncating the first partial second of the range leaves it (1677-09-21T00:12:43Z).
  constexpr int64_t kFirstWholeSecond = -9'223'372'036'000'000'000;
  ax::Result<ax::Instant> whole = ax::ParseInstant(ax::FormatInstantSeconds(t));
  if (ax::ToUnixNanos(t) < kFirstWholeSecond) {
    FUZZ_CHECK(!whole.ok());
    return;
  }
  FUZZ_CHECK(whole.ok());
  const ax::Duration cut = t - *whole;  // the truncated fraction
  FUZZ_CHECK(cut.count() >= 0 && cut.count() < 1'000'000'000);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ax::Result<ax::Instant> t = ax::ParseInstant(text);
  if (t.ok()) {
    CheckRoundTrip(*t);
  } else {
    FUZZ_CHECK(t.error().code() == ax::StatusCode::kInvalidArgument);
    FUZZ_CHECK(t.error().message().rfind("instant: ", 0) == 0);
  }
  if (size >= 8) {
    int64_t v = 0;
    std::memcpy(&v, data, 8);
    CheckRoundTrip(ax::FromUnixNanos(v));
  }
  return 0;
}
