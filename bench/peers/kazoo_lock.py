#!/usr/bin/python3
"""Kazoo's Lock (Debian python3-kazoo) under the bench driver's cycle and contend scenarios,
against --zk servers; the contended counter lives on redis-server --port, as the driver's.
One JSON object on stdout."""
import json

import kazoo.exceptions
import kazoo.version
import redis
from kazoo.client import KazooClient

from peer import contend, cycles, parser, until_of


def main():
    ap = parser()
    ap.add_argument("--zk", required=True, help="h:p,h:p,...")
    a = ap.parse_args()
    until = until_of(a)
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
