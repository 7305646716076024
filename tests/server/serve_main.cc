// A stand-alone `ax serve` for the integration tests and benchmarks (the real
// binary is build/<preset>/ax once src/cli/main.cc wires AddServeCommand):
//   ax_test_serve serve --store sqlite:PATH --listen 127.0.0.1:0 --port-file F
#include <CLI/CLI.hpp>

#include "server/serve.h"

int main(int argc, char** argv) {
  CLI::App app{"ax serve (test build)"};
  app.require_subcommand(1);
  ax::server::AddServeCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
