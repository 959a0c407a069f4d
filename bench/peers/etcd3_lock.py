#!/usr/bin/python3
"""python-etcd3's Lock (Debian python3-etcd3) under the bench driver's cycle and contend
scenarios, against --etcd members; the contended counter lives on redis-server --port, as
the driver's. One JSON object on stdout."""
import argparse
import json
import resource
import sys
import threading
import time

import etcd3
import redis


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--etcd", required=True, help="h:p,h:p,...")
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
    host, port = a.etcd.split(",")[0].split(":")  # python-etcd3 takes one endpoint
    client = etcd3.client(host=host, port=int(port))

    if a.scenario == "cycle":
        lat = [[] for _ in range(a.threads)]

        def loop(t):
            lock = client.lock(f"{a.key}:{a.id}:{t}", ttl=30)
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
        lock = client.lock(a.key, ttl=30)
        time.sleep(max(0, (a.start_ns - time.monotonic_ns()) / 1e9))  # all processes at once
        events, failures, c0 = [], 0, cpu()
        while remaining() > 0:
            inv = time.monotonic_ns()
            try:
                got_it = lock.acquire(timeout=max(remaining(), 0.001))
            except TypeError as e:  # Debian's tenacity 8 breaks its wait: python-etcd3 #2149
                print(json.dumps({"id": a.id, "error": f"acquire raised TypeError: {e} "
                                  "(kragniz/python-etcd3#2149)", "version": etcd3.__version__}))
                return
            if not got_it:
                failures += 1
                continue
            got = time.monotonic_ns()
            r.set(f"{a.key}:counter", int(r.get(f"{a.key}:counter") or 0) + 1)
            rel = time.monotonic_ns()
            lock.release()
            events.append([inv, got, rel])
        out = {"id": a.id, "failures": failures, "cpu_s": cpu() - c0, "events": events}
    else:
        sys.exit(f"etcd3_lock.py: no scenario {a.scenario}")
    out["version"] = etcd3.__version__
    print(json.dumps(out))


main()
