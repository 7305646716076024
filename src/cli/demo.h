// `ax demo`: the four scenarios of the README, live, until Ctrl-C.
#pragma once

namespace ax::cli {

// Runs the demo; returns the process exit code.
int DemoCommand(double speed);

}  // namespace ax::cli
