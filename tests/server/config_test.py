#!/usr/bin/env python3
"""`ax serve --config FILE` sets the flags from the file (docs/daemon.md).

The daemon runs on nothing but a config file that names its store, address,
port file and worker count, and GET /v1/stats must show that worker count;
a flag on the command line wins over the file's key; a key that names no
flag stops the daemon with an error that names the key. Until 2026-12-06
the file was read by nothing (CLI11 reads config files only for the
top-level app), so the first run would wait for a port file that never came.

usage: config_test.py SERVE_BIN
"""
import os
import signal
import subprocess
import sys
import tempfile

from crash_test import Client, wait_port


def workers_seen(binary, workdir, config, extra):
    port_file = os.path.join(workdir, "port")
    if os.path.exists(port_file):
        os.remove(port_file)
    with open(os.path.join(workdir, "serve.log"), "w") as log:
        proc = subprocess.Popen([binary, "serve", "--config", config] + extra,
                                stdout=log, stderr=log)
        try:
            c = Client(wait_port(port_file, proc))
            return c.call("GET", "/v1/stats")[1]["engine"]["workers"]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as workdir:
        config = os.path.join(workdir, "serve.toml")
        with open(config, "w") as f:
            f.write('store = "sqlite:%s"\nlisten = "127.0.0.1:0"\nport-file = "%s"\n'
                    "workers = 3\nallow-exec = true\n"
                    % (os.path.join(workdir, "ax.db"), os.path.join(workdir, "port")))
        seen = workers_seen(binary, workdir, config, [])
        if seen != 3:
            failures.append("workers from the file: %s, expected 3" % seen)
        seen = workers_seen(binary, workdir, config, ["--workers", "2"])
        if seen != 2:
            failures.append("workers with --workers 2 beside the file: %s, expected 2" % seen)

        bad = os.path.join(workdir, "bad.toml")
        with open(bad, "w") as f:
            f.write("wrokers = 3\n")
        run = subprocess.run([binary, "serve", "--config", bad], capture_output=True,
                             text=True, timeout=30)
        if run.returncode == 0 or "unknown key 'wrokers'" not in run.stdout + run.stderr:
            failures.append("a misspelt key: exit %d, output %r"
                            % (run.returncode, run.stdout + run.stderr))
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("config file: workers 3 from the file, 2 from the command line; "
              "a misspelt key refused")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
