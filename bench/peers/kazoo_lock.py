#!/usr/bin/python3
"""Kazoo's Lock (Debian python3-kazoo) under the bench driver's cycle and contend scenarios,
against --zk servers; the contended counter lives on redis-server --port, as the driver's.
One JSON object on stdout."""
import argparse
import json
import resource
import threading
import time

import kazoo
import redis
from kazoo.client import KazooClient


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--zk", required=True, help="h:p,h:p,...")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--id", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--until-ns", type=int, default=0)
    ap.add_argument("--start-ns", type=int, default=0)
    ap.add_argument("--key", default="bench")
    a = ap.parse_args()
    until = a.until_ns or time.monotonic_ns() + int(a.seconds * 1e9)
    remaining = lambda: (until - time.monotonic_ns()) / 1e9
    zk = KazooClient(hosts=a.zk, timeout=30)
    zk.start()
    if a.scenario == "cycle":
        lat = [[] for _ in range(a.threads)]

        def loop(t):
            lock = zk.Lock(f"/{a.key}:{a.id}:{t}")
            while time.monotonic_ns() < until:
                t0 = time.monotonic_ns()
                lock.acquire()
                lock.release()
                lat[t].append((time.monotonic_ns() - t0) / 1000)

        start, c0 = time.monotonic_ns(), cpu()
        ts = [threading.Thread(target=loop, args=(t,)) for t in range(a.threads)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        allv = [x for v in lat for x in v]
        el = (time.monotonic_ns() - start) / 1e9
        out = {"cycles": len(allv), "cycles_per_s": len(allv) / el, "p50_us": pct(allv, 0.5),
               "p99_us": pct(allv, 0.99), "cpu_s": cpu() - c0}
    elif a.scenario == "contend":
        r = redis.Redis(port=a.port)
        lock = zk.Lock(f"/{a.key}")
        time.sleep(max(0, (a.start_ns - time.monotonic_ns()) / 1e9))  # all processes at once
        events, failures, c0 = [], 0, cpu()
        while remaining() > 0:
            inv = time.monotonic_ns()
            try:
                lock.acquire(timeout=max(remaining(), 0.001))
            except kazoo.exceptions.LockTimeout:
                failures += 1
                continue
            got = time.monotonic_ns()
            r.set(f"{a.key}:counter", int(r.get(f"{a.key}:counter") or 0) + 1)
            rel = time.monotonic_ns()
            lock.release()
            events.append([inv, got, rel])
        out = {"id": a.id, "failures": failures, "cpu_s": cpu() - c0, "events": events}
    else:
        raise SystemExit(f"kazoo_lock.py: no scenario {a.scenario}")
    zk.stop()
    out["version"] = kazoo.version.__version__ if hasattr(kazoo, "version") else "?"
    print(json.dumps(out))


main()
