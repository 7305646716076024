// libFuzzer target: the job-body, batch and patch parsers must never crash,
// hang or accept a body they cannot print back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/job_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto one = ax::server::ParseJobBody(text);
  if (one.ok()) {
    (void)ax::server::JobToJson(*one);
    if (one->handler == "http") (void)ax::server::ParseHttpTarget(one->payload);
    if (one->handler == "exec") (void)ax::server::ParseExecTarget(one->payload);
  }
  auto many = ax::server::ParseJobsBody(text);
  if (many.ok()) {
    for (const auto& j : many->jobs) (void)ax::server::JobToJson(j);
  }
  (void)ax::server::ParsePatchBody(text);
  return 0;
}
