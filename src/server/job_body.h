// The JSON bodies of the HTTP API (SPEC 5.3), parsed by pure functions:
// text in, a validated job (or a Status naming the offending field) out.
// No I/O, no clock: a fuzz target drives them (fuzz/server/).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ax/status.h"
#include "ax/store.h"
#include "ax/time.h"

namespace ax::server {

// A job body: {"id", "schedule", "target", "retry", "timeout", "overlap",
// "misfire", "max_catch_up", "parent"}. Returns the job as a DurableJob spec:
// handler "http" or "exec", payload the target's canonical JSON. Errors are
// InvalidArgument with the field's path first ("schedule.every: ...",
// "retry.backoff: ..."); with `path_prefix` ("jobs[3].") prepended.
Result<DurableJob> ParseJobBody(std::string_view json, std::string_view path_prefix = "");

// A POST /v1/jobs body: one job, or {"jobs": [job, ...]} (1 to 10,000).
struct JobsBody {
  bool batch = false;
  std::vector<DurableJob> jobs;
};
Result<JobsBody> ParseJobsBody(std::string_view json);

// A PATCH /v1/jobs/{id} body: exactly one of {"delay": D}, {"period": D},
// {"cron": E[, "tz": Z]}.
struct JobPatch {
  enum class Kind { kDelay, kPeriod, kCron } kind = Kind::kDelay;
  Duration duration{0};
  std::string cron;
  std::string tz;
};
Result<JobPatch> ParsePatchBody(std::string_view json);

// The http target's payload: {"method", "url", "headers", "body"}.
struct HttpTargetSpec {
  std::string method = "POST";
  std::string url;
  std::string host;
  std::string port = "80";
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Duration timeout = std::chrono::seconds(30);  // "timeout", else the job's
};
Result<HttpTargetSpec> ParseHttpTarget(std::string_view payload_json);
// Splits "http://host[:port][/path][?query]" (the host as SplitAuthority
// takes it; a fragment is dropped); InvalidArgument naming `field`.
Status SplitHttpUrl(std::string_view url, std::string_view field, HttpTargetSpec& out);

// The exec target's payload: {"argv": [...]}.
struct ExecTargetSpec {
  std::vector<std::string> argv;
  Duration timeout = std::chrono::seconds(30);
};
Result<ExecTargetSpec> ParseExecTarget(std::string_view payload_json);

// The job as the API shows it (JSON text).
std::string JobToJson(const DurableJob& job);

// `j` as the text of a response. Bytes that are not UTF-8 (a job id or a
// query key a client sent, a value an edited store holds) become U+FFFD:
// nlohmann's plain dump() throws on them, out of the request's handler.
std::string ResponseText(const nlohmann::json& j);

// True when two jobs have the same spec (handler, payload, schedule and
// options): a resubmission of the same id with the same spec is idempotent.
bool SameSpec(const DurableJob& a, const DurableJob& b);

}  // namespace ax::server
