#!/usr/bin/env python3
"""`ax serve` with no flags (SPEC 5.1): SQLite at ./ax-data/ax.db, listening
on 127.0.0.1:7070.

Runs the daemon with no arguments in an empty directory, then checks the
ready log line, the database file, an answer on 127.0.0.1:7070 and a clean
exit on SIGTERM. Skipped (exit 77) when something else holds port 7070.

usage: defaults_test.py AX_BIN
"""
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77


def port_taken():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the daemon binds
    try:
        s.bind(("127.0.0.1", 7070))
        return False
    except OSError:
        return True
    finally:
        s.close()


def main():
    binary = os.path.abspath(sys.argv[1])
    if port_taken():
        print("skipped: 127.0.0.1:7070 is in use")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory() as d:
        log_path = os.path.join(d, "serve.log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen([binary, "serve"], cwd=d, stdout=log, stderr=log)
        try:
            deadline = time.time() + 30
            while time.time() < deadline and "event=ready" not in open(log_path).read():
                if proc.poll() is not None:
                    break
                time.sleep(0.05)
            text = open(log_path).read()
            if "listen_failed" in text and port_taken():
                print("skipped: 127.0.0.1:7070 was taken meanwhile")
                return SKIP
            if "listen=127.0.0.1:7070" not in text or "store=sqlite:./ax-data/ax.db" not in text:
                failures.append("ready line:\n" + text)
            if not os.path.isfile(os.path.join(d, "ax-data", "ax.db")):
                failures.append("no ax-data/ax.db in the working directory")
            c = http.client.HTTPConnection("127.0.0.1", 7070, timeout=10)
            c.request("GET", "/healthz")
            if c.getresponse().status != 200:
                failures.append("GET /healthz on 127.0.0.1:7070 did not answer 200")
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        if code != 0:
            failures.append("exit status %d after SIGTERM" % code)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("defaults: ./ax-data/ax.db, 127.0.0.1:7070, exit 0 on SIGTERM")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
