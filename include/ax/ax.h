// File: ax/ax.h — the umbrella header: everything public in libax.
#pragma once

#include "ax/clock.h"
#include "ax/cron.h"
#include "ax/duration.h"
#include "ax/events.h"
#include "ax/instant.h"
#include "ax/job_id.h"
#include "ax/job_info.h"
#include "ax/options.h"
#include "ax/retry_policy.h"
#include "ax/run_context.h"
#include "ax/schedule.h"
#include "ax/scheduler.h"
#include "ax/stats.h"
#include "ax/status.h"
#include "ax/task.h"
#include "ax/time.h"
