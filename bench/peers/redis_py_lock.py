#!/usr/bin/python3
"""redis-py's Lock (Debian python3-redis) under the bench driver's scenarios and options:
cycle, contend, wait; one JSON object on stdout. --sleep is Lock's polling interval."""
import json
import sys
import threading
import time

import redis

from peer import contend, cpu, cycles, parser, until_of


def main():
    ap = parser()
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--sleep", type=float, default=0.1)
    ap.add_argument("--cluster", type=int, default=0, help="1: --port is a Redis Cluster node")
    a = ap.parse_args()
    until = until_of(a)
    remaining = lambda: (until - time.monotonic_ns()) / 1e9

    if a.scenario == "cycle":
        # One pool shared by the threads: redis-py's way of serving concurrency.
        if a.cluster:
            from redis.cluster import RedisCluster
            r = RedisCluster(host="127.0.0.1", port=a.port)
        else:
            r = redis.Redis(port=a.port, max_connections=a.threads + 1)
        out = cycles(lambda t: r.lock(f"{a.key}:{a.id}:{t}", timeout=30, sleep=a.sleep), a.threads, until)
    elif a.scenario == "contend":
        r = redis.Redis(port=a.port)
        lock = r.lock(a.key, timeout=30, sleep=a.sleep)
        out = {"id": a.id, **contend(lambda timeout: lock.acquire(blocking_timeout=timeout), lock.release,
                                     (r, f"{a.key}:counter"), a.start_ns, until)}
    elif a.scenario == "wait":
        clients = [redis.Redis(port=a.port) for _ in range(a.clients)]
        got = []

        def waiter(r):
            lock = r.lock(a.key, timeout=30, sleep=a.sleep)
            if lock.acquire(blocking_timeout=max(remaining(), 0.001)):
                got.append(1)
                lock.release()

        c0 = cpu()
        ts = [threading.Thread(target=waiter, args=(r,)) for r in clients]
        [t.start() for t in ts]
        [t.join() for t in ts]
        out = {"clients": a.clients, "acquired": len(got), "cpu_s": cpu() - c0}
    else:
        sys.exit(f"redis_py_lock.py: no scenario {a.scenario}")
    out["version"] = redis.__version__
    print(json.dumps(out))


main()
