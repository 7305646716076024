#!/usr/bin/env python3
"""The CLI client verbs (SPEC 5.4) against a real `ax serve`.

Starts the daemon on a free loopback port with a token (exec targets
allowed), then runs `ax add`, `ls`, `get`, `pause`, `resume`, `set` and `rm`
as a user would and checks what each prints and its exit status, the errors
included: 404, 409, 401, a bad filter, an unreachable server.

usage: client_test.py AX_BIN
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from crash_test import wait_port  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def main():
    ax = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        token = os.path.join(d, "token")
        with open(token, "w") as f:
            f.write("s3cret\n")
        port_file = os.path.join(d, "port")
        log = open(os.path.join(d, "serve.log"), "w")
        proc = subprocess.Popen([ax, "serve", "--listen", "127.0.0.1:0", "--port-file", port_file,
                                 "--store", "sqlite:" + os.path.join(d, "ax.db"),
                                 "--token-file", token, "--allow-exec"], stdout=log, stderr=log)
        try:
            server = "http://127.0.0.1:%d" % wait_port(port_file, proc)

            def run(*args, auth=True):
                cmd = [ax] + list(args[:1]) + ["--server", server]
                if auth:
                    cmd += ["--token-file", token]
                r = subprocess.run(cmd + list(args[1:]), capture_output=True, text=True,
                                   timeout=30)
                return r.returncode, r.stdout, r.stderr

            url = "http://127.0.0.1:9/x"
            rc, out, err = run("add", "--id", "once", "--in", "1h", "--url", url)
            check(rc == 0 and out.startswith("once\twaiting\tnext_run="), "add --in: %r %r" % (out, err))
            rc, out, err = run("add", "--id", "tick", "--every", "10s", "--url", url,
                               "--header", "X-A: 1", "--data", "{}")
            check(rc == 0 and out.startswith("tick\twaiting"), "add --every: %r %r" % (out, err))
            rc, out, err = run("add", "--id", "night", "--cron", "0 2 * * *", "--tz",
                               "Europe/Paris", "--url", url)
            check(rc == 0 and out.startswith("night\twaiting"), "add --cron: %r %r" % (out, err))
            rc, out, err = run("add", "--id", "once", "--in", "2h", "--url", url)
            check(rc == 1 and "HTTP 409" in err, "add of a taken id: %d %r" % (rc, err))
            rc, out, err = run("add", "--id", "x", "--url", url)
            check(rc == 2 and "--in, --at, --every, --cron" in err, "add without a schedule: %r" % err)

            rc, out, err = run("get", "once")
            job = json.loads(out) if rc == 0 else {}
            check(job.get("id") == "once" and job.get("schedule") == {"in": "1h"},
                  "get: %r %r" % (out, err))
            rc, out, err = run("get", "nobody")
            check(rc == 1 and "HTTP 404" in err and out == "", "get of no job: %d %r %r" % (rc, out, err))

            rc, out, err = run("ls", "--limit", "1")  # three pages
            lines = out.splitlines()
            check(rc == 0 and lines and lines[0].split()[:3] == ["ID", "STATE", "NEXT_RUN"],
                  "ls header: %r" % out)
            check(sorted(l.split()[0] for l in lines[1:]) == ["night", "once", "tick"],
                  "ls rows over pages of 1: %r" % out)
            rc, out, err = run("ls", "--json")
            check(rc == 0 and sorted(json.loads(l)["id"] for l in out.splitlines())
                  == ["night", "once", "tick"], "ls --json: %r" % out)
            rc, out, err = run("ls", "--state", "weird")
            check(rc == 1 and out == "" and "state" in err, "ls --state weird: %d %r %r" % (rc, out, err))

            rc, out, err = run("pause", "tick")
            check(rc == 0 and out == "tick\tpaused\n", "pause: %r %r" % (out, err))
            rc, out, err = run("ls", "--state", "paused")
            check(rc == 0 and [l.split()[0] for l in out.splitlines()[1:]] == ["tick"],
                  "ls --state paused: %r" % out)
            rc, out, err = run("resume", "tick")
            check(rc == 0 and out == "tick\twaiting\n", "resume: %r %r" % (out, err))

            before = json.loads(run("get", "once")[1])["next_run"]
            rc, out, err = run("set", "once", "--delay", "3h")
            after = json.loads(run("get", "once")[1])["next_run"]
            check(rc == 0 and after > before, "set --delay 3h: %r -> %r, %r" % (before, after, err))
            rc, out, err = run("set", "tick", "--period", "1m")
            check(rc == 0 and json.loads(run("get", "tick")[1])["schedule"]["every"] in ("1m", "PT1M"),
                  "set --period: %r %r %r" % (out, err, run("get", "tick")[1]))
            rc, out, err = run("set", "night", "--cron", "30 3 * * *", "--tz", "UTC")
            check(rc == 0 and json.loads(run("get", "night")[1])["schedule"]["cron"] == "30 3 * * *",
                  "set --cron: %r %r" % (out, err))
            rc, out, err = run("set", "once")
            check(rc == 2 and "--delay, --period, --cron" in err, "set without a change: %r" % err)

            rc, out, err = run("rm", "once")
            check(rc == 0 and out == "once\tcancelled\n", "rm: %r %r" % (out, err))
            rc, out, err = run("rm", "once")
            check(rc == 1 and "HTTP 409" in err, "rm of a cancelled job: %d %r" % (rc, err))

            # A command after `--`: its arguments may start with '-' (as an
            # --exec argument, '-c' was taken for an option of ax add).
            rc, out, err = run("add", "--id", "cmd", "--in", "1h", "--", "/bin/sh", "-c", "echo -n")
            argv = json.loads(run("get", "cmd")[1])["target"]["exec"]["argv"] if rc == 0 else None
            check(argv == ["/bin/sh", "-c", "echo -n"], "add -- COMMAND: %r %r" % (argv, err))

            rc, out, err = run("ls", auth=False)
            check(rc == 1 and "HTTP 401" in err and out == "", "ls without the token: %r %r" % (out, err))
            # A token file that is a directory or empty: refused before any
            # request (a directory was read as an empty token).
            empty = os.path.join(d, "empty-token")
            open(empty, "w").close()
            for bad, says in ((d, "is a directory"), (empty, "is empty")):
                r = subprocess.run([ax, "ls", "--server", server, "--token-file", bad],
                                   capture_output=True, text=True, timeout=30)
                check(r.returncode == 2 and says in r.stderr,
                      "token file %s: %d %r" % (bad, r.returncode, r.stderr))
            # The client reads a token file as the daemon does: the whole text
            # without the space around it (it took the first line, here empty).
            spaced = os.path.join(d, "spaced-token")
            with open(spaced, "w") as f:
                f.write("\n  " + open(token).read().strip() + "  \n\n")
            r = subprocess.run([ax, "ls", "--server", server, "--token-file", spaced],
                               capture_output=True, text=True, timeout=30)
            check(r.returncode == 0, "token file with blank lines: %d %r" % (r.returncode, r.stderr))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        r = subprocess.run([ax, "ls", "--server", "http://127.0.0.1:1"], capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 1 and "cannot reach http://127.0.0.1:1" in r.stderr,
              "ls of a server that is not there: %r" % r.stderr)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("client verbs: add, get, ls (pages, --json, --state), pause, resume, set, rm "
              "and their errors as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
