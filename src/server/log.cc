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
  // Control bytes are escaped, so that a value (a job id is any JSON string)
  // cannot end a line or move the cursor. Bytes from 0x80 stay as they are.
  auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  bool plain = !v.empty();
  for (char c : v) plain = plain && c > ' ' && c != '"' && c != '=' && c != '\\' && c != 0x7f;
  if (plain) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (control(c)) {
      constexpr std::string_view kHex = "0123456789abcdef";
      const auto b = static_cast<unsigned char>(c);
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

}  // namespace ax::server
