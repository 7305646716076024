// Structured logs of the daemon: one line per event, key=value.
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace ax::server {

// Sets the process-wide logger (stderr) at `level` (trace ... off).
void SetupLogging(const std::string& level);

// Quotes a value for key=value lines when it needs it.
std::string Q(std::string_view v);

}  // namespace ax::server
