#!/usr/bin/env python3
"""SIGTERM drains `ax serve` (SPEC 5.5, 4.5; docs/daemon.md).

1. A run under way finishes within --drain-timeout and is recorded once;
   meanwhile the daemon still accepts connections and answers them 503 (GET
   /healthz: draining).
2. A run still going when --drain-timeout is up is stopped, keeps its lease
   and runs again at the next start (attempt 2, recovered). Until 2026-12-07
   the drain stopped an exec run at once and recorded it Dead: never run
   again.

usage: drain_test.py SERVE_BIN
"""
import http.client
import os
import signal
import subprocess
import sys
import tempfile
import time

from crash_test import Client, wait_port


def start(binary, workdir, drain):
    port_file = os.path.join(workdir, "port")
    if os.path.exists(port_file):
        os.remove(port_file)
    log = open(os.path.join(workdir, "serve.log"), "ab")
    proc = subprocess.Popen(
        [binary, "serve", "--store", "sqlite:" + os.path.join(workdir, "ax.db"), "--listen",
         "127.0.0.1:0", "--port-file", port_file, "--allow-exec", "--drain-timeout", drain],
        stdout=log, stderr=log)
    return proc, wait_port(port_file, proc)


def wait_for(pred, what, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise RuntimeError("timed out waiting for " + what)


def submit_exec(port, job_id, script):
    status, body = Client(port).call("POST", "/v1/jobs", {
        "id": job_id, "schedule": {"in": "0s"},
        "target": {"exec": {"argv": ["sh", "-c", script], "timeout": "60s"}}})
    if status != 201:
        raise RuntimeError("submit %s: %s %s" % (job_id, status, body))


def fresh_get(port, path):
    """One request on a new connection: (status, body text)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as workdir:
        # 1. A run that ends within the drain.
        proc, port = start(binary, workdir, "20s")
        started = os.path.join(workdir, "started")
        submit_exec(port, "slow", "touch %s; sleep 1.5" % started)
        wait_for(lambda: os.path.exists(started), "the run to start")
        proc.send_signal(signal.SIGTERM)
        seen = wait_for(lambda: (lambda r: r if r[0] == 503 else None)(
            fresh_get(port, "/healthz")), "a 503 on a new connection", timeout=1.4)
        if '"draining"' not in seen[1]:
            failures.append("GET /healthz while draining: %r" % (seen,))
        code = proc.wait(timeout=30)
        if code != 0:
            failures.append("exit status %d after the drain" % code)
        proc, port = start(binary, workdir, "20s")
        job = Client(port).call("GET", "/v1/jobs/slow")[1]
        if job.get("state") != "completed" or job.get("runs") != 1 or job.get("recovered"):
            failures.append("a run that ended in the drain: %r" % job)

        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)

        # 2. A run still going when the drain's time is up.
        proc, port = start(binary, workdir, "300ms")
        script = ('touch %s/started-$AX_ATTEMPT; [ "$AX_ATTEMPT" != 1 ] || sleep 30'
                  % workdir)
        submit_exec(port, "stuck", script)
        wait_for(lambda: os.path.exists(os.path.join(workdir, "started-1")), "the run to start")
        t0 = time.time()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        took = time.time() - t0
        if code != 0 or took > 10:
            failures.append("drain past its timeout: exit %d after %.1f s" % (code, took))
        proc, port = start(binary, workdir, "20s")
        client = Client(port)
        try:
            job = wait_for(lambda: (lambda j: j if j.get("state") != "running" else None)(
                client.call("GET", "/v1/jobs/stuck")[1]), "the run again")
        except RuntimeError as e:
            job = {"error": str(e)}
        if (job.get("state") != "completed" or job.get("attempt") != 2
                or not job.get("recovered")):
            failures.append("a run stopped by the drain, after the next start: %r" % job)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("drain: a run within the timeout recorded once, 503 on new connections; "
              "a run past it stopped and recovered at the next start (attempt 2)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
