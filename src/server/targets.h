// The daemon's targets (SPEC 5.2): what a job does when it fires.
//   http - an HTTP request (method, URL, headers, body); success = 2xx.
//          Each request carries Ax-Job-Id, Ax-Attempt and Ax-Scheduled-At
//          (RFC 3339) so receivers can be idempotent.
//   exec - runs argv directly (no shell); success = exit status 0. The
//          process gets AX_JOB_ID, AX_ATTEMPT and AX_SCHEDULED_AT.
#pragma once

#include <string_view>

#include "ax/durable.h"
#include "ax/run_context.h"
#include "ax/status.h"

namespace ax::server {

// Registers handler types "http" and "exec" on `d`. With !allow_exec, exec
// jobs fail at run time (the API refuses them earlier).
Status RegisterTargets(DurableScheduler& d, bool allow_exec);

Status RunHttpTarget(const RunContext& ctx, std::string_view payload);
Status RunExecTarget(const RunContext& ctx, std::string_view payload);

}  // namespace ax::server
