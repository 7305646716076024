// Fuzzes ParseDuration and checks FormatDuration round trips.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ax/duration.h"

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ax::Result<ax::Duration> d = ax::ParseDuration(text);
  if (d.ok()) {
    FUZZ_CHECK(d->count() >= 0);
    ax::Result<ax::Duration> back = ax::ParseDuration(ax::FormatDuration(*d));
    FUZZ_CHECK(back.ok() && *back == *d);
  } else {
    FUZZ_CHECK(d.error().code() == ax::StatusCode::kInvalidArgument);
    FUZZ_CHECK(d.error().message().rfind("duration: ", 0) == 0);
  }
  // Any non-negative value formats to text that parses back to it.
  if (size >= 8) {
    int64_t v = 0;
    std::memcpy(&v, data, 8);
    if (v >= 0) {
      ax::Result<ax::Duration> back = ax::ParseDuration(ax::FormatDuration(ax::Duration(v)));
      FUZZ_CHECK(back.ok() && back->count() == v);
    }
  }
  return 0;
}
