#include "server/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace ax::server {

void SetupLogging(const std::string& level) {
  auto logger = spdlog::get("ax");
  if (!logger) logger = spdlog::stderr_logger_mt("ax");
  logger->set_pattern("ts=%Y-%m-%dT%H:%M:%S.%fZ level=%l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

std::string Q(std::string_view v) {
  bool plain = !v.empty();
  for (char c : v) plain = plain && c > ' ' && c != '"' && c != '=' && c != '\\';
  if (plain) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace ax::server
