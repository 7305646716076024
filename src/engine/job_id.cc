#include "ax/job_id.h"

#include <charconv>

namespace ax {

std::string JobId::ToString() const {
  return "#" + std::to_string(slot()) + "." + std::to_string(generation());
}

std::optional<JobId> JobId::Parse(std::string_view s) {
  if (s.size() < 4 || s[0] != '#') return std::nullopt;
  const char* p = s.data() + 1;
  const char* end = s.data() + s.size();
  uint32_t slot = 0;
  uint32_t gen = 0;
  auto r1 = std::from_chars(p, end, slot);
  if (r1.ec != std::errc() || r1.ptr == end || *r1.ptr != '.') return std::nullopt;
  auto r2 = std::from_chars(r1.ptr + 1, end, gen);
  if (r2.ec != std::errc() || r2.ptr != end || gen == 0) return std::nullopt;
  return JobId(slot, gen);
}

}  // namespace ax
