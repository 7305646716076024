// The parts of an http:// URL: for webhook targets and the CLI's --server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ax/status.h"

namespace ax::server {

// Splits a URL's authority ("host", "host:port", "[v6]" or "[v6]:port") into
// the host, without brackets, and the port ("80" when absent). A host is an
// IPv6 address in brackets or letters, digits, '.', '-', '_' and '~' (no
// user info, no percent-encoding). InvalidArgument saying what is wrong.
Status SplitAuthority(std::string_view authority, std::string& host, std::string& port);

// A port's digits as a number, 0 to 65535; nullopt for anything else.
std::optional<uint16_t> ParsePort(std::string_view digits);

// Parses "http://host:port/base" into host, port and a path prefix.
Status ParseServerUrl(std::string_view url, std::string& host, std::string& port,
                      std::string& base_path);

}  // namespace ax::server
