#!/usr/bin/python3
"""Kazoo's Lock (Debian python3-kazoo) under the bench driver's cycle and contend scenarios,
against --zk servers; the contended counter lives on redis-server --port, as the driver's.
One JSON object on stdout."""
import argparse
import json
import time

import kazoo.exceptions
import kazoo.version
import redis
from kazoo.client import KazooClient

from peer import contend, cycles


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
    zk = KazooClient(hosts=a.zk, timeout=30)
    zk.start()
    if a.scenario == "cycle":
        out = cycles(lambda t: zk.Lock(f"/{a.key}:{a.id}:{t}"), a.threads, until)
    elif a.scenario == "contend":
        lock = zk.Lock(f"/{a.key}")

        def try_acquire(timeout):
            try:
                return lock.acquire(timeout=timeout)
            except kazoo.exceptions.LockTimeout:
                return False

        out = {"id": a.id, **contend(try_acquire, lock.release,
                                     (redis.Redis(port=a.port), f"{a.key}:counter"), a.start_ns, until)}
    else:
        raise SystemExit(f"kazoo_lock.py: no scenario {a.scenario}")
    zk.stop()
    out["version"] = kazoo.version.__version__
    print(json.dumps(out))


main()
