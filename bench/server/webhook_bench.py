#!/usr/bin/env python3
"""Webhook deliveries per second: N one-shot http jobs due at the same instant
are delivered by `ax serve` to a local receiver; the rate is N over the time
from the first to the last delivery (receiver clock).

usage: webhook_bench.py SERVE_BIN RECEIVER_BIN [--n N] [--workers W]
"""
import argparse, http.client, json, os, signal, subprocess, sys, tempfile, time


def wait_port(path, proc):
    for _ in range(3000):
        if os.path.exists(path):
            s = open(path).read().strip()
            if s:
                return int(s)
        if proc.poll() is not None:
            raise RuntimeError("exited")
        time.sleep(0.01)
    raise RuntimeError("no port")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("serve"); ap.add_argument("receiver")
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--sync", default="normal")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ax-webhook-")
    out = os.path.join(work, "recv.tsv")
    rec = subprocess.Popen([a.receiver, "--port-file", work + "/r.port", "--out", out, "--threads", "2"])
    rport = wait_port(work + "/r.port", rec)
    srv = subprocess.Popen([a.serve, "serve", "--store", "sqlite:" + work + "/ax.db", "--listen",
                            "127.0.0.1:0", "--port-file", work + "/s.port", "--workers", str(a.workers),
                            "--sync", a.sync, "--log-level", "warn"])
    sport = wait_port(work + "/s.port", srv)
    c = http.client.HTTPConnection("127.0.0.1", sport)
    due = time.time() + 5 + a.n / 5000.0  # submission is done before the first is due
    at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(due)) + ".%03dZ" % int((due % 1) * 1000)
    url = "http://127.0.0.1:%d/hook" % rport
    t0 = time.time()
    for i in range(0, a.n, 5000):
        jobs = [{"id": "w%d" % k, "schedule": {"at": at}, "target": {"http": {"url": url}}}
                for k in range(i, min(a.n, i + 5000))]
        c.request("POST", "/v1/jobs", json.dumps({"jobs": jobs}))
        r = c.getresponse(); r.read()
        assert r.status in (200, 201), r.status
    submit_s = time.time() - t0
    while True:
        time.sleep(0.5)
        n = sum(1 for _ in open(out)) if os.path.exists(out) else 0
        if n >= a.n or time.time() > due + 120:
            break
    srv.send_signal(signal.SIGTERM); srv.wait()
    rec.send_signal(signal.SIGTERM); rec.wait()
    ts = [int(l.split("\t")[3]) for l in open(out)]
    span = (max(ts) - min(ts)) / 1e9
    print(json.dumps({"bench": "webhook", "n": a.n, "delivered": len(ts), "workers": a.workers,
                      "sync": a.sync, "submit_seconds": round(submit_s, 2),
                      "delivery_seconds": round(span, 3),
                      "deliveries_per_s": round(len(ts) / span) if span > 0 else None}))


if __name__ == "__main__":
    sys.exit(main())
