#!/usr/bin/env python3
"""`ax serve`'s engine tuning reaches the engine (docs/daemon.md).

The daemon runs twice on a fresh SQLite file, with `--hand-ahead 0s` and with
`--hand-ahead 1s`. Each time one job due in 300 ms runs (its webhook is
refused, so it ends dead), and GET /v1/stats must count it as handed ahead
to a worker exactly when the window is on: 0 jobs with the window off, 1
with a window longer than the job's delay. With the flag ignored, the
engine's default window (8 ms) would hand the job ahead in both runs.

usage: tuning_test.py SERVE_BIN
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

from crash_test import Client, wait_port


def handed_ahead(binary, workdir, window):
    port_file = os.path.join(workdir, "port-" + window)
    db = os.path.join(workdir, "ax-" + window + ".db")
    with open(os.path.join(workdir, "serve-" + window + ".log"), "w") as log:
        proc = subprocess.Popen(
            [binary, "serve", "--store", "sqlite:" + db, "--listen", "127.0.0.1:0",
             "--port-file", port_file, "--workers", "2", "--hand-ahead", window],
            stdout=log, stderr=log)
        try:
            c = Client(wait_port(port_file, proc))
            status, _ = c.call("POST", "/v1/jobs", {
                "id": "soon", "schedule": {"in": "300ms"},
                "target": {"http": {"url": "http://127.0.0.1:9/refused"}}})
            assert status == 201, status
            deadline = time.time() + 30
            while c.call("GET", "/v1/jobs/soon")[1]["state"] != "dead":
                assert time.time() < deadline, "the job never ended"
                time.sleep(0.02)
            engine = c.call("GET", "/v1/stats")[1]["engine"]
            assert engine["fired"] == 1, engine
            return engine["handed_ahead"]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as workdir:
        off = handed_ahead(binary, workdir, "0s")
        on = handed_ahead(binary, workdir, "1s")
    print("handed ahead: %d with --hand-ahead 0s, %d with 1s" % (off, on))
    if off != 0 or on != 1:
        print("FAIL: expected 0 and 1")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
