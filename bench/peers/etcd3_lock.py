#!/usr/bin/python3
"""python-etcd3's Lock (Debian python3-etcd3) under the bench driver's cycle and contend
scenarios, against --etcd members; the contended counter lives on redis-server --port, as
the driver's. One JSON object on stdout."""
import argparse
import json
import sys
import time

import etcd3
import redis

from peer import contend, cycles


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
    host, port = a.etcd.split(",")[0].split(":")  # python-etcd3 takes one endpoint
    client = etcd3.client(host=host, port=int(port))

    if a.scenario == "cycle":
        out = cycles(lambda t: client.lock(f"{a.key}:{a.id}:{t}", ttl=30), a.threads, until)
    elif a.scenario == "contend":
        lock = client.lock(a.key, ttl=30)
        try:
            out = {"id": a.id, **contend(lambda timeout: lock.acquire(timeout=timeout), lock.release,
                                         (redis.Redis(port=a.port), f"{a.key}:counter"), a.start_ns, until)}
        except TypeError as e:  # Debian's tenacity 8 breaks its wait: python-etcd3 #2149
            print(json.dumps({"id": a.id, "error": f"acquire raised TypeError: {e} "
                              "(kragniz/python-etcd3#2149)", "version": etcd3.__version__}))
            return
    else:
        sys.exit(f"etcd3_lock.py: no scenario {a.scenario}")
    out["version"] = etcd3.__version__
    print(json.dumps(out))


main()
