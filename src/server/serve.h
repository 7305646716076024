// `ax serve` (SPEC §5): the daemon. Flags mirror ServeConfig.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ax::server {

struct ServeConfig {
  // "sqlite:PATH" (default) or "redis://HOST:PORT/QUEUE" (not yet supported).
  std::string store = "sqlite:./ax-data/ax.db";
  // HOST:PORT; loopback unless told otherwise (5.5). Port 0 = any free port.
  std::string listen = "127.0.0.1:7070";
  int workers = 64;        // runs at once (webhooks block a worker while in flight)
  std::string token_file;  // with it, every request but GET /healthz needs the token
  bool allow_exec = false;
  // Tuning (SPEC is silent; defaults in docs/daemon.md).
  int io_threads = 2;
  size_t body_limit = 1 << 20;
  std::string window = "1h";     // the load window (4.2)
  std::string retention = "7d";  // terminal jobs are purged after it (4.7)
  std::string sync = "full";     // SQLite synchronous: full | normal
  std::string drain_timeout = "10s";
  // How late a job may start so that close deadlines share a wake-up
  // (SchedulerOptions::timer_slack); 0 = as exact as the OS allows.
  std::string timer_slack = "0s";
  // The engine's wake-up tuning (SchedulerOptions::hand_ahead, pin_workers,
  // worker_slice; docs/engine.md), with the engine's defaults.
  std::string hand_ahead = "8ms";
  bool pin_workers = false;
  std::string worker_slice = "100us";
  std::string log_level = "info";  // trace debug info warn error off
  // When set, the bound port is written to this file once listening
  // (lets tests use port 0).
  std::string port_file;
};

// Runs the daemon until SIGTERM or SIGINT, then drains. Returns the process
// exit code (0 after a clean drain; 2 for bad flags; 1 for start failures).
int ServeCommand(const ServeConfig& config);

// Registers `serve` with its flags (and --config FILE, TOML/INI with the
// same names) on `app`.
void AddServeCommand(CLI::App& app);

}  // namespace ax::server
