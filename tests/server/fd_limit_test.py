#!/usr/bin/env python3
"""`ax serve` out of file descriptors neither spins nor stops serving.

The daemon runs with a limit of 64 descriptors and gets 100 connections, so
that accept() fails with EMFILE while they are open. Its CPU time over the
next 2 s must stay under half a second (until 2026-12-06 every failed accept
was retried at once: 2.5 s of CPU over 2 s on two vCPUs, and no log line),
the failure must be logged once a spell (not once a retry), and once the
connections close the daemon must answer again and log that it recovered.

usage: fd_limit_test.py SERVE_BIN
"""
import http.client
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time

from crash_test import wait_port


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def healthz(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/healthz")
    return c.getresponse().status


def main():
    binary = sys.argv[1]
    failures = []
    spent = 0.0
    with tempfile.TemporaryDirectory() as d:
        port_file = os.path.join(d, "port")
        log_path = os.path.join(d, "serve.log")

        def limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

        with open(log_path, "w") as log:
            proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--port-file",
                                     port_file, "--store", "sqlite:" + os.path.join(d, "ax.db"),
                                     "--workers", "2", "--io-threads", "2"],
                                    stdout=log, stderr=log, preexec_fn=limit)
        try:
            port = wait_port(port_file, proc)
            healthz(port)
            socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
            deadline = time.time() + 30
            while time.time() < deadline and "accept_failed" not in open(log_path).read():
                time.sleep(0.05)
            before = cpu_seconds(proc.pid)
            time.sleep(2)  # a span to measure the daemon's CPU over, not a wait for an event
            spent = cpu_seconds(proc.pid) - before
            if spent > 0.5:
                failures.append("%.2f s of CPU in 2 s with no descriptor left" % spent)
            for s in socks:
                s.close()
            # The request waits in the listen queue until an accept works
            # (every 100 ms), then is answered.
            try:
                status = healthz(port)
            except OSError as e:
                status = e
            if status != 200:
                failures.append("no answer to /healthz once the connections closed: %s" % status)
            if proc.poll() is not None:
                failures.append("the daemon exited with %s" % proc.returncode)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
        text = open(log_path).read()
        # Once per spell without descriptors, not once per retry: each
        # accept_failed is followed by an accept_recovered before the next.
        # A descriptor the daemon frees meanwhile (the first /healthz's
        # connection, closed when the client lets it go) may end a spell
        # early and start another, so there may be more than one.
        events = re.findall(r"event=(accept_failed|accept_recovered)", text)
        if not events or events != ["accept_failed", "accept_recovered"] * (len(events) // 2):
            failures.append("accept_failed not logged once a spell, each followed by "
                            "accept_recovered:\n" + text)
        if "Sanitizer" in text:
            failures.append("a sanitizer report:\n" + text)
        if failures:
            print("CPU over 2 s: %.2f s" % spent)
        else:
            print("fd limit: %.2f s of CPU over 2 s with accept failing; logged once in "
                  "each of %d spells; serving again after" % (spent, len(events) // 2))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
