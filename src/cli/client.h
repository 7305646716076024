// The CLI client of `ax serve` (SPEC 5.4): `ax add`, `ax ls`, `ax get`,
// `ax rm`, `ax pause`, `ax resume`, `ax set` mirror the HTTP API. Each takes
// --server (default http://127.0.0.1:7070, or $AX_SERVER) and --token-file
// (or $AX_TOKEN_FILE).
#pragma once

namespace CLI {
class App;
}

namespace ax::cli {

// Registers the client subcommands on `app`. On an API error they print
// "ax: <message>" to stderr and exit non-zero (CLI::RuntimeError).
void AddClientCommands(CLI::App& app);

}  // namespace ax::cli
