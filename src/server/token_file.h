// The bearer token's file, read alike by the daemon (--token-file) and by the
// CLI client (--token-file, $AX_TOKEN_FILE), so that one file serves both.
#pragma once

#include <string>

#include "ax/status.h"

namespace ax::server {

// Reads the token from the file at `path`: its whole text, without the
// whitespace around it (a trailing newline, say). InvalidArgument, starting
// "token-file: " and naming the path, when the file cannot be read, is a
// directory or empty, or when the token holds anything but visible ASCII
// (a space or a second line, which no Authorization header could carry).
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace ax::server
